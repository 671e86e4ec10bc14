/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "sbx/utf8.h"
#include "sbx/view.h"

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
				n = sbx_utf8_seq(p + i, len - i);
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
