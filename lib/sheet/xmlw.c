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

/* & < > (and " in attributes) as entities; other C0 controls dropped, bad UTF-8 as U+FFFD. */
static const char *xml_rep(const unsigned char *p, size_t left, size_t *n, int attr)
{
	const char *entity = sbx_markup_entity(*p);

	if (entity)
		return entity;
	switch (*p) {
	case '"':
		return attr ? "&quot;" : NULL;
	case '\t':
		return attr ? "&#9;" : NULL;
	case '\n':
		return attr ? "&#10;" : NULL;
	case '\r':
		return attr ? "&#13;" : NULL;
	}
	if (*p < 0x20)
		return "";
	if (*p >= 0x80) {
		*n = xml_char_seq(p, left);
		if (!*n) {
			*n = 1;
			return "\xef\xbf\xbd";
		}
	}
	return NULL;
}

int sbx_sheet__xml_escape(sbx_buf *b, const char *s, size_t len, int attr)
{
	return sbx_buf_escape(b, s, len, xml_rep, attr);
}

int sbx_sheet__xml_attr(sbx_buf *b, const char *name, const char *value)
{
	int r = sbx_buf_printf(b, " %s=\"", name);

	if (r == 0)
		r = sbx_sheet__xml_escape(b, value, strlen(value), 1);
	return r ? r : sbx_buf_putc(b, '"');
}

int sbx_sheet__xml_element(sbx_buf *b, const char *tag, const char *attrs, const char *text)
{
	int r = sbx_buf_printf(b, "<%s%s>", tag, attrs);

	if (r == 0)
		r = sbx_sheet__xml_escape(b, text, strlen(text), 0);
	return r ? r : sbx_buf_printf(b, "</%s>", tag);
}
