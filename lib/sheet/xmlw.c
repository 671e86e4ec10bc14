/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "sbx/utf8.h"
#include "xmlw.h"

/* A valid UTF-8 sequence that is also an XML character (not U+FFFE, U+FFFF). */
static size_t xml_char_seq(const unsigned char *p, size_t left)
{
	size_t n = sbx_utf8_seq(p, left);

	if (n == 3 && p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
		return 0;
	return n;
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
			n = xml_char_seq(p + i, len - i);
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
