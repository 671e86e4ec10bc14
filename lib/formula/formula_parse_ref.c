/* SPDX-License-Identifier: MIT */
/*
 * The parser's references: an optional sheet prefix ("Name!", "'It''s'!"),
 * a cell, a range, whole columns or rows, resolved against the book.
 */
#include <string.h>
#include <strings.h>

#include "formula-parse.h"

/*
 * An optional sheet prefix at ps->p ("Name!" or "'It''s'!"). Returns 1 with
 * the unquoted name in buf, 0 when there is none (nothing consumed).
 */
static int sheet_prefix(parser *ps, char *buf, size_t cap)
{
	const char *q = ps->p;
	size_t n = 0;

	if (*q == '\'') {
		q++;
		for (;;) {
			if (!*q)
				return 0;
			if (*q == '\'') {
				if (q[1] != '\'')
					break;
				q++;
			}
			if (n + 1 >= cap)
				return 0;
			buf[n++] = *q++;
		}
		if (q[1] != '!')
			return 0;
		buf[n] = '\0';
		ps->p = q + 2;
		return 1;
	}
	while (sbx_ref_word_char(*q) && *q != '$')
		q++;
	if (q == ps->p || *q != '!' || (size_t)(q - ps->p) >= cap)
		return 0;
	n = (size_t)(q - ps->p);
	memcpy(buf, ps->p, n);
	buf[n] = '\0';
	ps->p = q + 1;
	return 1;
}

enum { END_CELL, END_COL, END_ROW };

/* One end of a reference: a word that is a cell, a column or a row. */
static bool ref_end(const char *w, size_t len, int *kind, uint32_t *row, uint32_t *col)
{
	if (sbx_ref_parse_cell_word(w, len, row, col)) {
		*kind = END_CELL;
		return true;
	}
	if (sbx_ref_parse_col_row_word(w, len, true, col)) {
		*kind = END_COL;
		return true;
	}
	if (sbx_ref_parse_col_row_word(w, len, false, row)) {
		*kind = END_ROW;
		return true;
	}
	return false;
}

static int find_sheet(parser *ps, const char *name, bool *bad)
{
	sbx_sheet *s = sbx_book_find(ps->book, name);

	*bad = !s;
	return s ? (int)sbx_sheet_index(s) : 0;
}

/*
 * Tries a reference at ps->p: [sheet!]end[:[sheet!]end]. Returns the node,
 * or UINT32_MAX with nothing consumed when the text is not a reference.
 */
uint32_t sbx_fx__parse_ref(parser *ps)
{
	const char *start = ps->p;
	char sheet[SBX_SHEET_NAME_MAX + 1], sheet2[SBX_SHEET_NAME_MAX + 1];
	bool has_sheet, bad = false;
	uint32_t r0 = 0, c0 = 0, r1 = 0, c1 = 0, idx = ps->self, i;
	const char *w0, *w1 = NULL;
	int k0, k1;
	size_t len;

	has_sheet = sheet_prefix(ps, sheet, sizeof(sheet)) == 1;
	w0 = ps->p;
	len = word_len(ps->p);
	if (len == 0 || ps->p[len] == '(' || !ref_end(ps->p, len, &k0, &r0, &c0))
		goto not_ref;
	ps->p += len;
	if (*ps->p == ':') {
		const char *save = ps->p;
		bool has2;

		ps->p++;
		has2 = sheet_prefix(ps, sheet2, sizeof(sheet2)) == 1;
		len = word_len(ps->p);
		if (len && ps->p[len] != '(' && ref_end(ps->p, len, &k1, &r1, &c1) && k1 == k0) {
			w1 = ps->p;
			ps->p += len;
			if (has2 && (!has_sheet || strcasecmp(sheet, sheet2) != 0))
				unsupported(ps, "unsupported 3-D reference");
		} else {
			ps->p = save;
			k1 = -1;
		}
	} else {
		k1 = -1;
	}
	if (k1 < 0) {
		if (k0 != END_CELL)
			goto not_ref;
		r1 = r0;
		c1 = c0;
	}
	if (k0 == END_COL) {
		r0 = 0;
		r1 = SBX_SHEET_MAX_ROWS - 1;
	} else if (k0 == END_ROW) {
		c0 = 0;
		c1 = SBX_SHEET_MAX_COLS - 1;
	}
	if (has_sheet)
		idx = (uint32_t)find_sheet(ps, sheet, &bad);
	i = node_new(ps, N_REF);
	if (ps->oom)
		return 0;
	origin_set(ps, i, w0, w1, (const uint32_t[4]){r0, c0, r1, c1});
	ps->f->nodes[i].ref = (fx_rect){idx, r0 < r1 ? r0 : r1, c0 < c1 ? c0 : c1,
					r0 < r1 ? r1 : r0, c0 < c1 ? c1 : c0};
	ps->f->nodes[i].ref_bad = bad;
	return i;
not_ref:
	ps->p = start;
	return UINT32_MAX;
}
