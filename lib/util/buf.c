/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/buf.h"

void sbx_buf_init(sbx_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

void sbx_buf_free(sbx_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void sbx_buf_reset(sbx_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int grow(sbx_buf *b, size_t need)
{
	size_t cap;
	char *p;

	if (need > b->max || need + 1 < need) {
		sbx_buf_free(b);
		return -ENOBUFS;
	}
	if (need + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need + 1)
		cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
	if (b->max < SIZE_MAX && cap > b->max + 1) /* max SIZE_MAX: no cap (max + 1 wraps to 0) */
		cap = b->max + 1;
	p = realloc(b->data, cap);
	if (!p) {
		sbx_buf_free(b);
		return -ENOMEM;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

int sbx_buf_append(sbx_buf *b, const void *p, size_t n)
{
	int r;

	if (n > SIZE_MAX - b->len) {
		sbx_buf_free(b);
		return -ENOBUFS;
	}
	r = grow(b, b->len + n);
	if (r < 0)
		return r;
	if (!b->data) /* grow set it; gcc 12's analyser loses r across grow's free */
		return -ENOMEM;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int sbx_buf_puts(sbx_buf *b, const char *s)
{
	return sbx_buf_append(b, s, strlen(s));
}

const char *sbx_markup_entity(unsigned char c)
{
	return c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : NULL;
}

int sbx_buf_escape(sbx_buf *b, const char *s, size_t len, sbx_buf_escape_fn *rep, int flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;
	int r;

	/* Copies runs of kept bytes at once; most text is those. */
	while (i < len) {
		size_t n = 1;
		const char *put = rep(p + i, len - i, &n, flags);

		if (!put) {
			i += n;
			run += n;
			continue;
		}
		if (run && (r = sbx_buf_append(b, p + i - run, run)) < 0)
			return r;
		run = 0;
		if ((r = sbx_buf_puts(b, put)) < 0)
			return r;
		i += n;
	}
	return run ? sbx_buf_append(b, p + i - run, run) : 0;
}

int sbx_buf_putc(sbx_buf *b, char c)
{
	/* The hot path of every writer: room for the byte and the NUL. */
	if (b->len + 2 <= b->cap && b->len < b->max) {
		b->data[b->len++] = c;
		b->data[b->len] = '\0';
		return 0;
	}
	return sbx_buf_append(b, &c, 1);
}

int sbx_buf_vprintf(sbx_buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n, r;

	/* Print into the room there is; only a text that does not fit is printed twice. */
	va_copy(aq, ap);
	if (b->cap > b->len) {
		n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, aq);
		if (n >= 0 && (size_t)n < b->cap - b->len && b->len + (size_t)n <= b->max) {
			va_end(aq);
			b->len += (size_t)n;
			return 0;
		}
		b->data[b->len] = '\0';
	} else {
		n = vsnprintf(NULL, 0, fmt, aq);
	}
	va_end(aq);
	if (n < 0) {
		sbx_buf_free(b);
		return -EINVAL;
	}
	r = grow(b, b->len + (size_t)n);
	if (r < 0)
		return r;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int sbx_buf_printf(sbx_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = sbx_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

char *sbx_buf_steal(sbx_buf *b, size_t *len_out)
{
	char *p = b->data;

	if (!p)
		p = calloc(1, 1);
	if (len_out)
		*len_out = b->data ? b->len : 0;
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}

const char *sbx_buf_str(const sbx_buf *b)
{
	return b->data ? b->data : "";
}

int sbx_url_escape(sbx_buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int r = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p && r >= 0; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/-._~", *p))
			r = sbx_buf_putc(out, (char)*p);
		else
			r = sbx_buf_printf(out, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
	return r;
}
