/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sbx/log.h"
#include "sbx/utf8.h"

/*
 * The bidirectional controls (U+061C, U+200E-U+200F, U+202A-U+202E,
 * U+2066-U+2069): a line can show its text in another order than it has.
 */
static bool is_bidi(const unsigned char *s, size_t n)
{
	return (n == 2 && s[0] == 0xd8 && s[1] == 0x9c) ||
	       (n == 3 && s[0] == 0xe2 && s[1] == 0x80 &&
		(s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae))) ||
	       (n == 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9);
}

size_t sbx_escape_controls(char *dst, size_t size, const char *src, bool keep_lines)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;

	if (!size)
		return 0;
	while (*s) {
		size_t n = sbx_utf8_seq(s, SIZE_MAX);
		char esc[8];
		const char *put = esc;
		size_t pl;

		if (n == 1 && (*s >= 0x20 || (keep_lines && (*s == '\n' || *s == '\t'))) &&
		    *s != 0x7f) {
			put = (const char *)s, pl = 1;
		} else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
			/* U+0080-U+009F: C1 controls (CSI is U+009B). */
			pl = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", s[1]);
		} else if (is_bidi(s, n)) {
			unsigned cp = n == 2 ? (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu)
					     : (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 |
						       (s[2] & 0x3fu);

			pl = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", cp);
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

static void fputs_escaped(const char *s, FILE *f, bool keep_lines)
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
		o = sbx_escape_controls(buf, sizeof(buf), piece, keep_lines);
		fwrite(buf, 1, o, f);
		s += take;
	}
}

void sbx_fputs_escaped(const char *s, FILE *f)
{
	fputs_escaped(s, f, true);
}

void sbx_fputs_escaped_line(const char *s, FILE *f)
{
	fputs_escaped(s, f, false);
}
