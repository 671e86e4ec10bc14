/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Workspace paths for tools. Every path argument is resolved by the kernel
 * beneath the workspace (sbx/path.h, openat2 RESOLVE_BENEATH), so `..`,
 * absolute paths outside it and symlinks pointing out are refused. An
 * absolute path inside the workspace ("/workspace/x.ods") is accepted and
 * made relative first, since agents written for the reference system send them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "server.h"

/*
 * Turns a path argument into a workspace-relative path (a pointer into arg or
 * into the same string), or fills out with an argument error and returns NULL.
 */
const char *workspace_relative(const tool_context *ctx, const char *arg, tool_result *out);

/*
 * Opens an existing regular file for reading (O_RDONLY). On failure fills out
 * ("File not found: x.ods", outside the workspace, not a regular file) and
 * returns a negative errno. On success st is filled when not NULL.
 */
int workspace_open_regular(const tool_context *ctx, const char *arg, struct stat *st,
			   tool_result *out);

/*
 * Calls fn for every regular file beneath the workspace (symlinks are not
 * followed, hidden temp files of our atomic writes and the task's completion
 * marker are skipped), depth-first,
 * at most max files. fn returns 0 to go on, non-zero to stop.
 */
int workspace_walk(int workspace_fd, int (*fn)(const char *rel, const struct stat *st, void *),
		   void *payload, size_t max);

/*
 * Writes data to rel beneath the workspace (its directory must exist): a
 * hidden temp file beside it, fsync, renameat over it, so a reader never sees
 * half a file. Mode 0666 less the umask (in a sandbox the agent's uid may
 * write it too); st (or NULL) gets the new file's stat.
 */
int workspace_write_atomic(int workspace_fd, const char *rel, const void *data, size_t len,
			   struct stat *st, sbx_error *err);

/* Guesses a MIME type from the file name. */
const char *workspace_mime_type(const char *name);
