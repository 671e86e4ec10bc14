/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "sbx/utf8.h"
#include "sbx/view.h"

/* & < > " ' as entities; C0 controls but tab and newline, DEL and bad UTF-8 as U+FFFD. */
static const char *html_rep(const unsigned char *p, size_t left, size_t *n, int flags)
{
	const char *entity = sbx_markup_entity(*p);

	(void)flags;
	if (entity)
		return entity;
	if (*p == '"' || *p == '\'')
		return *p == '"' ? "&quot;" : "&#39;";
	if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
		return "\xef\xbf\xbd";
	if (*p >= 0x80) {
		*n = sbx_utf8_seq(p, left);
		if (!*n) {
			*n = 1;
			return "\xef\xbf\xbd";
		}
	}
	return NULL;
}

int sbx_html_escape_n(sbx_buf *out, const char *s, size_t len)
{
	return sbx_buf_escape(out, s, len, html_rep, 0);
}

int sbx_html_escape(sbx_buf *out, const char *s)
{
	return sbx_html_escape_n(out, s ? s : "", s ? strlen(s) : 0);
}
