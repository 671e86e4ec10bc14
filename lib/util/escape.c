/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sbx/log.h"

/* The length of the valid UTF-8 sequence at s (1-4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t sbx_escape_controls(char *dst, size_t size, const char *src, bool keep_lines)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;

	if (!size)
		return 0;
	while (*s) {
		size_t n = utf8_len(s);
		char esc[8];
		const char *put = esc;
		size_t pl;

		if (n == 1 && (*s >= 0x20 || (keep_lines && (*s == '\n' || *s == '\t'))) &&
		    *s != 0x7f) {
			put = (const char *)s, pl = 1;
		} else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
			/* U+0080-U+009F: C1 controls (CSI is U+009B). */
			pl = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", s[1]);
		} else if (n > 1) {
			put = (const char *)s, pl = n;
		} else {
			pl = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", *s);
			n = 1;
		}
		if (o + pl >= size)
			break;
		memcpy(dst + o, put, pl);
		o += pl;
		s += n;
	}
	dst[o] = '\0';
	return o;
}

void sbx_fputs_escaped(const char *s, FILE *f)
{
	char buf[4096];

	/* In pieces: a multi-byte character is never split (4 bytes become at most 6). */
	while (s && *s) {
		size_t take = strnlen(s, 512), o;
		char piece[520];

		while (s[take] && take > 0 && ((unsigned char)s[take] & 0xc0) == 0x80)
			take--;
		if (!take)
			take = 1;
		memcpy(piece, s, take);
		piece[take] = '\0';
		o = sbx_escape_controls(buf, sizeof(buf), piece, true);
		fwrite(buf, 1, o, f);
		s += take;
	}
}
