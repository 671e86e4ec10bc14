/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Confined file access: every path from outside (an agent's argument, a tar
 * entry, a task file) is resolved beneath a directory by the kernel
 * (openat2 with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), not by string checks
 * alone, so `..`, absolute paths and symlinks pointing out are refused.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "sbx/error.h"

/*
 * Checks a relative path lexically: not empty, not absolute, no `..`
 * component, no NUL, at most 4096 bytes. A first line of defence and a clear
 * message; the kernel check in sbx_path_open_beneath is what enforces.
 */
int sbx_path_check_relative(const char *path, sbx_error *err);

/* Lexically, path is top or inside it: "/run" holds "/run" and "/run/x", not
 * "/running"; "/" holds every absolute path. No normalisation. */
bool sbx_path_within(const char *path, const char *top);

/*
 * Opens path beneath dirfd. flags as for openat (O_CLOEXEC is added); with
 * O_CREAT, mode applies. When no_symlinks is true, any symlink on the way is
 * refused too (RESOLVE_NO_SYMLINKS). Returns the fd or a negative errno:
 * -EXDEV when the path escapes, -ELOOP for a refused symlink.
 */
int sbx_path_open_beneath(int dirfd, const char *path, int flags, mode_t mode, bool no_symlinks,
			  sbx_error *err);

/*
 * Creates every missing directory of the relative path beneath dirfd (like
 * mkdir -p), refusing escapes and symlinks. Returns an O_PATH|O_DIRECTORY fd
 * of the last directory, or a negative errno.
 */
int sbx_path_mkdirs_beneath(int dirfd, const char *path, mode_t mode, sbx_error *err);

/*
 * Reads the regular file dir/rel (at most max bytes) into *out (malloc'd,
 * NUL-terminated), *len its length; no symlink is followed, nothing outside
 * dir is read.
 */
int sbx_path_read_beneath(const char *dir, const char *rel, size_t max, char **out, size_t *len,
			  sbx_error *err);

/*
 * Writes data to dir/rel, creating the missing directories of rel beneath
 * dir and replacing the file; no symlink is followed on the way, so nothing
 * lands outside dir. For files whose names come from outside (a container's
 * outputs, a task's files).
 */
int sbx_path_write_beneath(const char *dir, const char *rel, const void *data, size_t len,
			   sbx_error *err);

/*
 * Removes name under the directory at (AT_FDCWD: the working directory) and
 * everything beneath it as far as it can, like rm -rf: symlinks are removed,
 * never followed; what cannot go is left. 0 (also when name does not exist)
 * or the first -errno. For directories the caller made (mkdtemp scratch
 * space, test trees).
 */
int sbx_path_remove_tree_at(int at, const char *name);

/* Writes data to path atomically: a temp file in the same directory, fsync, rename. */
int sbx_path_write_atomic(const char *path, const void *data, size_t len, sbx_error *err);
