/* SPDX-License-Identifier: MIT */
/*
 * Formula text: OpenFormula ("of:=SUM([.A1:.B3])") <-> A1 style
 * ("=SUM(A1:B3)"), shifting relative references, normalising for
 * comparison. A light scanner, not a parser: strings are copied untouched,
 * references are recognised by shape, everything else passes through.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/buf.h"
#include "sbx/sheet_ref.h"
#include "sheet-internal.h"

static int finish(sbx_buf *b, int r, char **out, sbx_error *err)
{
	if (r < 0) {
		sbx_buf_free(b);
		if (r == -ENOBUFS)
			return sbx_error_set(err, -E2BIG, "formula too long (limit)");
		return sbx_error_set(err, r, "out of memory");
	}
	*out = sbx_buf_steal(b, NULL);
	if (!*out)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* Copies a "..." string literal starting at *p (doubled quotes inside). */
static int copy_string(const char **p, sbx_buf *b)
{
	const char *s = *p;
	const char *q = s + 1;

	for (;;) {
		if (!*q)
			break;
		if (*q == '"') {
			if (q[1] == '"') {
				q += 2;
				continue;
			}
			q++;
			break;
		}
		q++;
	}
	*p = q;
	return sbx_buf_append(b, s, (size_t)(q - s));
}

static int put_sheet(sbx_buf *b, const char *sheet, size_t len)
{
	_cleanup_free_ char *name = strndup(sheet, len);
	int r = 0;

	if (!name)
		return -ENOMEM;
	if (sbx_ref_sheet_needs_quotes(name)) {
		r = sbx_buf_putc(b, '\'');
		for (size_t i = 0; r == 0 && i < len; i++)
			r = name[i] == '\'' ? sbx_buf_puts(b, "''") : sbx_buf_putc(b, name[i]);
		if (r == 0)
			r = sbx_buf_putc(b, '\'');
	} else {
		r = sbx_buf_append(b, name, len);
	}
	return r;
}

/* Reads an ODF sheet name at *p (quoted or not, '$' dropped) into a buffer, unquoted. */
static int read_ods_sheet(const char **p, const char *end, sbx_buf *name)
{
	const char *q = *p;
	int r = 0;

	if (q < end && *q == '$')
		q++;
	if (q < end && *q == '\'') {
		q++;
		while (q < end && r == 0) {
			if (*q == '\'') {
				if (q + 1 < end && q[1] == '\'') {
					r = sbx_buf_putc(name, '\'');
					q += 2;
					continue;
				}
				q++;
				break;
			}
			r = sbx_buf_putc(name, *q++);
		}
	} else {
		while (q < end && *q != '.' && r == 0)
			r = sbx_buf_putc(name, *q++);
	}
	*p = q;
	return r;
}

static bool word_is_cell(const char *w, size_t len, sbx_ref *ref);

/*
 * "C$1:D$1048576" spans whole columns: write it back as "C:D", the form
 * sbx_formula_to_ods expanded. seg is where the reference starts in b.
 */
static void fold_whole_columns(sbx_buf *b, size_t seg)
{
	char *p = b->data + seg, *bang = NULL, *colon;
	sbx_ref a, c;

	for (char *q = p; q < b->data + b->len; q++)
		if (*q == '!')
			bang = q;
	if (bang)
		p = bang + 1;
	colon = memchr(p, ':', (size_t)(b->data + b->len - p));
	if (!colon || !word_is_cell(p, (size_t)(colon - p), &a) ||
	    !word_is_cell(colon + 1, (size_t)(b->data + b->len - colon - 1), &c))
		return;
	if (a.row != 0 || c.row != SBX_SHEET_MAX_ROWS - 1)
		return;
	char tmp[24];
	size_t n = 0;
	char cn[4];
	if (a.col_abs)
		tmp[n++] = '$';
	n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s:", sbx_ref_col_name(a.col, cn));
	if (c.col_abs)
		tmp[n++] = '$';
	n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s", sbx_ref_col_name(c.col, cn));
	b->len = (size_t)(p - b->data);
	memcpy(b->data + b->len, tmp, n);
	b->len += n;
	b->data[b->len] = '\0';
}

/* Converts the inside of one ODF "[...]" reference. */
static int ods_ref(const char *s, const char *end, sbx_buf *b)
{
	_cleanup_(sbx_buf_free) sbx_buf prev = SBX_BUF_INIT(4096);
	size_t seg = b->len;
	bool first = true;
	int r = 0;

	while (s < end && r == 0) {
		sbx_buf sheet = SBX_BUF_INIT(4096);
		const char *part_end = s;
		bool inq = false;

		/* A part ends at ':' outside quotes. */
		while (part_end < end && (inq || *part_end != ':')) {
			if (*part_end == '\'')
				inq = !inq;
			part_end++;
		}
		if (*s != '.') {
			r = read_ods_sheet(&s, part_end, &sheet);
			if (r == 0 && sheet.len > 0 &&
			    (first || strcmp(sbx_buf_str(&sheet), sbx_buf_str(&prev)) != 0)) {
				r = put_sheet(b, sheet.data, sheet.len);
				if (r == 0)
					r = sbx_buf_putc(b, '!');
			}
			if (r == 0) {
				sbx_buf_reset(&prev);
				r = sbx_buf_puts(&prev, sbx_buf_str(&sheet));
			}
		}
		sbx_buf_free(&sheet);
		if (s < part_end && *s == '.')
			s++;
		if (r == 0)
			r = sbx_buf_append(b, s, (size_t)(part_end - s));
		s = part_end;
		if (s < end && r == 0) {
			r = sbx_buf_putc(b, ':');
			s++;
		}
		first = false;
	}
	if (r == 0)
		fold_whole_columns(b, seg);
	return r;
}

int sbx_formula_from_ods(const char *ods, size_t max_len, char **out, sbx_error *err)
{
	sbx_buf b = SBX_BUF_INIT(max_len);
	const char *p = ods;
	int r = 0, braces = 0;

	/* Namespace prefix: "of:", "oooc:", "msoxl:". */
	const char *colon = strchr(p, ':');
	if (colon && colon[1] == '=' && colon - p < 8) {
		bool alpha = true;
		for (const char *q = p; q < colon; q++)
			alpha = alpha && isalpha((unsigned char)*q);
		if (alpha)
			p = colon + 1;
	}
	if (*p != '=')
		r = sbx_buf_putc(&b, '=');
	while (*p && r == 0) {
		if (*p == '"') {
			r = copy_string(&p, &b);
		} else if (*p == '[') {
			const char *q = p + 1;
			bool inq = false;
			while (*q && (inq || *q != ']')) {
				if (*q == '\'')
					inq = !inq;
				q++;
			}
			if (!*q) {
				r = sbx_buf_puts(&b, p);
				break;
			}
			r = ods_ref(p + 1, q, &b);
			p = q + 1;
		} else if (*p == ';') {
			/* Argument separator; inside {} the column separator. */
			r = sbx_buf_putc(&b, ',');
			p++;
		} else if (*p == '|' && braces > 0) {
			r = sbx_buf_putc(&b, ';'); /* inline array row separator */
			p++;
		} else if (*p == '{' || *p == '}' || *p == '|') {
			braces += *p == '{' ? 1 : (*p == '}' && braces > 0 ? -1 : 0);
			r = sbx_buf_putc(&b, *p++);
		} else {
			/* Everything up to the next special character, as it is. */
			size_t n = strcspn(p, "\"[;{}|");
			r = sbx_buf_append(&b, p, n);
			p += n;
		}
	}
	return finish(&b, r, out, err);
}

/* ---- A1 scanning ---- */

/* Parses a whole word as "[$]A[$]1"; false when it is anything else. */
static bool word_is_cell(const char *w, size_t len, sbx_ref *ref)
{
	char tmp[24];
	sbx_ref r = {0};
	const char *p = tmp;
	uint32_t v;

	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, w, len);
	tmp[len] = '\0';
	if (*p == '$') {
		r.col_abs = true;
		p++;
	}
	v = 0;
	int n = 0;
	while (isalpha((unsigned char)*p)) {
		if (++n > 3)
			return false;
		v = v * 26 + (uint32_t)(toupper((unsigned char)*p) - 'A' + 1);
		p++;
	}
	if (n == 0 || v > SBX_SHEET_MAX_COLS)
		return false;
	r.col = v - 1;
	if (*p == '$') {
		r.row_abs = true;
		p++;
	}
	uint64_t row = 0;
	n = 0;
	while (isdigit((unsigned char)*p)) {
		if (++n > 8)
			return false;
		row = row * 10 + (uint64_t)(*p - '0');
		p++;
	}
	if (n == 0 || *p || row == 0 || row > SBX_SHEET_MAX_ROWS)
		return false;
	r.row = (uint32_t)row - 1;
	*ref = r;
	return true;
}

/* One recognised reference: optional sheet (raw text incl. quotes), one or two cells. */
typedef struct a1ref {
	const char *sheet; /* raw, NULL if none */
	size_t sheet_len;
	sbx_ref a, b;
	bool range;
} a1ref;

/* Reads an optional sheet prefix at p; returns the position after '!' or p. */
static const char *scan_sheet(const char *p, const char **sheet, size_t *len)
{
	const char *q = p;

	*sheet = NULL;
	*len = 0;
	if (*q == '\'') {
		q++;
		while (*q) {
			if (*q == '\'') {
				if (q[1] == '\'') {
					q += 2;
					continue;
				}
				break;
			}
			q++;
		}
		if (*q != '\'' || q[1] != '!')
			return p;
		*sheet = p;
		*len = (size_t)(q + 1 - p);
		return q + 2;
	}
	while (sbx_ref_word_char(*q) && *q != '$')
		q++;
	if (q > p && *q == '!') {
		*sheet = p;
		*len = (size_t)(q - p);
		return q + 1;
	}
	return p;
}

/* "[$]A" .. "[$]XFD": a whole-column end of a range like "A:C". */
static bool word_is_col(const char *w, size_t len, bool *abs, uint32_t *col)
{
	*abs = len > 0 && w[0] == '$';
	return sbx_ref_parse_col_row_word(w, len, true, col);
}

/*
 * A whole-column range "A:C" (optionally with a sheet) for ODF, which has no
 * such syntax in OpenFormula 1.2: it becomes rows 1..1048576. Returns the
 * end or NULL.
 */
static const char *scan_col_range(const char *p, a1ref *ref)
{
	const char *q = scan_sheet(p, &ref->sheet, &ref->sheet_len), *w = q;
	bool abs1, abs2;

	while (sbx_ref_word_char(*q))
		q++;
	if (*q != ':' || !word_is_col(w, (size_t)(q - w), &abs1, &ref->a.col))
		return NULL;
	const char *w2 = q + 1, *e2 = w2;
	while (sbx_ref_word_char(*e2))
		e2++;
	if (*e2 == '(' || !word_is_col(w2, (size_t)(e2 - w2), &abs2, &ref->b.col))
		return NULL;
	ref->a.col_abs = abs1;
	ref->b.col_abs = abs2;
	ref->a.row = 0;
	ref->b.row = SBX_SHEET_MAX_ROWS - 1;
	ref->a.row_abs = ref->b.row_abs = true;
	ref->range = true;
	return e2;
}

/* Tries to read a reference at p (p must not continue a word). Returns the end or NULL. */
static const char *scan_ref(const char *p, a1ref *ref)
{
	const char *q = scan_sheet(p, &ref->sheet, &ref->sheet_len);
	const char *w = q;

	while (sbx_ref_word_char(*q))
		q++;
	if (!word_is_cell(w, (size_t)(q - w), &ref->a) || *q == '(')
		return NULL;
	ref->range = false;
	if (*q == ':') {
		const char *s2;
		size_t l2;
		const char *w2 = scan_sheet(q + 1, &s2, &l2);
		const char *e2 = w2;
		while (sbx_ref_word_char(*e2))
			e2++;
		if (word_is_cell(w2, (size_t)(e2 - w2), &ref->b) && *e2 != '(') {
			ref->range = true;
			q = e2;
		}
	}
	return q;
}

typedef enum { MODE_TO_ODS, MODE_SHIFT, MODE_NORMALIZE } scan_mode;

static bool shift_ref(sbx_ref *r, int64_t drow, int64_t dcol)
{
	int64_t row = r->row, col = r->col;

	if (!r->row_abs)
		row += drow;
	if (!r->col_abs)
		col += dcol;
	if (row < 0 || row >= SBX_SHEET_MAX_ROWS || col < 0 || col >= SBX_SHEET_MAX_COLS)
		return false;
	r->row = (uint32_t)row;
	r->col = (uint32_t)col;
	return true;
}

static int put_ods_sheet(sbx_buf *b, const char *raw, size_t len)
{
	/* raw is A1 style: 'It''s' or Name. ODF quotes the same way. */
	int r = sbx_buf_putc(b, '$');
	return r ? r : sbx_buf_append(b, raw, len);
}

/* Appends the cells of a reference: a, then sep and c when it is a range. */
static int put_cells(sbx_buf *b, const sbx_ref *a, const sbx_ref *c, bool range, const char *sep)
{
	char text[16];
	int r = sbx_buf_puts(b, sbx_ref_format(a, text));

	if (r == 0 && range)
		r = sbx_buf_puts(b, sep);
	if (r == 0 && range)
		r = sbx_buf_puts(b, sbx_ref_format(c, text));
	return r;
}

static int emit_ref(sbx_buf *b, const a1ref *ref, scan_mode mode, int64_t drow, int64_t dcol)
{
	sbx_ref a = ref->a, c = ref->b;
	int r = 0;

	if (mode == MODE_SHIFT) {
		if (!shift_ref(&a, drow, dcol) || (ref->range && !shift_ref(&c, drow, dcol)))
			return sbx_buf_puts(b, "#REF!");
	}
	if (mode == MODE_TO_ODS) {
		r = sbx_buf_putc(b, '[');
		if (r == 0 && ref->sheet)
			r = put_ods_sheet(b, ref->sheet, ref->sheet_len);
		if (r == 0)
			r = sbx_buf_putc(b, '.');
		if (r == 0)
			r = put_cells(b, &a, &c, ref->range, ":.");
		return r ? r : sbx_buf_putc(b, ']');
	}
	if (ref->sheet) {
		r = sbx_buf_append(b, ref->sheet, ref->sheet_len);
		if (r == 0)
			r = sbx_buf_putc(b, '!');
	}
	if (mode == MODE_NORMALIZE) {
		a.row_abs = a.col_abs = c.row_abs = c.col_abs = false;
	}
	return r ? r : put_cells(b, &a, &c, ref->range, ":");
}

static int scan_a1(const char *in, scan_mode mode, int64_t drow, int64_t dcol, sbx_buf *b)
{
	const char *p = in;
	int r = 0, braces = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (mode == MODE_TO_ODS)
		r = sbx_buf_puts(b, "of:");
	if (r == 0)
		r = sbx_buf_putc(b, '=');
	if (*p == '=')
		p++;
	bool prev_word = false;
	while (*p && r == 0) {
		a1ref ref;
		const char *e;

		if (*p == '"') {
			r = copy_string(&p, b);
			prev_word = false;
			continue;
		}
		if (!prev_word && mode == MODE_TO_ODS && (e = scan_col_range(p, &ref)) != NULL) {
			r = emit_ref(b, &ref, mode, drow, dcol);
			p = e;
			prev_word = true;
			continue;
		}
		if (!prev_word && (e = scan_ref(p, &ref)) != NULL) {
			r = emit_ref(b, &ref, mode, drow, dcol);
			p = e;
			prev_word = true;
			continue;
		}
		if (mode == MODE_TO_ODS && *p == ',') {
			r = sbx_buf_putc(b, ';');
		} else if (mode == MODE_TO_ODS && *p == ';' && braces > 0) {
			r = sbx_buf_putc(b, '|'); /* inline array row separator */
		} else if (mode == MODE_NORMALIZE &&
			   (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '$')) {
			r = 0;
		} else if (mode == MODE_NORMALIZE) {
			r = sbx_buf_putc(b, (char)toupper((unsigned char)*p));
		} else {
			r = sbx_buf_putc(b, *p);
		}
		braces += *p == '{' ? 1 : (*p == '}' && braces > 0 ? -1 : 0);
		prev_word = sbx_ref_word_char(*p) || *p == '\'';
		p++;
	}
	return r;
}

int sbx_formula_to_ods(const char *a1, size_t max_len, char **out, sbx_error *err)
{
	sbx_buf b = SBX_BUF_INIT(max_len);
	return finish(&b, scan_a1(a1, MODE_TO_ODS, 0, 0, &b), out, err);
}

int sbx_formula_shift(const char *a1, int64_t drow, int64_t dcol, size_t max_len, char **out,
		      sbx_error *err)
{
	sbx_buf b = SBX_BUF_INIT(max_len);
	return finish(&b, scan_a1(a1, MODE_SHIFT, drow, dcol, &b), out, err);
}

int sbx_formula_normalize(const char *a1, size_t max_len, char **out, sbx_error *err)
{
	sbx_buf b = SBX_BUF_INIT(max_len);
	int r = scan_a1(a1, MODE_NORMALIZE, 0, 0, &b);

	/* Sheet names inside references keep their case from emit_ref; fold them too. */
	if (r == 0) {
		bool instr = false;
		for (size_t i = 0; i < b.len; i++) {
			if (b.data[i] == '"')
				instr = !instr;
			else if (!instr)
				b.data[i] = (char)toupper((unsigned char)b.data[i]);
		}
	}
	return finish(&b, r, out, err);
}
