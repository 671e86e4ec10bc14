/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "sbx/view.h"

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int sbx_html_escape_n(sbx_buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;
	int r;

	/* Copies runs of harmless bytes at once; pages are mostly those. */
	while (i < len) {
		unsigned char c = p[i];
		const char *rep = NULL;
		size_t n = 1;

		switch (c) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&#39;";
			break;
		default:
			if (c < 0x20 && c != '\t' && c != '\n')
				rep = "\xef\xbf\xbd";
			else if (c == 0x7f)
				rep = "\xef\xbf\xbd";
			else if (c >= 0x80) {
				n = utf8_len(p + i, len - i);
				if (!n) {
					rep = "\xef\xbf\xbd";
					n = 1;
				}
			}
		}
		if (!rep) {
			i += n;
			run += n;
			continue;
		}
		if (run && (r = sbx_buf_append(out, p + i - run, run)) < 0)
			return r;
		run = 0;
		if ((r = sbx_buf_puts(out, rep)) < 0)
			return r;
		i += n;
	}
	return run ? sbx_buf_append(out, p + i - run, run) : 0;
}

int sbx_html_escape(sbx_buf *out, const char *s)
{
	return sbx_html_escape_n(out, s ? s : "", s ? strlen(s) : 0);
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
