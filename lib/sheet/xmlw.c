/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "xmlw.h"

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return left >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if (left < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if (p[0] == 0xe0 && p[1] < 0xa0)
			return 0; /* overlong */
		if (p[0] == 0xed && p[1] >= 0xa0)
			return 0; /* surrogates */
		if (p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
			return 0; /* U+FFFE, U+FFFF are not XML characters */
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if (left < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
		    (p[3] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

int sbx_sheet__xml_escape(sbx_buf *b, const char *s, size_t len, int attr)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;
	int r = 0;

	while (i < len && r == 0) {
		unsigned char c = p[i];
		const char *rep = NULL;
		size_t n = 1;

		if (c == '&')
			rep = "&amp;";
		else if (c == '<')
			rep = "&lt;";
		else if (c == '>')
			rep = "&gt;";
		else if (c == '"' && attr)
			rep = "&quot;";
		else if (c == '\t' || c == '\n' || c == '\r')
			rep = attr ? (c == '\t' ? "&#9;" : c == '\n' ? "&#10;" : "&#13;") : NULL;
		else if (c < 0x20)
			rep = "";
		else if (c >= 0x80) {
			n = utf8_seq(p + i, len - i);
			if (n == 0) {
				rep = "\xef\xbf\xbd";
				n = 1;
			}
		}
		if (!rep) {
			i += n;
			run += n;
			continue;
		}
		if (run)
			r = sbx_buf_append(b, p + i - run, run);
		run = 0;
		if (r == 0)
			r = sbx_buf_puts(b, rep);
		i += n;
	}
	if (r == 0 && run)
		r = sbx_buf_append(b, p + i - run, run);
	return r;
}
