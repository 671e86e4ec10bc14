/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_capture.h"

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

static size_t utf8_len(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t need;
	unsigned cp;

	if (c == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		need = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 4, cp = c & 0x07;
	else
		return 0;
	if (left < need)
		return 0;
	for (size_t i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((need == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (need == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return need;
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
	free(c->head);
	free(c->tail);
	free(c->text);
	memset(c, 0, sizeof(*c));
}
