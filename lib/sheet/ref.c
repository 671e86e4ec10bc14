/* SPDX-License-Identifier: MIT */
/* A1 references and ranges: "B7", "$B$7", "'My Sheet'!A1:D101". */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/buf.h"
#include "sheet-internal.h"

/* Shown in error messages: at most this many bytes of the offending text. */
#define SHOW_MAX 64

char *sbx_ref_col_name(uint32_t col, char buf[static 4])
{
	char tmp[4];
	int n = 0;

	col++;
	while (col > 0 && n < 3) {
		tmp[n++] = (char)('A' + (col - 1) % 26);
		col = (col - 1) / 26;
	}
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return buf;
}

/* Parses up to 3 letters at *p; advances. Returns -EINVAL when none or out of range. */
static int parse_letters(const char **p, uint32_t *out)
{
	uint32_t v = 0;
	int n = 0;

	while (isalpha((unsigned char)**p)) {
		if (++n > 3)
			return -EINVAL;
		v = v * 26 + (uint32_t)(toupper((unsigned char)**p) - 'A' + 1);
		(*p)++;
	}
	if (n == 0 || v > SBX_SHEET_MAX_COLS)
		return -EINVAL;
	*out = v - 1;
	return 0;
}

static int parse_digits(const char **p, uint32_t *out)
{
	uint64_t v = 0;
	int n = 0;

	while (isdigit((unsigned char)**p)) {
		if (++n > 8)
			return -EINVAL;
		v = v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	if (n == 0 || v == 0 || v > SBX_SHEET_MAX_ROWS)
		return -EINVAL;
	*out = (uint32_t)v - 1;
	return 0;
}

int sbx_ref_col_parse(const char *letters, uint32_t *out)
{
	const char *p = letters;
	uint32_t v;

	if (!p || parse_letters(&p, &v) < 0 || *p)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Parses "[$]A[$]1" at *p without requiring the end of the string. */
static int parse_cell(const char **p, sbx_ref *out)
{
	sbx_ref r = {0};

	if (**p == '$') {
		r.col_abs = true;
		(*p)++;
	}
	if (parse_letters(p, &r.col) < 0)
		return -EINVAL;
	if (**p == '$') {
		r.row_abs = true;
		(*p)++;
	}
	if (parse_digits(p, &r.row) < 0)
		return -EINVAL;
	*out = r;
	return 0;
}

int sbx_ref_parse(const char *text, sbx_ref *out, sbx_error *err)
{
	const char *p = text;
	sbx_ref r;

	if (!text || parse_cell(&p, &r) < 0 || *p)
		return sbx_error_set(err, -EINVAL, "Invalid cell reference: %.*s", SHOW_MAX,
				     text ? text : "(null)");
	*out = r;
	return 0;
}

char *sbx_ref_format(const sbx_ref *ref, char buf[static 16])
{
	/* By hand, not snprintf: formulas are written back a reference at a time. */
	char col[4], digits[10];
	uint32_t row = (ref->row % SBX_SHEET_MAX_ROWS) + 1;
	size_t n = 0, nd = 0;

	if (ref->col_abs)
		buf[n++] = '$';
	sbx_ref_col_name(ref->col < SBX_SHEET_MAX_COLS ? ref->col : 0, col);
	for (const char *c = col; *c; c++)
		buf[n++] = *c;
	if (ref->row_abs)
		buf[n++] = '$';
	do {
		digits[nd++] = (char)('0' + row % 10);
		row /= 10;
	} while (row > 0);
	while (nd > 0)
		buf[n++] = digits[--nd];
	buf[n] = '\0';
	return buf;
}

bool sbx_ref_sheet_needs_quotes(const char *sheet)
{
	if (!sheet || !*sheet)
		return false;
	if (isdigit((unsigned char)sheet[0]))
		return true;
	for (const char *p = sheet; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.' &&
		    !((unsigned char)*p & 0x80))
			return true;
	/* A name that reads as a cell ("AB12") must be quoted too. */
	const char *q = sheet;
	uint32_t v;
	if (parse_letters(&q, &v) == 0 && parse_digits(&q, &v) == 0 && !*q)
		return true;
	return false;
}

char *sbx_range_format(const char *sheet, const sbx_ref *first, const sbx_ref *last)
{
	sbx_buf b = SBX_BUF_INIT(4096);
	char a[16], c[16];
	int r = 0;

	if (sheet && *sheet) {
		if (sbx_ref_sheet_needs_quotes(sheet)) {
			r = sbx_buf_putc(&b, '\'');
			for (const char *p = sheet; r == 0 && *p; p++)
				r = *p == '\'' ? sbx_buf_puts(&b, "''") : sbx_buf_putc(&b, *p);
			if (r == 0)
				r = sbx_buf_puts(&b, "'!");
		} else {
			r = sbx_buf_printf(&b, "%s!", sheet);
		}
	}
	if (r == 0)
		r = sbx_buf_puts(&b, sbx_ref_format(first, a));
	if (r == 0 && last && (last->row != first->row || last->col != first->col))
		r = sbx_buf_printf(&b, ":%s", sbx_ref_format(last, c));
	if (r < 0)
		return NULL;
	return sbx_buf_steal(&b, NULL);
}

/* One end of a range: a cell, a whole column ("C", "$C") or a whole row ("5"). */
enum end_kind { END_CELL, END_COL, END_ROW };

static int parse_end(const char **p, sbx_ref *out, enum end_kind *kind)
{
	const char *s = *p, *q = *p;
	sbx_ref r = {0};
	bool abs = false;

	if (parse_cell(&q, &r) == 0) {
		*p = q;
		*out = r;
		*kind = END_CELL;
		return 0;
	}
	q = s;
	if (*q == '$') {
		abs = true;
		q++;
	}
	if (isalpha((unsigned char)*q)) {
		if (parse_letters(&q, &r.col) < 0 || isdigit((unsigned char)*q))
			return -EINVAL;
		r.col_abs = abs;
		*kind = END_COL;
	} else {
		if (parse_digits(&q, &r.row) < 0)
			return -EINVAL;
		r.row_abs = abs;
		*kind = END_ROW;
	}
	*p = q;
	*out = r;
	return 0;
}

int sbx_range_parse(const char *text, sbx_range *out, sbx_error *err)
{
	_cleanup_free_ sbx_range *res = NULL;
	const char *p, *end;
	enum end_kind k1, k2;
	sbx_ref a, b;
	size_t n = 0;

	if (!text)
		return sbx_error_set(err, -EINVAL, "Invalid range: (null)");
	res = calloc(1, sizeof(*res));
	if (!res)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	p = text;
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (*p == '\'') {
		p++;
		for (;;) {
			if (p >= end)
				return sbx_error_set(err, -EINVAL,
						     "Invalid range: %.*s (unterminated quote)",
						     SHOW_MAX, text);
			if (*p == '\'') {
				if (p + 1 < end && p[1] == '\'') {
					p++;
				} else {
					p++;
					break;
				}
			}
			if (n >= SBX_SHEET_NAME_MAX)
				return sbx_error_set(err, -EINVAL,
						     "Invalid range: sheet name too long");
			res->sheet[n++] = *p++;
		}
		if (*p != '!' || n == 0)
			return sbx_error_set(err, -EINVAL, "Invalid range: %.*s", SHOW_MAX, text);
		p++;
	} else {
		const char *bang = NULL;
		for (const char *q = p; q < end; q++)
			if (*q == '!')
				bang = q;
		if (bang) {
			n = (size_t)(bang - p);
			if (n == 0 || n > SBX_SHEET_NAME_MAX)
				return sbx_error_set(err, -EINVAL, "Invalid range: %.*s", SHOW_MAX,
						     text);
			memcpy(res->sheet, p, n);
			p = bang + 1;
		}
	}
	res->sheet[n] = '\0';

	const char *start = p;
	if (parse_end(&p, &a, &k1) < 0 || (p < end && *p != ':'))
		goto bad_ref;
	if (p == end) {
		if (k1 != END_CELL)
			goto bad_range;
		b = a;
		k2 = k1;
	} else {
		p++;
		if (parse_end(&p, &b, &k2) < 0 || p != end)
			goto bad_ref;
		if (k1 != k2)
			goto bad_range;
	}
	if (k1 == END_COL) {
		a.row = 0;
		b.row = SBX_SHEET_MAX_ROWS - 1;
	} else if (k1 == END_ROW) {
		a.col = 0;
		b.col = SBX_SHEET_MAX_COLS - 1;
	}
	if (a.row > b.row) {
		uint32_t t = a.row;
		a.row = b.row;
		b.row = t;
	}
	if (a.col > b.col) {
		uint32_t t = a.col;
		a.col = b.col;
		b.col = t;
	}
	res->first = a;
	res->last = b;
	*out = *res;
	return 0;

bad_ref:
	if (!memchr(start, ':', (size_t)(end - start)))
		return sbx_error_set(err, -EINVAL, "Invalid cell reference: %.*s",
				     (int)((end - start) > SHOW_MAX ? SHOW_MAX : (end - start)),
				     start);
bad_range:
	return sbx_error_set(err, -EINVAL, "Invalid range: %.*s", SHOW_MAX, text);
}

/* ---- reference words (formula text) ---- */

/* "[$]A[$]1" exactly (at most 4 letters and 9 digits read). */
bool sbx_ref_parse_cell_word(const char *w, size_t len, uint32_t *row, uint32_t *col)
{
	const char *p = w, *end = w + len, *letters, *digits;
	uint32_t c = 0, r = 0;

	if (p < end && *p == '$')
		p++;
	for (letters = p; p < end && p - letters < 4; p++) {
		unsigned u = (unsigned)((unsigned char)(*p | 0x20) - 'a');
		if (u >= 26)
			break;
		c = c * 26 + u + 1;
	}
	if (p == letters)
		return false;
	if (p < end && *p == '$')
		p++;
	for (digits = p; p < end && p - digits < 9; p++) {
		unsigned d = (unsigned)((unsigned char)*p - '0');
		if (d > 9)
			break;
		r = r * 10 + d;
	}
	if (p != end || p == digits || c > SBX_SHEET_MAX_COLS || r == 0 || r > SBX_SHEET_MAX_ROWS)
		return false;
	*row = r - 1;
	*col = c - 1;
	return true;
}

bool sbx_ref_parse_col_row_word(const char *w, size_t len, bool cols, uint32_t *out)
{
	size_t i = len > 0 && w[0] == '$';
	uint64_t v = 0;

	if (len - i < 1 || len - i > (cols ? 3 : 7))
		return false;
	for (; i < len; i++) {
		unsigned char ch = (unsigned char)w[i];

		if (cols ? !isalpha(ch) : !isdigit(ch))
			return false;
		v = cols ? v * 26 + (uint64_t)(toupper(ch) - 'A' + 1)
			 : v * 10 + (uint64_t)(ch - '0');
	}
	if (v == 0 || v > (cols ? SBX_SHEET_MAX_COLS : SBX_SHEET_MAX_ROWS))
		return false;
	*out = (uint32_t)v - 1;
	return true;
}
