/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Typed access to YAML nodes for the task schema: each getter checks the
 * node's type and range and, on failure, writes "name:line:col: key must be
 * ..." so every error points at the offending value.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sbx/error.h"
#include "sbx/task.h"
#include "ytree.h"

typedef struct sbx_schema {
	const char *name; /* file name for messages */
	sbx_error *err;
} sbx_schema;

/* Sets err to "name:line:col: msg" for node and returns -EINVAL. */
int sbx_schema__fail(const sbx_schema *s, const sbx_ynode *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Each fails unless node is a mapping; then fails on any key not in allowed (NULL-terminated). */
int sbx_schema__map(const sbx_schema *s, const sbx_ynode *node, const char *key,
		    const char *const *allowed);

/* A non-empty string scalar (max_len bytes at most), strdup'd into *out (freeing the old one). */
int sbx_schema__string(const sbx_schema *s, const sbx_ynode *node, const char *key, size_t max_len,
		       char **out);

/* A plain scalar number in [min, max]. */
int sbx_schema__number(const sbx_schema *s, const sbx_ynode *node, const char *key, double min,
		       double max, double *out);

/* A plain scalar integer in [min, max]. */
int sbx_schema__int(const sbx_schema *s, const sbx_ynode *node, const char *key, int64_t min,
		    int64_t max, int64_t *out);

/* true/false (also yes/no, on/off, any case). */
int sbx_schema__bool(const sbx_schema *s, const sbx_ynode *node, const char *key, bool *out);

/* One of choices (NULL-terminated); *out is its index. */
int sbx_schema__enum(const sbx_schema *s, const sbx_ynode *node, const char *key,
		     const char *const *choices, int *out);

/*
 * Why path (len bytes, NULs included) is not a plain relative file path: a
 * NUL or control character, a trailing '/', an empty or '.' component. NULL
 * when it is one. Absolute paths and '..' are sbx_path_check_relative's.
 */
const char *sbx_task__file_path_problem(const char *path, size_t len);

/*
 * A string or a sequence of strings, each a plain relative file path (as
 * above: "." or "out/" would fail only at copy-in); *out NULL-terminated.
 */
int sbx_schema__paths(const sbx_schema *s, const sbx_ynode *node, const char *key, size_t max,
		      char ***out, size_t *n_out);

/* Checks a relative path (no '..', not absolute) and reports it at node. */
int sbx_schema__relpath(const sbx_schema *s, const sbx_ynode *node, const char *key,
			const char *path);

/* Parses the grading mapping at node into spec (key is "grading" or "" at top level). */
int sbx_grading__parse_node(const sbx_schema *s, const sbx_ynode *node, const char *key,
			    sbx_grading_spec *spec);

/* Reads a whole file (at most SBX_YTREE_MAX_INPUT bytes) into a malloc'd, NUL-terminated buffer. */
int sbx_task__read_file(const char *path, char **out, size_t *len_out, sbx_error *err);

/* Parses task.yaml's generator: "builtin" (must exist for the id) or a program in dir. */
int sbx_task__parse_generator(const sbx_schema *s, const sbx_ynode *node, const char *dir,
			      sbx_task *t);

/* harbor.c: frees a task's Harbor part. Accepts NULL. */
void sbx_task__harbor_free(sbx_task_harbor *h);
