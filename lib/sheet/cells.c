/* SPDX-License-Identifier: MIT */
/* Cell storage: per-sheet row arrays of compact cells sorted by column. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sheet-internal.h"

static bool scell_empty(const scell *c)
{
	return c->kind == SBX_CELL_EMPTY && c->formula == 0;
}

static int ensure_rows(sbx_sheet *s, uint32_t row, sbx_error *err)
{
	if (row < s->nrows)
		return 0;
	if (row >= s->rows_cap) {
		uint64_t cap = s->rows_cap ? (uint64_t)s->rows_cap * 2 : 64;
		while (cap <= row)
			cap *= 2;
		if (cap > SBX_SHEET_MAX_ROWS)
			cap = SBX_SHEET_MAX_ROWS;
		srow *nr = realloc(s->rows, cap * sizeof(*nr));
		if (!nr)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		s->rows = nr;
		s->rows_cap = (uint32_t)cap;
	}
	memset(s->rows + s->nrows, 0, (size_t)(row + 1 - s->nrows) * sizeof(srow));
	s->nrows = row + 1;
	return 0;
}

static int check_pos(const sbx_sheet *s, uint32_t row, uint32_t col, sbx_error *err)
{
	const sbx_sheet_limits *l = &s->book->limits;

	if (row >= l->max_rows)
		return sbx_error_set(err, -E2BIG, "more than %u rows (limit)", l->max_rows);
	if (col >= l->max_cols)
		return sbx_error_set(err, -E2BIG, "more than %u columns (limit)", l->max_cols);
	return 0;
}

static int row_reserve(srow *r, uint32_t extra, sbx_error *err)
{
	if (r->n + extra <= r->cap)
		return 0;
	uint32_t cap = r->cap ? r->cap * 2 : 4;
	while (cap < r->n + extra)
		cap *= 2;
	scell *nc = realloc(r->cells, (size_t)cap * sizeof(*nc));
	if (!nc)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r->cells = nc;
	r->cap = cap;
	return 0;
}

/* Room for one more cell in rw, counted against the book's cell limit. */
static int add_cell_room(sbx_sheet *s, srow *rw, sbx_error *err)
{
	int r = row_reserve(rw, 1, err);

	if (r < 0)
		return r;
	if (s->book->ncells >= s->book->limits.max_cells)
		return sbx_error_set(err, -E2BIG, "more than %llu cells (limit)",
				     (unsigned long long)s->book->limits.max_cells);
	s->book->ncells++;
	s->ncells++;
	return 0;
}

int sbx_sheet__append(sbx_sheet *s, uint32_t row, uint32_t col, const scell *c, sbx_error *err)
{
	int r = check_pos(s, row, col, err);
	srow *rw;

	if (r < 0)
		return r;
	if (scell_empty(c))
		return 0;
	r = ensure_rows(s, row, err);
	if (r < 0)
		return r;
	rw = &s->rows[row];
	if (rw->n > 0 && rw->cells[rw->n - 1].col >= col)
		return sbx_sheet__put(s, row, col, c, err);
	r = add_cell_room(s, rw, err);
	if (r < 0)
		return r;
	rw->cells[rw->n] = *c;
	rw->cells[rw->n].col = (uint16_t)col;
	rw->n++;
	return 0;
}

/* Index of the first cell with column >= col. */
static uint32_t row_lower_bound(const srow *rw, uint32_t col)
{
	uint32_t lo = 0, hi = rw->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (rw->cells[mid].col < col)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int sbx_sheet__put(sbx_sheet *s, uint32_t row, uint32_t col, const scell *c, sbx_error *err)
{
	int r = check_pos(s, row, col, err);
	srow *rw;
	uint32_t i;

	if (r < 0)
		return r;
	if (scell_empty(c)) {
		if (row >= s->nrows)
			return 0;
		rw = &s->rows[row];
		i = row_lower_bound(rw, col);
		if (i < rw->n && rw->cells[i].col == col) {
			memmove(rw->cells + i, rw->cells + i + 1,
				(rw->n - i - 1) * sizeof(*rw->cells));
			rw->n--;
			s->ncells--;
			s->book->ncells--;
		}
		return 0;
	}
	r = ensure_rows(s, row, err);
	if (r < 0)
		return r;
	rw = &s->rows[row];
	i = row_lower_bound(rw, col);
	if (i < rw->n && rw->cells[i].col == col) {
		rw->cells[i] = *c;
		rw->cells[i].col = (uint16_t)col;
		return 0;
	}
	r = add_cell_room(s, rw, err);
	if (r < 0)
		return r;
	memmove(rw->cells + i + 1, rw->cells + i, (rw->n - i) * sizeof(*rw->cells));
	rw->cells[i] = *c;
	rw->cells[i].col = (uint16_t)col;
	rw->n++;
	return 0;
}

void sbx_sheet__export(const sbx_book *b, const scell *c, sbx_cell *out)
{
	out->kind = (sbx_cell_kind)c->kind;
	out->number = 0.0;
	out->text = NULL;
	out->formula = c->formula ? sbx_sheet__pool_str(&b->pool, c->formula) : NULL;
	if (c->kind == SBX_CELL_STRING || c->kind == SBX_CELL_ERROR)
		out->text = sbx_sheet__pool_str(&b->pool, c->v.str);
	else if (c->kind != SBX_CELL_EMPTY)
		out->number = c->v.num;
}

sbx_cell_kind sbx_sheet_get(const sbx_sheet *s, uint32_t row, uint32_t col, sbx_cell *out)
{
	static const sbx_cell empty = SBX_CELL_INIT;
	const srow *rw;
	uint32_t i;

	*out = empty;
	if (row >= s->nrows)
		return SBX_CELL_EMPTY;
	rw = &s->rows[row];
	i = row_lower_bound(rw, col);
	if (i < rw->n && rw->cells[i].col == col)
		sbx_sheet__export(s->book, &rw->cells[i], out);
	return out->kind;
}

int sbx_sheet__book_intern(sbx_book *b, const char *s, size_t len, uint32_t *id, sbx_error *err)
{
	int r;

	if (len > b->limits.max_string)
		return sbx_error_set(err, -E2BIG, "text longer than %u bytes (limit)",
				     b->limits.max_string);
	if (b->pool.bytes + len > b->limits.max_text)
		return sbx_error_set(err, -E2BIG, "more than %llu bytes of text (limit)",
				     (unsigned long long)b->limits.max_text);
	r = sbx_sheet__pool_intern(&b->pool, s, len, id);
	if (r < 0)
		return sbx_error_set(err, r, "out of memory");
	return 0;
}

int sbx_sheet_set(sbx_sheet *s, uint32_t row, uint32_t col, const sbx_cell *v, sbx_error *err)
{
	scell c = {0};
	int r;

	if (row >= SBX_SHEET_MAX_ROWS || col >= SBX_SHEET_MAX_COLS ||
	    row >= s->book->limits.max_rows || col >= s->book->limits.max_cols)
		return sbx_error_set(err, -ERANGE, "cell row %u, column %u is outside the sheet",
				     row + 1, col + 1);
	if ((unsigned)v->kind > SBX_CELL_ERROR)
		return sbx_error_set(err, -EINVAL, "invalid cell kind %d", (int)v->kind);
	c.kind = (uint8_t)v->kind;
	if (v->kind == SBX_CELL_STRING || v->kind == SBX_CELL_ERROR) {
		if (!v->text)
			return sbx_error_set(err, -EINVAL, "%s cell without text",
					     sbx_cell_kind_name(v->kind));
		r = sbx_sheet__book_intern(s->book, v->text, strlen(v->text), &c.v.str, err);
		if (r < 0)
			return r;
	} else if (v->kind != SBX_CELL_EMPTY) {
		if (!isfinite(v->number))
			return sbx_error_set(err, -EINVAL, "number is not finite");
		c.v.num = v->kind == SBX_CELL_BOOL ? (v->number != 0.0) : v->number;
	}
	if (v->formula) {
		const char *f = v->formula;
		size_t len;
		while (*f == ' ' || *f == '\t' || *f == '\n' || *f == '\r')
			f++;
		len = strlen(f);
		while (len > 0 && (f[len - 1] == ' ' || f[len - 1] == '\t' || f[len - 1] == '\n' ||
				   f[len - 1] == '\r'))
			len--;
		if (len > 0) {
			_cleanup_free_ char *t = malloc(len + 2);
			if (!t)
				return sbx_error_set(err, -ENOMEM, "out of memory");
			size_t off = 0;
			if (f[0] != '=')
				t[off++] = '=';
			memcpy(t + off, f, len);
			t[off + len] = '\0';
			r = sbx_sheet__book_intern(s->book, t, strlen(t), &c.formula, err);
			if (r < 0)
				return r;
		}
	}
	return sbx_sheet__put(s, row, col, &c, err);
}

int sbx_sheet_set_number(sbx_sheet *s, uint32_t row, uint32_t col, double v, sbx_error *err)
{
	sbx_cell c = {SBX_CELL_NUMBER, v, NULL, NULL};
	return sbx_sheet_set(s, row, col, &c, err);
}

int sbx_sheet_set_string(sbx_sheet *s, uint32_t row, uint32_t col, const char *v, sbx_error *err)
{
	sbx_cell c = {SBX_CELL_STRING, 0, v, NULL};
	return sbx_sheet_set(s, row, col, &c, err);
}

int sbx_sheet_set_bool(sbx_sheet *s, uint32_t row, uint32_t col, bool v, sbx_error *err)
{
	sbx_cell c = {SBX_CELL_BOOL, v ? 1.0 : 0.0, NULL, NULL};
	return sbx_sheet_set(s, row, col, &c, err);
}

int sbx_sheet_set_formula(sbx_sheet *s, uint32_t row, uint32_t col, const char *formula,
			  const sbx_cell *cached, sbx_error *err)
{
	sbx_cell c = SBX_CELL_INIT;

	if (cached)
		c = *cached;
	c.formula = formula;
	if (!formula || !*formula)
		return sbx_error_set(err, -EINVAL, "empty formula");
	return sbx_sheet_set(s, row, col, &c, err);
}

int sbx_sheet_clear(sbx_sheet *s, uint32_t row, uint32_t col)
{
	scell c = {0};
	return sbx_sheet__put(s, row, col, &c, NULL);
}

void sbx_sheet_used_range(const sbx_sheet *s, uint32_t *rows, uint32_t *cols)
{
	uint32_t nr = 0, nc = 0;

	for (uint32_t r = 0; r < s->nrows; r++) {
		const srow *rw = &s->rows[r];
		if (rw->n == 0)
			continue;
		nr = r + 1;
		if ((uint32_t)rw->cells[rw->n - 1].col + 1 > nc)
			nc = rw->cells[rw->n - 1].col + 1u;
	}
	if (rows)
		*rows = nr;
	if (cols)
		*cols = nc;
}

uint64_t sbx_sheet_cell_count(const sbx_sheet *s)
{
	return s->ncells;
}

bool sbx_sheet_next(const sbx_sheet *s, sbx_sheet_iter *it, uint32_t *row, uint32_t *col,
		    sbx_cell *out)
{
	while (it->row < s->nrows) {
		const srow *rw = &s->rows[it->row];
		if (it->idx < rw->n) {
			const scell *c = &rw->cells[it->idx++];
			if (row)
				*row = it->row;
			if (col)
				*col = c->col;
			if (out)
				sbx_sheet__export(s->book, c, out);
			return true;
		}
		it->row++;
		it->idx = 0;
	}
	return false;
}

int sbx_sheet_insert_rows(sbx_sheet *s, uint32_t row, uint32_t count, sbx_error *err)
{
	uint32_t used;
	int r;

	sbx_sheet_used_range(s, &used, NULL);
	if (count == 0 || row >= used)
		return 0;
	if ((uint64_t)used + count > s->book->limits.max_rows)
		return sbx_error_set(err, -ERANGE,
				     "inserting %u rows would push content past row %u", count,
				     s->book->limits.max_rows);
	r = ensure_rows(s, used - 1 + count, err);
	if (r < 0)
		return r;
	memmove(s->rows + row + count, s->rows + row, (size_t)(used - row) * sizeof(srow));
	memset(s->rows + row, 0, (size_t)count * sizeof(srow));
	return 0;
}

int sbx_sheet_delete_rows(sbx_sheet *s, uint32_t row, uint32_t count, sbx_error *err)
{
	uint32_t end;

	if (count == 0 || row >= s->nrows)
		return 0;
	end = (uint64_t)row + count > s->nrows ? s->nrows : row + count;
	for (uint32_t r = row; r < end; r++) {
		s->ncells -= s->rows[r].n;
		s->book->ncells -= s->rows[r].n;
		free(s->rows[r].cells);
	}
	memmove(s->rows + row, s->rows + end, (size_t)(s->nrows - end) * sizeof(srow));
	s->nrows -= end - row;
	return 0;
}

int sbx_sheet_insert_cols(sbx_sheet *s, uint32_t col, uint32_t count, sbx_error *err)
{
	uint32_t used;

	sbx_sheet_used_range(s, NULL, &used);
	if (count == 0 || col >= used)
		return 0;
	if ((uint64_t)used + count > s->book->limits.max_cols)
		return sbx_error_set(err, -ERANGE,
				     "inserting %u columns would push content past column %u",
				     count, s->book->limits.max_cols);
	for (uint32_t r = 0; r < s->nrows; r++) {
		srow *rw = &s->rows[r];
		for (uint32_t i = row_lower_bound(rw, col); i < rw->n; i++)
			rw->cells[i].col = (uint16_t)(rw->cells[i].col + count);
	}
	return 0;
}

int sbx_sheet_delete_cols(sbx_sheet *s, uint32_t col, uint32_t count, sbx_error *err)
{
	uint64_t end = (uint64_t)col + count;

	if (count == 0)
		return 0;
	for (uint32_t r = 0; r < s->nrows; r++) {
		srow *rw = &s->rows[r];
		uint32_t i = row_lower_bound(rw, col), j = i;
		while (j < rw->n && rw->cells[j].col < end)
			j++;
		if (j > i) {
			memmove(rw->cells + i, rw->cells + j, (rw->n - j) * sizeof(*rw->cells));
			rw->n -= j - i;
			s->ncells -= j - i;
			s->book->ncells -= j - i;
		}
		for (; i < rw->n; i++)
			rw->cells[i].col = (uint16_t)(rw->cells[i].col - count);
	}
	return 0;
}
