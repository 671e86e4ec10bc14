/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A growable byte buffer with a hard maximum size (after curl's dynbuf).
 * Data from outside goes through it, so no input can grow memory without
 * bound. On any failure (over the maximum, out of memory) the buffer frees
 * its contents and returns a negative errno: a half-built value never leaks
 * out. The data is always NUL-terminated (the NUL is not counted in len).
 */

#include <stdarg.h>
#include <stddef.h>

typedef struct sbx_buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max; /* hard limit on len */
} sbx_buf;

#define SBX_BUF_INIT(maxlen)                                                                       \
	{                                                                                          \
		NULL, 0, 0, (maxlen)                                                               \
	}

void sbx_buf_init(sbx_buf *b, size_t max);

/* Appends n bytes. -ENOBUFS past max (buffer freed), -ENOMEM on allocation failure. */
int sbx_buf_append(sbx_buf *b, const void *p, size_t n);
int sbx_buf_puts(sbx_buf *b, const char *s);

/*
 * What an escaper writes for the bytes at p (left of them): a replacement for
 * *n of them (1 unless it sets more), or NULL to keep those *n bytes as they are.
 */
typedef const char *sbx_buf_escape_fn(const unsigned char *p, size_t left, size_t *n, int flags);
/* "&amp;", "&lt;", "&gt;" for & < >, else NULL: what XML and HTML both escape. */
const char *sbx_markup_entity(unsigned char c);
/* Appends s (len bytes) rewritten by rep (flags passed on); kept bytes go in runs. */
int sbx_buf_escape(sbx_buf *b, const char *s, size_t len, sbx_buf_escape_fn *rep, int flags);
int sbx_buf_putc(sbx_buf *b, char c);
/*
 * Appends s percent-encoded for a URL path or query value ('/' and
 * RFC 3986's unreserved characters kept, every other byte %XX).
 */
int sbx_url_escape(sbx_buf *out, const char *s);
int sbx_buf_printf(sbx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sbx_buf_vprintf(sbx_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Empties the buffer but keeps its memory. */
void sbx_buf_reset(sbx_buf *b);

/* Frees the memory; the buffer may be used again. Accepts NULL. */
void sbx_buf_free(sbx_buf *b);

/*
 * Hands the data to the caller (free() it) and leaves the buffer empty.
 * Returns an empty malloc'd string when nothing was appended; NULL only on OOM.
 */
char *sbx_buf_steal(sbx_buf *b, size_t *len_out);

/* The contents as a C string ("" when empty). */
const char *sbx_buf_str(const sbx_buf *b);
