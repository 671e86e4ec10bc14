/* SPDX-License-Identifier: MIT */
/*
 * Writing YAML scalars for text from outside (the reference's task.json):
 * UTF-8 checked first, anything YAML may not carry as it is escaped, so the
 * loader reads back exactly the string that went in.
 */
#include <stdint.h>
#include <string.h>

#include "yamltext.h"

/*
 * One UTF-8 sequence at s (validated beforehand): its code point, *len its
 * length. The input was checked by sbx_task__utf8_invalid, so this cannot overrun.
 */
static uint32_t utf8_next(const unsigned char *s, size_t *len)
{
	if (s[0] < 0x80) {
		*len = 1;
		return s[0];
	}
	if (s[0] < 0xE0) {
		*len = 2;
		return ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
	}
	if (s[0] < 0xF0) {
		*len = 3;
		return ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) |
		       (s[2] & 0x3F);
	}
	*len = 4;
	return ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
	       ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
}

ssize_t sbx_task__utf8_invalid(const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;

	for (size_t i = 0; i < n;) {
		unsigned char b = s[i];
		size_t len = b < 0x80		  ? 1
			     : (b & 0xE0) == 0xC0 ? 2
			     : (b & 0xF0) == 0xE0 ? 3
			     : (b & 0xF8) == 0xF0 ? 4
						  : 0;
		uint32_t cp;

		if (b == 0 || len == 0 || i + len > n)
			return (ssize_t)i;
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xC0) != 0x80)
				return (ssize_t)i;
		cp = utf8_next(s + i, &len);
		/* Overlong forms, surrogates, beyond U+10FFFF. */
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return (ssize_t)i;
		i += len;
	}
	return -1;
}

/* What YAML lets a stream carry as it is (YAML 1.1 "printable", line breaks aside). */
static bool yaml_printable(uint32_t cp)
{
	return (cp >= 0x20 && cp <= 0x7E) || (cp >= 0xA0 && cp <= 0xD7FF) ||
	       (cp >= 0xE000 && cp <= 0xFFFD && cp != 0xFEFF) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

int sbx_task__yaml_quoted(sbx_buf *b, const char *s)
{
	int r = sbx_buf_putc(b, '"');

	for (const unsigned char *p = (const unsigned char *)s; *p && r == 0;) {
		size_t len;
		uint32_t cp = utf8_next(p, &len);

		if (cp == '"' || cp == '\\')
			r = sbx_buf_printf(b, "\\%c", (char)cp);
		else if (cp == '\n')
			r = sbx_buf_puts(b, "\\n");
		else if (cp == '\t')
			r = sbx_buf_puts(b, "\\t");
		else if (yaml_printable(cp))
			r = sbx_buf_append(b, p, len);
		else if (cp <= 0xFF)
			r = sbx_buf_printf(b, "\\x%02X", (unsigned)cp);
		else
			r = sbx_buf_printf(b, "\\u%04X", (unsigned)cp);
		p += len;
	}
	return r < 0 ? r : sbx_buf_putc(b, '"');
}

static bool all_printable(const char *s, bool newlines)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t len;
		uint32_t cp = utf8_next(p, &len);

		if (!yaml_printable(cp) && !(newlines && cp == '\n'))
			return false;
		p += len;
	}
	return true;
}

int sbx_task__yaml_text(sbx_buf *b, const char *key, const char *s)
{
	size_t n = strlen(s);
	bool block = n > 0 && s[0] != ' ' && s[0] != '\n' && all_printable(s, true) &&
		     (n < 2 || strcmp(s + n - 2, "\n\n") != 0);

	int r;

	if (!block) {
		r = sbx_buf_printf(b, "%s: ", key);
		if (r == 0)
			r = sbx_task__yaml_quoted(b, s);
		return r < 0 ? r : sbx_buf_putc(b, '\n');
	}
	r = sbx_buf_printf(b, "%s: |%s\n", key, s[n - 1] == '\n' ? "" : "-");
	for (const char *line = s; *line && r == 0;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		r = len ? sbx_buf_printf(b, "  %.*s\n", (int)len, line) : sbx_buf_putc(b, '\n');
		line += len + (nl ? 1 : 0);
	}
	return r;
}
