/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sbx/cleanup.h"
#include "grader-internal.h"

/* Rectangles: 0-based, inclusive. */
typedef struct rect {
	uint32_t r0, c0, r1, c1;
} rect;

typedef struct scope {
	rect rects[SBX_GRADING_MAX_RANGES];
	size_t n;
} scope;

static void mismatch_clear(sbx_grade_mismatch *m)
{
	sbx_free_all(m->sheet, m->expected, m->got, m->expected_formula, m->got_formula);
}

void sbx_grade_case_result_clear(sbx_grade_case_result *r)
{
	if (!r)
		return;
	sbx_free_all(r->name, r->output, r->oracle, r->failure, r->opts.strip_chars);
	sbx_strv_free_n(r->missing_sheets, r->n_missing_sheets);
	for (size_t i = 0; i < r->n_mismatches; i++)
		mismatch_clear(&r->mismatches[i]);
	free(r->mismatches);
	*r = (sbx_grade_case_result){0};
}

/* Display text, cut at SBX_GRADE_MAX_VALUE bytes so 100,000 mismatches stay affordable. */
static char *cell_text(const sbx_cell *c)
{
	sbx_buf b = SBX_BUF_INIT(SBX_GRADE_MAX_VALUE + 8);

	if (c->kind == SBX_CELL_STRING && c->text && strlen(c->text) > SBX_GRADE_MAX_VALUE) {
		if (sbx_buf_append(&b, c->text, SBX_GRADE_MAX_VALUE) < 0 ||
		    sbx_buf_puts(&b, "...") < 0)
			return NULL;
	} else if (sbx_cell_to_text(c, &b) < 0) {
		return NULL;
	}
	return sbx_buf_steal(&b, NULL);
}

/*
 * A new zeroed mismatch in res, counted at once so a clear frees what it
 * holds. *out is NULL when the kept list is full (the total still counts).
 */
static int mismatch_new(sbx_grade_case_result *res, uint64_t cells, sbx_grade_mismatch **out)
{
	*out = NULL;
	res->mismatches_total += cells;
	if (res->n_mismatches >= SBX_GRADE_MAX_MISMATCHES)
		return 0;
	if (res->n_mismatches % 64 == 0) {
		sbx_grade_mismatch *grown =
			realloc(res->mismatches, (res->n_mismatches + 64) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		res->mismatches = grown;
	}
	*out = &res->mismatches[res->n_mismatches++];
	**out = (sbx_grade_mismatch){.cells = cells};
	return 0;
}

static int add_mismatch(sbx_grade_case_result *res, const char *sheet, uint32_t row, uint32_t col,
			const sbx_cell *e, const sbx_cell *a, const sbx_cmp *cmp,
			const sbx_grading_opts *o)
{
	sbx_grade_mismatch *m;

	if (mismatch_new(res, 1, &m) < 0)
		return -ENOMEM;
	if (!m)
		return 0;
	m->reason = cmp->reason;
	m->row = row;
	m->col = col;
	m->diff = cmp->diff;
	m->tolerance = cmp->tolerance;
	m->expected_empty = e->kind == SBX_CELL_EMPTY || sbx_grader__is_empty(o, e);
	m->got_empty = a->kind == SBX_CELL_EMPTY || sbx_grader__is_empty(o, a);
	m->expected_kind = e->kind;
	m->got_kind = a->kind;
	m->sheet = strdup(sheet);
	m->expected = cell_text(e);
	m->got = cell_text(a);
	if (e->formula)
		m->expected_formula = strdup(e->formula);
	if (a->formula)
		m->got_formula = strdup(a->formula);
	if (!m->sheet || !m->expected || !m->got || (e->formula && !m->expected_formula) ||
	    (a->formula && !m->got_formula))
		return -ENOMEM;
	return 0;
}

static int add_missing_sheet(sbx_grade_case_result *res, const char *sheet, uint64_t cells)
{
	sbx_grade_mismatch *m;
	char **names;

	names = realloc(res->missing_sheets, (res->n_missing_sheets + 1) * sizeof(*names));
	if (!names)
		return -ENOMEM;
	res->missing_sheets = names;
	names[res->n_missing_sheets] = strdup(sheet);
	if (!names[res->n_missing_sheets])
		return -ENOMEM;
	res->n_missing_sheets++;
	if (mismatch_new(res, cells, &m) < 0)
		return -ENOMEM;
	if (m) {
		m->reason = SBX_MISMATCH_SHEET_MISSING;
		m->sheet = strdup(sheet);
		if (!m->sheet)
			return -ENOMEM;
	}
	return 0;
}

static bool in_scope(const scope *sc, uint32_t r, uint32_t c)
{
	for (size_t i = 0; i < sc->n; i++)
		if (r >= sc->rects[i].r0 && r <= sc->rects[i].r1 && c >= sc->rects[i].c0 &&
		    c <= sc->rects[i].c1)
			return true;
	return false;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Cells covered by the union of the rectangles (coordinate compression; n is small). */
static uint64_t scope_area(const scope *sc)
{
	uint32_t xs[2 * SBX_GRADING_MAX_RANGES], ys[2 * SBX_GRADING_MAX_RANGES];
	size_t nx = 0, ny = 0;
	uint64_t area = 0;

	for (size_t i = 0; i < sc->n; i++) {
		xs[nx++] = sc->rects[i].c0;
		xs[nx++] = sc->rects[i].c1 + 1;
		ys[ny++] = sc->rects[i].r0;
		ys[ny++] = sc->rects[i].r1 + 1;
	}
	qsort(xs, nx, sizeof(*xs), cmp_u32);
	qsort(ys, ny, sizeof(*ys), cmp_u32);
	for (size_t i = 0; i + 1 < nx; i++)
		for (size_t j = 0; j + 1 < ny; j++)
			if (xs[i] < xs[i + 1] && ys[j] < ys[j + 1] && in_scope(sc, ys[j], xs[i]))
				area += (uint64_t)(xs[i + 1] - xs[i]) * (ys[j + 1] - ys[j]);
	return area;
}

/* Clamps r to rows x cols; false when nothing is left. */
static bool clamp(rect *r, uint32_t rows, uint32_t cols)
{
	if (r->r0 >= rows || r->c0 >= cols)
		return false;
	if (r->r1 >= rows)
		r->r1 = rows - 1;
	if (r->c1 >= cols)
		r->c1 = cols - 1;
	return true;
}

/*
 * The rectangles graded on oracle sheet s: the ranges that name it (or name
 * no sheet), else its used range. walk is what the cell walk visits: clamped
 * to what either sheet uses (a whole-column range does not mean a million
 * cells), grown to the output's used range in strict mode so extra content
 * counts. area is the part within the oracle's used range: with skip_empty
 * off, its cells are all graded, empty ones included; beyond it only cells
 * holding content are, so an output cannot dilute its score by writing far
 * away and claiming a sea of matching empty cells.
 */
static void build_scope(const sbx_grading_opts *o, const sbx_sheet *s, const sbx_sheet *out_s,
			scope *walk, scope *area)
{
	uint32_t rows, cols, orows = 0, ocols = 0, mrows, mcols;
	bool ranged = false;

	sbx_sheet_used_range(s, &rows, &cols);
	if (out_s)
		sbx_sheet_used_range(out_s, &orows, &ocols);
	mrows = rows > orows ? rows : orows;
	mcols = cols > ocols ? cols : ocols;
	walk->n = area->n = 0;
	for (size_t i = 0; i < o->n_ranges; i++) {
		const sbx_grading_range *g = &o->ranges[i];
		rect r = {g->first_row, g->first_col, g->last_row, g->last_col}, a = r;

		if (g->sheet && strcasecmp(g->sheet, sbx_sheet_name(s)) != 0)
			continue;
		ranged = true;
		if (clamp(&r, mrows, mcols))
			walk->rects[walk->n++] = r;
		if (clamp(&a, rows, cols))
			area->rects[area->n++] = a;
	}
	if (ranged)
		return;
	if (rows && cols)
		area->rects[area->n++] = (rect){0, 0, rows - 1, cols - 1};
	if (o->strict && mrows && mcols)
		walk->rects[walk->n++] = (rect){0, 0, mrows - 1, mcols - 1};
	else if (rows && cols)
		walk->rects[walk->n++] = (rect){0, 0, rows - 1, cols - 1};
}

typedef struct walk {
	const sbx_grading_opts *o;
	sbx_grade_case_result *res;
	bool count_only; /* only count the graded cells (a missing sheet) */
	uint64_t graded, mismatched;
} walk;

static int visit(walk *w, const scope *area, const char *sheet, uint32_t row, uint32_t col,
		 const sbx_cell *e, const sbx_cell *a)
{
	const sbx_grading_opts *o = w->o;
	bool e_empty = sbx_grader__is_empty(o, e), a_empty = sbx_grader__is_empty(o, a);
	/* With skip_empty off, the area's cells were all counted up front. */
	bool counted = !o->skip_empty && in_scope(area, row, col);
	sbx_cmp cmp;

	if (e_empty) {
		if (a_empty || (o->skip_empty && !o->strict))
			return 0;
		if (!counted)
			w->graded++;
	} else if (!counted) {
		w->graded++;
	}
	if (w->count_only)
		return 0;
	sbx_grader__compare(o, e, a, &cmp);
	if (cmp.match)
		return 0;
	w->mismatched++;
	return add_mismatch(w->res, sheet, row, col, e, a, &cmp, o);
}

/* Walks the non-empty cells of both sheets in row-major order, in step. */
static int walk_sheet(walk *w, const scope *sc, const scope *area, const sbx_sheet *s,
		      const sbx_sheet *out_s)
{
	const char *name = sbx_sheet_name(s);
	sbx_sheet_iter ie = SBX_SHEET_ITER_INIT, ia = SBX_SHEET_ITER_INIT;
	sbx_cell e, a;
	const sbx_cell empty = SBX_CELL_INIT;
	uint32_t er = 0, ec = 0, ar = 0, ac = 0;
	bool have_e, have_a;
	int r;

	have_e = sbx_sheet_next(s, &ie, &er, &ec, &e);
	have_a = out_s && sbx_sheet_next(out_s, &ia, &ar, &ac, &a);
	while (have_e || have_a) {
		int order = !have_a    ? -1
			    : !have_e  ? 1
			    : er != ar ? (er < ar ? -1 : 1)
			    : ec != ac ? (ec < ac ? -1 : 1)
				       : 0;
		uint32_t row = order <= 0 ? er : ar, col = order <= 0 ? ec : ac;

		if (in_scope(sc, row, col)) {
			r = visit(w, area, name, row, col, order <= 0 ? &e : &empty,
				  order >= 0 ? &a : &empty);
			if (r < 0)
				return r;
		}
		if (order <= 0)
			have_e = sbx_sheet_next(s, &ie, &er, &ec, &e);
		if (order >= 0)
			have_a = sbx_sheet_next(out_s, &ia, &ar, &ac, &a);
	}
	return 0;
}

/* The oracle sheets to grade, in order, without duplicates. */
static int pick_sheets(const sbx_grading_opts *o, const sbx_book *oracle, const sbx_sheet ***out,
		       size_t *n_out, sbx_error *err)
{
	size_t max = sbx_book_sheet_count(oracle) + 1, n = 0;
	const sbx_sheet **v = calloc(max, sizeof(*v));
	bool all_named = o->n_ranges > 0;

	if (!v)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < o->n_ranges; i++)
		all_named = all_named && o->ranges[i].sheet;
	for (size_t i = 0; i < o->n_ranges; i++)
		if (o->ranges[i].sheet && !sbx_book_find(oracle, o->ranges[i].sheet)) {
			free(v);
			return sbx_error_set(err, -EINVAL,
					     "grading: range names sheet '%s', which the oracle "
					     "does not have",
					     o->ranges[i].sheet);
		}
	if (o->n_sheets || all_named) {
		size_t count = o->n_sheets ? o->n_sheets : o->n_ranges;

		for (size_t i = 0; i < count; i++) {
			const sbx_sheet *s;
			bool dup = false;

			if (!o->n_sheets)
				s = sbx_book_find(oracle, o->ranges[i].sheet);
			else if (o->sheets[i].name)
				s = sbx_book_find(oracle, o->sheets[i].name);
			else
				s = sbx_book_sheet(oracle, (size_t)o->sheets[i].index);
			if (!s) {
				free(v);
				if (o->sheets[i].name)
					return sbx_error_set(
						err, -EINVAL,
						"grading: the oracle has no sheet '%s'",
						o->sheets[i].name);
				return sbx_error_set(err, -EINVAL,
						     "grading: the oracle has no sheet at index %d "
						     "(it has %zu)",
						     o->sheets[i].index,
						     sbx_book_sheet_count(oracle));
			}
			for (size_t j = 0; j < n && !dup; j++)
				dup = v[j] == s;
			if (!dup && n + 1 < max)
				v[n++] = s;
		}
	} else {
		for (size_t i = 0; i + 1 < max; i++)
			v[n++] = sbx_book_sheet(oracle, i);
	}
	*out = v;
	*n_out = n;
	return 0;
}

static sbx_grade_status decide(const sbx_grading_opts *o, const sbx_grade_case_result *res,
			       bool forced_fail)
{
	if (forced_fail || res->matched == 0 || res->score < o->fail_threshold)
		return SBX_GRADE_FAIL;
	if (res->score >= o->pass_threshold)
		return SBX_GRADE_PASS;
	return SBX_GRADE_PARTIAL;
}

int sbx_grade_books(const sbx_grading_opts *o, const sbx_book *output, const char *output_problem,
		    const sbx_book *oracle, sbx_grade_case_result *out, sbx_error *err)
{
	_cleanup_free_ const sbx_sheet **sheets = NULL;
	sbx_grade_case_result res = {0};
	walk w = {.o = o, .res = &res};
	bool forced_fail = !output;
	size_t n_sheets = 0;
	int r;

	r = pick_sheets(o, oracle, &sheets, &n_sheets, err);
	if (r < 0)
		return r;
	res.opts = *o;
	res.opts.sheets = NULL;
	res.opts.ranges = NULL;
	res.opts.n_sheets = res.opts.n_ranges = 0;
	res.opts.replace = NULL; /* the count is kept, not the pairs */
	res.opts.strip_chars = NULL;
	if (o->strip_chars && !(res.opts.strip_chars = strdup(o->strip_chars)))
		goto oom;
	if (!output && !(res.failure = strdup(output_problem ? output_problem : "no output")))
		goto oom;
	for (size_t i = 0; i < n_sheets; i++) {
		const sbx_sheet *s = sheets[i];
		const sbx_sheet *out_s = output ? sbx_book_find(output, sbx_sheet_name(s)) : NULL;
		uint64_t graded0 = w.graded;
		scope sc, area;

		build_scope(o, s, out_s, &sc, &area);
		if (!o->skip_empty)
			w.graded += scope_area(&area);
		if (out_s) {
			r = walk_sheet(&w, &sc, &area, s, out_s);
			if (r < 0)
				goto oom;
			continue;
		}
		/* No such sheet in the output: count what would have been graded, all wrong. */
		{
			walk dry = {.o = o, .res = &res, .count_only = true};

			r = walk_sheet(&dry, &sc, &area, s, NULL);
			if (r < 0)
				goto oom;
			if (o->skip_empty)
				w.graded += dry.graded;
			w.mismatched += w.graded - graded0;
			if (!output) {
				res.mismatches_total += w.graded - graded0;
				continue;
			}
			r = add_missing_sheet(&res, sbx_sheet_name(s), w.graded - graded0);
			if (r < 0)
				goto oom;
			if (o->missing_sheet == SBX_MISSING_SHEET_FAIL)
				forced_fail = true;
		}
	}
	if (w.graded == 0) {
		sbx_grade_case_result_clear(&res);
		return sbx_error_set(err, -ENODATA,
				     "nothing to grade: the oracle's graded scope holds no cells");
	}
	res.graded = w.graded;
	res.matched = w.graded - w.mismatched;
	res.score = (double)res.matched / (double)res.graded;
	res.status = decide(o, &res, forced_fail);
	*out = res;
	return 0;
oom:
	sbx_grade_case_result_clear(&res);
	return sbx_error_set(err, -ENOMEM, "out of memory");
}
