/* SPDX-License-Identifier: MIT */
#pragma once

/* runs/<run-id>/: creation and file copies into it. Internal to lib/run. */

#include <stddef.h>

#include "sbx/error.h"

/* Creates runs_dir (if missing) and runs_dir/run_id (must not exist) with
 * task/, inputs/, outputs/. *out is the run directory (malloc'd). */
int sbx_rundir__create(const char *runs_dir, const char *run_id, char **out, sbx_error *err);

/* Copies the regular file src_dir/rel (confined beneath src_dir, no symlinks)
 * to dst_dir/dst_rel, creating directories. At most 1 GiB. */
int sbx_rundir__copy(const char *src_dir, const char *rel, const char *dst_dir, const char *dst_rel,
		     sbx_error *err);

/* sbx_path_read_beneath (kept for the run module and its tests). */
int sbx_rundir__read(const char *dir, const char *rel, size_t max, char **out, size_t *len,
		     sbx_error *err);

/* Writes dir/name atomically. */
int sbx_rundir__write(const char *dir, const char *name, const void *data, size_t len,
		      sbx_error *err);
