/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by sweep and serve: --engine URL[#jobs=N], and checking the engines before work. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_MAX_ENGINES 64

typedef struct cli_engine_arg {
	char *url;     /* NULL: the default engine; malloc'd */
	unsigned jobs; /* 0: not given */
} cli_engine_arg;

/*
 * "URL", or "URL#jobs=N" when jobs, into *out (out->url to free). Prints
 * "<cmd>: --engine ..." and returns -1 on a bad one.
 */
int cli_parse_engine(const char *cmd, const char *arg, bool jobs, cli_engine_arg *out);

/*
 * --allow-no-seccomp: cli_check_engines accepts a runsc registered without
 * --oci-seccomp (which ignores the sandbox's seccomp profile) instead of
 * refusing it.
 */
extern bool cli_allow_no_seccomp;

/* The row that sets it, for a command's option table. */
#define CLI_ENGINE_OPT_ALLOW_NO_SECCOMP(...)                                                       \
	{                                                                                          \
		"allow-no-seccomp", .flag = &cli_allow_no_seccomp, __VA_ARGS__                     \
	}

/*
 * Each engine must answer, hold every image (images: NULL-terminated) and,
 * when runtime is not NULL or "", have that OCI runtime registered (gVisor
 * with --oci-seccomp, unless cli_allow_no_seccomp) before
 * the first episode: a missing image or runtime is one clear error now, not
 * N infra errors later (and a runtime is never swapped for the default). On
 * failure prints one line, "<cmd>: engine '...': ..." or "<cmd>: --runtime
 * '...': ...", and returns -1. Fills *image_id (malloc'd, may stay NULL) with the first
 * image's id on the first engine and *ncpu, *mem with the first engine's size;
 * each of them may be NULL.
 */
int cli_check_engines(const char *cmd, const cli_engine_arg *engines, size_t n, char *const *images,
		      const char *runtime, char **image_id, int *ncpu, int64_t *mem);
