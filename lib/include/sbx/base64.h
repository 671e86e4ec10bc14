/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Standard base64 (RFC 4648 section 4: "+/" alphabet, "=" padding, no line
 * breaks): screenshots and binary resources cross JSON as text.
 */

#include <stddef.h>
#include <sys/types.h>

#include "sbx/buf.h"

/* The encoded length of len bytes (without a NUL), or 0 when it would not fit a size_t. */
size_t sbx_base64_encoded_len(size_t len);

/*
 * Encodes len bytes of data into a fresh NUL-terminated string (free()).
 * Returns NULL on out-of-memory or when the output would not fit a size_t.
 */
char *sbx_base64_encode(const void *data, size_t len);

/* Appends the encoding of len bytes to out. 0, or sbx_buf_append's -ENOBUFS/-ENOMEM. */
int sbx_base64_encode_buf(sbx_buf *out, const void *data, size_t len);

/*
 * Decodes the NUL-terminated s in place (the bytes never outrun the text)
 * and returns their count. Whitespace (space, tab, CR, LF) is skipped, as
 * MIME-wrapped input has it; padding is optional but, where present, only at
 * the end. Returns -EINVAL for any other character, data after padding or a
 * dangling single character; s is then garbage.
 */
ssize_t sbx_base64_decode(char *s);
