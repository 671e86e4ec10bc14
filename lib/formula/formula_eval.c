/* SPDX-License-Identifier: MIT */
/*
 * The evaluator's core: cell access, coercions as LibreOffice does them
 * (text converts to a number only when unambiguous; booleans are numbers),
 * operators, comparisons, and the walk over a rectangle of cells.
 */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formula-internal.h"
#include "sbx/cleanup.h"

static const char *const err_texts[] = {
	[FX_E_NONE] = "",	  [FX_E_NULL] = "#NULL!",  [FX_E_DIV0] = "#DIV/0!",
	[FX_E_VALUE] = "#VALUE!", [FX_E_REF] = "#REF!",	   [FX_E_NAME] = "#NAME?",
	[FX_E_NUM] = "#NUM!",	  [FX_E_NA] = "#N/A",	   [FX_E_ARG] = "Err:502",
	[FX_E_CYCLE] = "Err:522", [FX_E_UNSUP] = "#NAME?",
};

const char *sbx_fx__err_text(fx_err e)
{
	return (unsigned)e < SBX_ELEMENTSOF(err_texts) ? err_texts[e] : "#VALUE!";
}

fx_err sbx_fx__err_parse(const char *text)
{
	for (unsigned e = FX_E_NULL; e <= FX_E_CYCLE; e++)
		if (text && strcasecmp(text, err_texts[e]) == 0)
			return (fx_err)e;
	/* "Err:5xx" codes LibreOffice writes for other failures, and anything else. */
	return FX_E_VALUE;
}

/* ---- arena ---- */

#define ARENA_CHUNK (64u << 10)
#define ARENA_MAX   ((uint64_t)256 << 20)

char *sbx_fx__arena_alloc(fx_arena *a, size_t n)
{
	if (a->bytes + n > ARENA_MAX)
		return NULL;
	if (a->n == 0 || a->used + n > a->size) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		if (!sbx_sheet__chunk_push(&a->chunks, &a->n, &a->cap, size))
			return NULL;
		a->used = 0;
		a->size = size;
	}
	char *p = a->chunks[a->n - 1] + a->used;
	a->used += (n + 7) & ~(size_t)7;
	if (a->used > a->size)
		a->used = a->size;
	a->bytes += n;
	return p;
}

void sbx_fx__arena_reset(fx_arena *a)
{
	/* Keep the first chunk: most cells need no more. */
	for (size_t i = 1; i < a->n; i++)
		free(a->chunks[i]);
	a->n = a->n ? 1 : 0;
	a->used = 0;
	a->size = a->n ? ARENA_CHUNK : 0;
	a->bytes = 0;
}

void sbx_fx__arena_free(fx_arena *a)
{
	sbx_strv_free_n(a->chunks, a->n);
	*a = (fx_arena){0};
}

/* ---- results ---- */

void sbx_fx__set_num(fx_val *v, double n)
{
	if (!isfinite(n)) {
		sbx_fx__set_err(v, FX_E_NUM);
		return;
	}
	*v = (fx_val){.type = FX_NUM, .num = n == 0 ? 0.0 : n};
}

void sbx_fx__set_bool(fx_val *v, bool b)
{
	*v = (fx_val){.type = FX_BOOL, .num = b};
}

void sbx_fx__set_err(fx_val *v, fx_err e)
{
	*v = (fx_val){.type = FX_ERR, .err = e};
}

char *sbx_fx__str_alloc(fx_ctx *c, size_t len, fx_val *v)
{
	char *p = sbx_fx__arena_alloc(&c->arena, len + 1);

	if (!p) {
		c->oom = true;
		sbx_fx__set_err(v, FX_E_VALUE);
	}
	return p;
}

void sbx_fx__set_str(fx_ctx *c, fx_val *v, const char *s, size_t len)
{
	char *p;

	if (len > FX_MAX_STRING) {
		sbx_fx__set_err(v, FX_E_VALUE);
		return;
	}
	p = sbx_fx__str_alloc(c, len, v);
	if (!p)
		return;
	memcpy(p, s, len);
	p[len] = '\0';
	*v = (fx_val){.type = FX_STR, .str = p, .len = (uint32_t)len};
}

void sbx_fx__unsupported(fx_ctx *c, fx_val *v, const char *fmt, ...)
{
	if (!c->unsupported) {
		va_list ap;

		c->unsupported = true;
		va_start(ap, fmt);
		vsnprintf(c->why, sizeof(c->why), fmt, ap);
		va_end(ap);
	}
	sbx_fx__set_err(v, FX_E_UNSUP);
}

/* ---- cells ---- */

static const scell *find_cell(const sbx_sheet *s, uint32_t row, uint32_t col)
{
	const srow *r;
	uint32_t lo = 0, hi;

	if (row >= s->nrows)
		return NULL;
	r = &s->rows[row];
	hi = r->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (r->cells[mid].col < col)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->cells[lo].col == col ? &r->cells[lo] : NULL;
}

static void cell_value(fx_ctx *c, uint32_t sheet, uint32_t row, uint32_t col, const scell *sc,
		       fx_val *out)
{
	if (!sc) {
		*out = (fx_val){.type = FX_EMPTY};
		return;
	}
	if (sc->formula && c->formula_cell && c->formula_cell(c, sheet, row, col, sc, out))
		return;
	switch ((sbx_cell_kind)sc->kind) {
	case SBX_CELL_EMPTY:
		*out = (fx_val){.type = FX_EMPTY};
		return;
	case SBX_CELL_STRING: {
		const char *s = sbx_sheet__pool_str(&c->book->pool, sc->v.str);
		*out = (fx_val){.type = FX_STR, .str = s, .len = c->book->pool.lens[sc->v.str]};
		return;
	}
	case SBX_CELL_ERROR:
		sbx_fx__set_err(out,
				sbx_fx__err_parse(sbx_sheet__pool_str(&c->book->pool, sc->v.str)));
		return;
	default:
		*out = (fx_val){.type = FX_NUM, .num = sc->v.num};
		return;
	}
}

void sbx_fx__cell(fx_ctx *c, uint32_t sheet, uint32_t row, uint32_t col, fx_val *out)
{
	const sbx_sheet *s;

	sbx_fx__step(c, 1);
	if (sheet >= c->book->nsheets) {
		sbx_fx__set_err(out, FX_E_REF);
		return;
	}
	s = c->book->sheets[sheet];
	cell_value(c, sheet, row, col, find_cell(s, row, col), out);
}

bool sbx_fx__clamp(fx_ctx *c, const fx_rect *r, fx_rect *out)
{
	uint32_t rows, cols;

	if (r->sheet >= c->book->nsheets)
		return false;
	if (!c->used) {
		c->used = calloc(c->book->nsheets, sizeof(*c->used));
		c->n_used = c->used ? c->book->nsheets : 0;
	}
	if (r->sheet < c->n_used && c->used[r->sheet].known) {
		rows = c->used[r->sheet].rows;
		cols = c->used[r->sheet].cols;
	} else {
		sbx_sheet_used_range(c->book->sheets[r->sheet], &rows, &cols);
		if (r->sheet < c->n_used)
			c->used[r->sheet] = (struct fx_used){true, rows, cols};
	}
	if (rows == 0 || r->r0 >= rows || r->c0 >= cols)
		return false;
	*out = *r;
	if (out->r1 >= rows)
		out->r1 = rows - 1;
	if (out->c1 >= cols)
		out->c1 = cols - 1;
	return true;
}

void sbx_fx__each(fx_ctx *c, const fx_rect *rect, fx_cell_visit fn, void *ud)
{
	const sbx_sheet *s;
	uint32_t last;

	if (rect->sheet >= c->book->nsheets)
		return;
	s = c->book->sheets[rect->sheet];
	last = rect->r1 < s->nrows ? rect->r1 : (s->nrows ? s->nrows - 1 : 0);
	for (uint32_t row = rect->r0; row <= last && row < s->nrows; row++) {
		const srow *r = &s->rows[row];
		uint32_t lo = 0, hi = r->n;

		if (!sbx_fx__step(c, 1))
			return;
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (r->cells[mid].col < rect->c0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (uint32_t i = lo; i < r->n && r->cells[i].col <= rect->c1; i++) {
			fx_val v;

			if (!sbx_fx__step(c, 1))
				return;
			cell_value(c, rect->sheet, row, r->cells[i].col, &r->cells[i], &v);
			if (v.type == FX_EMPTY)
				continue;
			if (!fn(c, row, r->cells[i].col, &v, ud))
				return;
		}
	}
}

void sbx_fx__deref(fx_ctx *c, const fx_val *ref, fx_val *out)
{
	const fx_rect *r = &ref->ref;

	if (ref->type != FX_REF) {
		*out = *ref;
		return;
	}
	if (r->r0 == r->r1 && r->c0 == r->c1)
		sbx_fx__cell(c, r->sheet, r->r0, r->c0, out);
	else if (r->c0 == r->c1 && c->row >= r->r0 && c->row <= r->r1)
		sbx_fx__cell(c, r->sheet, c->row, r->c0, out);
	else if (r->r0 == r->r1 && c->col >= r->c0 && c->col <= r->c1)
		sbx_fx__cell(c, r->sheet, r->r0, c->col, out);
	else
		sbx_fx__set_err(out, FX_E_VALUE);
}

/* ---- coercions ---- */

bool sbx_fx__parse_number(const char *s, uint32_t len, double *out)
{
	char buf[64], *end;
	double v;

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (strspn(buf, "0123456789+-.eE") == len) {
		/* strtod would take hex, inf and nan: the set above rules them out. */
		v = strtod(buf, &end);
		if (*end || end == buf || !isfinite(v))
			return false;
		*out = v;
		return true;
	}
	/* An ISO 8601 date is unambiguous too. */
	if (len == 10 && buf[4] == '-' && buf[7] == '-' && sbx_sheet_parse_date(buf, &v) == 0) {
		*out = v;
		return true;
	}
	return false;
}

/* A reference's value where one is wanted (sbx_fx__deref); one still a reference is #VALUE!. */
static bool deref_cell(fx_ctx *c, const fx_val *v, fx_val *out, fx_err *err)
{
	sbx_fx__deref(c, v, out);
	if (out->type != FX_REF)
		return true;
	*err = FX_E_VALUE;
	return false;
}

bool sbx_fx__to_num(fx_ctx *c, const fx_val *v, double *out, fx_err *err)
{
	fx_val tmp;

	switch (v->type) {
	case FX_NUM:
	case FX_BOOL:
		*out = v->num;
		return true;
	case FX_EMPTY:
		*out = 0;
		return true;
	case FX_STR:
		if (sbx_fx__parse_number(v->str, v->len, out))
			return true;
		*err = FX_E_VALUE;
		return false;
	case FX_ERR:
		*err = v->err;
		return false;
	case FX_REF:
		return deref_cell(c, v, &tmp, err) && sbx_fx__to_num(c, &tmp, out, err);
	}
	*err = FX_E_VALUE;
	return false;
}

bool sbx_fx__to_bool(fx_ctx *c, const fx_val *v, bool *out, fx_err *err)
{
	double d;

	if (v->type == FX_STR) {
		if (v->len == 4 && strcasecmp(v->str, "TRUE") == 0) {
			*out = true;
			return true;
		}
		if (v->len == 5 && strcasecmp(v->str, "FALSE") == 0) {
			*out = false;
			return true;
		}
		*err = FX_E_VALUE;
		return false;
	}
	if (!sbx_fx__to_num(c, v, &d, err))
		return false;
	*out = d != 0;
	return true;
}

bool sbx_fx__to_str(fx_ctx *c, const fx_val *v, const char **out, uint32_t *len, fx_err *err)
{
	char tmp[40];
	fx_val d, s;

	switch (v->type) {
	case FX_STR:
		*out = v->str;
		*len = v->len;
		return true;
	case FX_EMPTY:
		*out = "";
		*len = 0;
		return true;
	case FX_BOOL:
		/* LibreOffice's booleans are numbers: TRUE&"" is "1". */
		*out = v->num ? "1" : "0";
		*len = 1;
		return true;
	case FX_NUM:
		sbx_fx__format_general(v->num, tmp);
		sbx_fx__set_str(c, &s, tmp, strlen(tmp));
		if (s.type != FX_STR) {
			*err = s.err;
			return false;
		}
		*out = s.str;
		*len = s.len;
		return true;
	case FX_ERR:
		*err = v->err;
		return false;
	case FX_REF:
		return deref_cell(c, v, &d, err) && sbx_fx__to_str(c, &d, out, len, err);
	}
	*err = FX_E_VALUE;
	return false;
}

double sbx_fx__pow(double x, double y, fx_err *err)
{
	double r;

	/* LibreOffice: 0^0 is 1, a pole or a complex result is #NUM!. */
	r = pow(x, y);
	if (!isfinite(r))
		*err = FX_E_NUM;
	return r;
}

/* rtl::math::approxEqual: equal up to the last 4-5 bits. */
bool sbx_fx__approx_equal(double a, double b)
{
	const double e48 = 1.0 / (16777216.0 * 16777216.0);
	double d;

	if (a == b)
		return true;
	if (a == 0 || b == 0)
		return false;
	d = fabs(a - b);
	return isfinite(d) && d < fabs(a) * e48 && d < fabs(b) * e48;
}

/* LibreOffice's + and -: a sum that cancels to rounding noise is 0 (0.1+0.2-0.3). */
double sbx_fx__approx_add(double a, double b)
{
	if (((a < 0 && b > 0) || (b < 0 && a > 0)) && sbx_fx__approx_equal(a, -b))
		return 0.0;
	return a + b;
}

/* ---- comparison ---- */

int sbx_fx__compare(const fx_val *a, const fx_val *b)
{
	bool an = a->type == FX_NUM || a->type == FX_BOOL,
	     bn = b->type == FX_NUM || b->type == FX_BOOL;

	/* An empty cell is 0 against a number and "" against text. */
	if (a->type == FX_EMPTY && b->type == FX_EMPTY)
		return 0;
	if (a->type == FX_EMPTY)
		return bn ? (0 < b->num ? -1 : 0 > b->num) : (b->len ? -1 : 0);
	if (b->type == FX_EMPTY)
		return an ? (a->num < 0 ? -1 : a->num > 0) : (a->len ? 1 : 0);
	if (an && bn)
		return a->num < b->num ? -1 : a->num > b->num;
	if (an)
		return -1; /* numbers sort before text */
	if (bn)
		return 1;
	int r = strcasecmp(a->str, b->str);
	return r < 0 ? -1 : r > 0;
}

int sbx_fx__compare_case(const fx_val *a, const fx_val *b)
{
	int r = sbx_fx__compare(a, b);

	/*
	 * Equal but for case: the collator's tertiary order puts lower case
	 * first ("abc" < "ABC").
	 */
	if (r == 0 && a->type == FX_STR && b->type == FX_STR) {
		int s = strcmp(a->str, b->str);
		r = s > 0 ? -1 : s < 0;
	}
	return r;
}

/* ---- operators ---- */

/*
 * Both operands of a binary operator, computed (left first) by chain(), with
 * LibreOffice's error order: an error a subexpression computed was raised
 * while it ran (the left one first); an error read from a cell, or a
 * conversion, only when the operator pops its operands, right first.
 * Returns false with *err set when an operand's error decides; a and b are
 * then scalars.
 */
static bool operands(fx_ctx *c, const fx_val *x, const fx_val *y, fx_val *a, fx_val *b, fx_err *err)
{
	if (x->type == FX_ERR || y->type == FX_ERR) {
		*err = x->type == FX_ERR ? x->err : y->err;
		return false;
	}
	sbx_fx__deref(c, x, a);
	sbx_fx__deref(c, y, b);
	if (b->type == FX_ERR || a->type == FX_ERR) {
		*err = b->type == FX_ERR ? b->err : a->err;
		return false;
	}
	return true;
}

static void arith(fx_ctx *c, const fx_node *n, const fx_val *x0, const fx_val *y0, fx_val *out)
{
	fx_val a, b;
	double x, y, r;
	fx_err e = FX_E_NONE;

	/* Conversions happen as the operator pops its operands: right first. */
	if (!operands(c, x0, y0, &a, &b, &e) || !sbx_fx__to_num(c, &b, &y, &e) ||
	    !sbx_fx__to_num(c, &a, &x, &e)) {
		sbx_fx__set_err(out, e);
		return;
	}
	switch (n->op) {
	case N_ADD:
		r = sbx_fx__approx_add(x, y);
		break;
	case N_SUB:
		r = sbx_fx__approx_add(x, -y);
		break;
	case N_MUL:
		r = x * y;
		break;
	case N_DIV:
		if (y == 0) {
			sbx_fx__set_err(out, FX_E_DIV0);
			return;
		}
		r = x / y;
		break;
	default: /* N_POW */
		r = sbx_fx__pow(x, y, &e);
		if (e) {
			sbx_fx__set_err(out, e);
			return;
		}
		break;
	}
	sbx_fx__set_num(out, r);
}

static void compare_op(fx_ctx *c, const fx_node *n, const fx_val *x, const fx_val *y, fx_val *out)
{
	fx_val a, b;
	int r;

	fx_err e = FX_E_NONE;

	if (!operands(c, x, y, &a, &b, &e)) {
		sbx_fx__set_err(out, e);
		return;
	}
	r = c->case_sensitive ? sbx_fx__compare_case(&a, &b) : sbx_fx__compare(&a, &b);
	switch (n->op) {
	case N_EQ:
		sbx_fx__set_bool(out, r == 0);
		break;
	case N_NE:
		sbx_fx__set_bool(out, r != 0);
		break;
	case N_LT:
		sbx_fx__set_bool(out, r < 0);
		break;
	case N_LE:
		sbx_fx__set_bool(out, r <= 0);
		break;
	case N_GT:
		sbx_fx__set_bool(out, r > 0);
		break;
	default:
		sbx_fx__set_bool(out, r >= 0);
		break;
	}
}

static void concat(fx_ctx *c, const fx_val *x0, const fx_val *y0, fx_val *out)
{
	fx_val a, b;
	const char *x, *y;
	uint32_t lx, ly;
	fx_err e = FX_E_NONE;
	char *p;

	if (!operands(c, x0, y0, &a, &b, &e) || !sbx_fx__to_str(c, &b, &y, &ly, &e) ||
	    !sbx_fx__to_str(c, &a, &x, &lx, &e)) {
		sbx_fx__set_err(out, e);
		return;
	}
	if ((size_t)lx + ly > FX_MAX_STRING) {
		sbx_fx__set_err(out, FX_E_VALUE);
		return;
	}
	p = sbx_fx__str_alloc(c, (size_t)lx + ly, out);
	if (!p)
		return;
	memcpy(p, x, lx);
	memcpy(p + lx, y, ly);
	p[lx + ly] = '\0';
	*out = (fx_val){.type = FX_STR, .str = p, .len = lx + ly};
}

static void range_op(fx_ctx *c, const fx_node *n, fx_val *out)
{
	fx_val a, b;

	sbx_fx__eval(c, n->a, &a);
	sbx_fx__eval(c, n->b, &b);
	if (a.type == FX_ERR || b.type == FX_ERR) {
		sbx_fx__set_err(out, a.type == FX_ERR ? a.err : b.err);
		return;
	}
	if (a.type != FX_REF || b.type != FX_REF || a.ref.sheet != b.ref.sheet) {
		sbx_fx__set_err(out, FX_E_VALUE);
		return;
	}
	*out = a;
	out->ref.r0 = a.ref.r0 < b.ref.r0 ? a.ref.r0 : b.ref.r0;
	out->ref.c0 = a.ref.c0 < b.ref.c0 ? a.ref.c0 : b.ref.c0;
	out->ref.r1 = a.ref.r1 > b.ref.r1 ? a.ref.r1 : b.ref.r1;
	out->ref.c1 = a.ref.c1 > b.ref.c1 ? a.ref.c1 : b.ref.c1;
}

static bool is_binary(fx_op op)
{
	return op >= N_ADD && op <= N_GE;
}

/* Binary operator n on its operands' values (x left, y right). */
static void binary(fx_ctx *c, const fx_node *n, const fx_val *x, const fx_val *y, fx_val *out)
{
	switch (n->op) {
	case N_CAT:
		concat(c, x, y, out);
		return;
	case N_EQ:
	case N_NE:
	case N_LT:
	case N_LE:
	case N_GT:
	case N_GE:
		compare_op(c, n, x, y, out);
		return;
	default:
		arith(c, n, x, y, out);
		return;
	}
}

/*
 * A chain of binary operators: the parser nests =1+2*3-4&"x" down its left
 * operands, so a formula of 4,000 terms is 4,000 nodes deep there. It is
 * computed as a loop, bottom up, so its length costs no stack: only the
 * right operands recurse (from here, so an operator adds no frames of its
 * own), and they nest no deeper than the parser allowed.
 */
static void chain(fx_ctx *c, uint32_t top, fx_val *out)
{
	const fx_node *nodes = c->f->nodes;
	uint32_t len = 0, k, i;
	uint32_t *spine;
	fx_val acc, y;

	for (i = top; is_binary(nodes[i].op); i = nodes[i].a)
		len++;
	if (len == 1) {
		sbx_fx__eval(c, nodes[top].a, &acc);
		sbx_fx__eval(c, nodes[top].b, &y);
		binary(c, &nodes[top], &acc, &y, out);
		return;
	}
	/* The top node was counted by sbx_fx__eval. */
	spine = (uint32_t *)(void *)sbx_fx__arena_alloc(&c->arena, (size_t)len * sizeof(*spine));
	if (!spine)
		c->oom = true;
	if (!sbx_fx__step(c, len - 1) || c->oom) {
		sbx_fx__set_err(out, FX_E_VALUE);
		return;
	}
	for (k = 0, i = top; k < len; k++, i = nodes[i].a)
		spine[k] = i;
	sbx_fx__eval(c, nodes[spine[len - 1]].a, &acc);
	for (k = len; k-- > 0;) {
		fx_val v;

		sbx_fx__eval(c, nodes[spine[k]].b, &y);
		binary(c, &nodes[spine[k]], &acc, &y, &v);
		acc = v;
	}
	*out = acc;
}

static void eval_node(fx_ctx *c, uint32_t i, fx_val *out)
{
	const fx_node *n = &c->f->nodes[i];
	fx_val a;
	double x;
	fx_err e = FX_E_NONE;

	if (!sbx_fx__step(c, 1) || c->oom) {
		sbx_fx__set_err(out, FX_E_VALUE);
		return;
	}
	switch (n->op) {
	case N_NUM:
		sbx_fx__set_num(out, n->num);
		return;
	case N_BOOL:
		sbx_fx__set_bool(out, n->num != 0);
		return;
	case N_STR:
		*out = (fx_val){.type = FX_STR, .str = n->str, .len = n->len};
		return;
	case N_ERR:
		sbx_fx__set_err(out, n->err);
		return;
	case N_MISSING:
		*out = (fx_val){.type = FX_EMPTY};
		return;
	case N_REF:
		if (n->ref_bad || n->ref.sheet >= c->book->nsheets)
			sbx_fx__set_err(out, FX_E_REF);
		else
			*out = (fx_val){.type = FX_REF, .ref = n->ref};
		return;
	case N_RANGE:
		range_op(c, n, out);
		return;
	case N_CALL: {
		/* The parser stores only indexes sbx_fx__func_find returned. */
		const fx_func *fn = sbx_fx__func(n->fn);

		assert(fn);
		/* No arguments anywhere in the formula: args is NULL. */
		fn->fn(c, n, c->f->args ? c->f->args + n->a : NULL, out);
		return;
	}
	case N_NEG:
	case N_PLUS:
	case N_PCT:
		sbx_fx__eval_scalar(c, n->a, &a);
		if (n->op == N_PLUS && a.type != FX_ERR) {
			*out = a; /* unary plus changes nothing, text stays text */
			return;
		}
		if (!sbx_fx__to_num(c, &a, &x, &e)) {
			sbx_fx__set_err(out, e);
			return;
		}
		sbx_fx__set_num(out, n->op == N_NEG ? -x : n->op == N_PCT ? x / 100 : x);
		return;
	default:
		chain(c, i, out);
		return;
	}
}

void sbx_fx__eval(fx_ctx *c, uint32_t i, fx_val *out)
{
	/*
	 * The parser's bounds keep a formula far below this; the guard keeps
	 * the stack bounded should nodes ever come from elsewhere.
	 */
	if (c->depth >= FX_MAX_EVAL_DEPTH) {
		sbx_fx__unsupported(c, out, "formula nested too deeply to evaluate");
		return;
	}
	c->depth++;
	eval_node(c, i, out);
	c->depth--;
}

void sbx_fx__eval_scalar(fx_ctx *c, uint32_t i, fx_val *out)
{
	fx_val v;

	sbx_fx__eval(c, i, &v);
	if (v.type == FX_REF)
		sbx_fx__deref(c, &v, out);
	else
		*out = v;
}

/* ---- arguments ---- */

/*
 * Evaluates node to a scalar and converts it: to a number into num when num is
 * set, else to a boolean into flag. A failed conversion leaves its error in res.
 */
static bool arg_scalar(fx_ctx *c, uint32_t node, double *num, bool *flag, fx_val *res)
{
	fx_val v;
	fx_err e = FX_E_NONE;
	bool ok;

	sbx_fx__eval_scalar(c, node, &v);
	ok = num ? sbx_fx__to_num(c, &v, num, &e) : sbx_fx__to_bool(c, &v, flag, &e);
	if (!ok)
		sbx_fx__set_err(res, e);
	return ok;
}

bool sbx_fx__arg_num(fx_ctx *c, uint32_t node, double *out, fx_val *res)
{
	return arg_scalar(c, node, out, NULL, res);
}

bool sbx_fx__arg_bool(fx_ctx *c, uint32_t node, bool *out, fx_val *res)
{
	return arg_scalar(c, node, NULL, out, res);
}

bool sbx_fx__arg_ref(fx_ctx *c, uint32_t node, fx_rect *out, fx_val *res, fx_err not_ref)
{
	fx_val v;

	sbx_fx__eval(c, node, &v);
	if (v.type == FX_REF) {
		*out = v.ref;
		return true;
	}
	sbx_fx__set_err(res, v.type == FX_ERR ? v.err : not_ref);
	return false;
}

bool sbx_fx__given(fx_ctx *c, const fx_node *call, const uint32_t *args, uint32_t i)
{
	return i < call->nargs && c->f->nodes[args[i]].op != N_MISSING;
}
