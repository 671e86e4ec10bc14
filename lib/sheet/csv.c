/* SPDX-License-Identifier: MIT */
/* RFC 4180 CSV: one sheet per file, numbers recognised on read. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sheet-internal.h"

/* A plain decimal number: [-+]digits[.digits][e[-+]digits], nothing else. */
static bool parse_number(const char *s, size_t len, double *out)
{
	char tmp[64];
	size_t i = 0;
	bool digits = false;
	char *end;

	if (len == 0 || len >= sizeof(tmp))
		return false;
	if (s[i] == '-' || s[i] == '+')
		i++;
	while (i < len && isdigit((unsigned char)s[i])) {
		i++;
		digits = true;
	}
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && isdigit((unsigned char)s[i])) {
			i++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		if (i >= len || !isdigit((unsigned char)s[i]))
			return false;
		while (i < len && isdigit((unsigned char)s[i]))
			i++;
	}
	if (i != len)
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	*out = strtod(tmp, &end);
	return isfinite(*out);
}

static int store_field(sbx_sheet *s, uint32_t row, uint32_t col, const char *f, size_t len,
		       bool quoted, bool all_text, sbx_error *err)
{
	sbx_book *b = s->book;
	scell c = {0};
	double v;

	if (len == 0)
		return col >= b->limits.max_cols
			       ? sbx_error_set(err, -E2BIG, "more than %u columns (limit)",
					       b->limits.max_cols)
			       : 0;
	if (!all_text && !quoted && parse_number(f, len, &v)) {
		c.kind = SBX_CELL_NUMBER;
		c.v.num = v;
	} else if (!all_text && !quoted && len > 1 && f[len - 1] == '%' &&
		   parse_number(f, len - 1, &v)) {
		c.kind = SBX_CELL_PERCENT;
		c.v.num = v / 100.0;
	} else if (!all_text && !quoted && (len == 4 || len == 5) &&
		   (strncasecmp(f, "TRUE", len) == 0 || strncasecmp(f, "FALSE", len) == 0)) {
		c.kind = SBX_CELL_BOOL;
		c.v.num = len == 4;
	} else {
		char tmp[40];
		if (!all_text && !quoted && len >= 10 && len < sizeof(tmp) &&
		    isdigit((unsigned char)f[0])) {
			memcpy(tmp, f, len);
			tmp[len] = '\0';
			if (sbx_sheet_parse_date(tmp, &v) == 0) {
				c.kind = SBX_CELL_DATE;
				c.v.num = v;
				return sbx_sheet__append(s, row, col, &c, err);
			}
		}
		int r = sbx_sheet__book_intern(b, f, len, &c.v.str, err);

		if (r < 0)
			return r;
		c.kind = SBX_CELL_STRING;
	}
	return sbx_sheet__append(s, row, col, &c, err);
}

int sbx_sheet__read_csv(sbx_book *b, const void *data, size_t len, const char *name,
			const sbx_sheet_open_options *o, sbx_error *err)
{
	const char *p = data, *end = p + len;
	char delim = o->csv_delimiter ? o->csv_delimiter : ',';
	sbx_buf field = SBX_BUF_INIT((size_t)b->limits.max_string + 1);
	uint64_t row = 0, col = 0;
	sbx_sheet *s;
	int r;

	r = sbx_book_add_sheet(b, "Sheet1", SIZE_MAX, &s, err);
	if (r < 0)
		return r;
	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end) {
		bool quoted = false;

		sbx_buf_reset(&field);
		if (*p == '"') {
			quoted = true;
			p++;
			for (;;) {
				const char *q = memchr(p, '"', (size_t)(end - p));
				if (!q) {
					r = sbx_error_set(
						err, -EINVAL,
						"'%s': line %llu: unterminated quoted field", name,
						(unsigned long long)row + 1);
					goto done;
				}
				r = sbx_buf_append(&field, p, (size_t)(q - p));
				if (r < 0)
					goto too_long;
				p = q + 1;
				if (p < end && *p == '"') {
					r = sbx_buf_putc(&field, '"');
					if (r < 0)
						goto too_long;
					p++;
					continue;
				}
				break;
			}
			/* Be lenient like LibreOffice: text after the closing quote is kept. */
			while (p < end && *p != delim && *p != '\n' && *p != '\r')
				if ((r = sbx_buf_putc(&field, *p++)) < 0)
					goto too_long;
		} else {
			const char *q = p;
			while (q < end && *q != delim && *q != '\n' && *q != '\r')
				q++;
			r = sbx_buf_append(&field, p, (size_t)(q - p));
			if (r < 0)
				goto too_long;
			p = q;
		}
		if (row >= b->limits.max_rows) {
			r = sbx_error_set(err, -E2BIG, "'%s': more than %u rows (limit)", name,
					  b->limits.max_rows);
			goto done;
		}
		r = store_field(s, (uint32_t)row, (uint32_t)(col > UINT32_MAX ? UINT32_MAX : col),
				sbx_buf_str(&field), field.len, quoted, o->csv_all_text, err);
		if (r < 0) {
			sbx_error_prefix(err, r, "'%s': line %llu", name,
					 (unsigned long long)row + 1);
			goto done;
		}
		if (p < end && *p == delim) {
			p++;
			col++;
			if (p == end)
				break;
			continue;
		}
		if (p < end && *p == '\r')
			p++;
		if (p < end && *p == '\n')
			p++;
		row++;
		col = 0;
	}
	r = 0;
done:
	sbx_buf_free(&field);
	return r;
too_long:
	sbx_buf_free(&field);
	return sbx_error_set(err, -E2BIG, "'%s': line %llu: field longer than %u bytes (limit)",
			     name, (unsigned long long)row + 1, b->limits.max_string);
}

int sbx_sheet_write_csv(const sbx_sheet *s, char delimiter, sbx_buf *out, sbx_error *err)
{
	char delim = delimiter ? delimiter : ',';
	char special[] = {delim, '"', '\r', '\n', '\0'};
	sbx_buf text = SBX_BUF_INIT(SHEET_OUT_MAX);
	uint32_t rows, cols;
	int r = 0;

	sbx_buf_reset(out);
	sbx_sheet_used_range(s, &rows, &cols);
	for (uint32_t row = 0; row < rows && r == 0; row++) {
		const srow *rw = &s->rows[row];
		uint32_t i = 0;
		for (uint32_t col = 0; col < cols && r == 0; col++) {
			if (col > 0)
				r = sbx_buf_putc(out, delim);
			if (i >= rw->n || rw->cells[i].col != col || r < 0)
				continue;
			sbx_cell c;
			sbx_sheet__export(s->book, &rw->cells[i++], &c);
			sbx_buf_reset(&text);
			r = sbx_cell_to_text(&c, &text);
			if (r < 0)
				break;
			const char *t = sbx_buf_str(&text);
			if (strpbrk(t, special)) {
				r = sbx_buf_putc(out, '"');
				for (const char *q = t; *q && r == 0; q++)
					r = *q == '"' ? sbx_buf_puts(out, "\"\"")
						      : sbx_buf_putc(out, *q);
				if (r == 0)
					r = sbx_buf_putc(out, '"');
			} else {
				r = sbx_buf_append(out, t, text.len);
			}
		}
		if (r == 0)
			r = sbx_buf_puts(out, "\r\n");
	}
	sbx_buf_free(&text);
	if (r < 0)
		return sbx_error_set(err, r, "CSV: %s",
				     r == -ENOBUFS ? "too large" : "out of memory");
	return 0;
}
