/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_capture.h"
#include "sbx/cleanup.h"
#include "sbx/utf8.h"

void capture_init(capture *c)
{
	memset(c, 0, sizeof(*c));
}

void capture_add(capture *c, const char *p, size_t n)
{
	c->total += n;
	if (c->head_len < CAPTURE_HEAD) {
		size_t take = CAPTURE_HEAD - c->head_len < n ? CAPTURE_HEAD - c->head_len : n;
		if (!c->head && !(c->head = malloc(CAPTURE_HEAD)))
			return;
		memcpy(c->head + c->head_len, p, take);
		c->head_len += take;
		p += take;
		n -= take;
	}
	if (n == 0)
		return;
	if (!c->tail && !(c->tail = malloc(CAPTURE_TAIL)))
		return;
	if (n > CAPTURE_TAIL) {
		p += n - CAPTURE_TAIL;
		n = CAPTURE_TAIL;
	}
	for (size_t i = 0; i < n; i++) {
		c->tail[c->tail_pos] = p[i];
		c->tail_pos = (c->tail_pos + 1) % CAPTURE_TAIL;
	}
	c->tail_len = c->tail_len + n > CAPTURE_TAIL ? CAPTURE_TAIL : c->tail_len + n;
}

/* A valid UTF-8 sequence, NUL excluded (it would end the captured text). */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	return left && s[0] == 0 ? 0 : sbx_utf8_seq(s, left);
}

char *utf8_sanitize(const char *s, size_t len)
{
	char *out = malloc(len * 3 + 1), *o = out;
	const unsigned char *p = (const unsigned char *)s;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_len(p + i, len - i);
		if (n == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(o, p + i, n);
			o += n;
			i += n;
		}
	}
	*o = '\0';
	return out;
}

void capture_finish(capture *c)
{
	size_t tail_start = (c->tail_pos + CAPTURE_TAIL - c->tail_len) % CAPTURE_TAIL;
	size_t len = c->head_len + c->tail_len + 128;
	char *raw = malloc(len), *o = raw;

	free(c->text);
	c->text = NULL;
	if (!raw)
		return;
	if (c->head_len)
		memcpy(o, c->head, c->head_len);
	o += c->head_len;
	c->truncated = c->total > (unsigned long long)(c->head_len + c->tail_len);
	if (c->truncated)
		o += sprintf(o, "\n... [%llu bytes truncated] ...\n",
			     c->total - c->head_len - c->tail_len);
	for (size_t i = 0; i < c->tail_len; i++)
		*o++ = c->tail[(tail_start + i) % CAPTURE_TAIL];
	c->text = utf8_sanitize(raw, (size_t)(o - raw));
	free(raw);
}

const char *capture_text(const capture *c)
{
	return c->text ? c->text : "";
}

void capture_free(capture *c)
{
	sbx_free_all(c->head, c->tail, c->text);
	memset(c, 0, sizeof(*c));
}
