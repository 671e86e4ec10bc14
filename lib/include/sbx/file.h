/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Reading a whole file into memory, with a cap, writing a whole buffer, and
 * waiting for an fd with a deadline.
 * Every module that loads a task, a workbook or a resource does this; the
 * loops (short reads and writes, EINTR, a file that shrinks meanwhile, a NUL
 * after the data) live here once.
 */

#include <stddef.h>
#include <sys/types.h>

#include "sbx/error.h"

/* read(2), again when a signal interrupts it: the bytes read (0 at end of file) or -errno. */
ssize_t sbx_read_retry(int fd, void *p, size_t n);

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

/*
 * Writes all n bytes to fd, retrying short writes and EINTR. Returns 0, the
 * negative errno of the failed write, or -EIO when write() wrote nothing.
 * Only write() is called, so it is async-signal-safe (between fork and exec
 * too); errno may change.
 */
int sbx_write_all(int fd, const void *p, size_t n);

/* sbx_write_all with pwrite() from offset off: the file offset does not move. */
int sbx_pwrite_all(int fd, const void *p, size_t n, off_t off);

/*
 * Waits until fd is ready for events (poll(2)), retrying on EINTR: 0 when
 * ready, -ETIMEDOUT once deadline (an sbx_now_ms() time) has passed, or the
 * negative errno of poll. A negative deadline waits for ever; one already
 * past still looks once without waiting.
 */
int sbx_fd_wait(int fd, short events, long deadline);
