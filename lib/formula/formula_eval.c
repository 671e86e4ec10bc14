/* SPDX-License-Identifier: MIT */
/*
 * The evaluator's core: cell access, operators, the walk over a rectangle
 * of cells, evaluation of a node, argument helpers (values, coercions and
 * comparisons: formula_value.c).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formula-internal.h"

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
