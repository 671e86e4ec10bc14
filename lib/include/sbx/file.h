/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Reading a whole file into memory, with a cap. Every module that loads a
 * task, a workbook or a resource does this; the loop (short reads, EINTR, a
 * file that shrinks meanwhile, a NUL after the data) lives here once.
 */

#include <stddef.h>

#include "sbx/error.h"

/*
 * Reads up to size bytes from fd into a fresh buffer of size + 1 bytes,
 * retrying on EINTR and stopping early at end of file, and NUL-terminates
 * what it read. *out (free()) and *len_out (bytes read, at most size) are
 * written only on success. The caller has checked size against its cap.
 * Returns 0, -ENOMEM, or the negative errno of a failed read.
 */
int sbx_file_read_fd(int fd, size_t size, char **out, size_t *len_out);

/*
 * Opens path (relative to dirfd, or AT_FDCWD) and reads it whole with
 * sbx_file_read_fd. Refuses what is not a regular file (-EINVAL) and a file
 * larger than max bytes (-EFBIG). err gets "'<path>': cannot open: ...",
 * "'<path>': not a regular file", "'<path>': larger than <max> bytes
 * (limit)" or "'<path>': read failed: ...". *out: free().
 */
int sbx_file_read_capped(int dirfd, const char *path, size_t max, char **out, size_t *len_out,
			 sbx_error *err);
