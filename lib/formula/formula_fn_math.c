/* SPDX-License-Identifier: MIT */
/*
 * Numeric and statistical functions (the logical ones are in
 * formula_fn_logic.c, the financial ones in formula_fn_finance.c). Rounding follows
 * LibreOffice's rtl::math: the scaled value is first taken to 15
 * significant digits, so ROUND(2.675, 2) is 2.68 as a person expects.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formula-internal.h"

#define UNUSED __attribute__((unused))

/* ---- aggregates ---- */

/* Every number of the arguments, as SUM sees them: in ranges only numbers count. */
typedef struct agg {
	double sum, comp, prod, min, max; /* comp: Neumaier compensation, as LibreOffice sums */
	uint64_t n;
	fx_err err;
	bool count_all; /* COUNTA: every non-empty value */
	bool text_zero; /* AVERAGEA-like: not used */
} agg;

static void neumaier(double *sum, double *comp, double v)
{
	double t = *sum + v;

	*comp += fabs(*sum) >= fabs(v) ? (*sum - t) + v : (v - t) + *sum;
	*sum = t;
}

static void agg_add(agg *a, double v)
{
	neumaier(&a->sum, &a->comp, v);
	a->prod *= v;
	if (a->n == 0 || v < a->min)
		a->min = v;
	if (a->n == 0 || v > a->max)
		a->max = v;
	a->n++;
}

static bool agg_cell(fx_ctx *c UNUSED, uint32_t row UNUSED, uint32_t col UNUSED, const fx_val *v,
		     void *ud)
{
	agg *a = ud;

	if (a->count_all) {
		a->n++;
		return true;
	}
	if (v->type == FX_ERR) {
		a->err = v->err;
		return false;
	}
	if (v->type == FX_NUM || v->type == FX_BOOL)
		agg_add(a, v->num);
	return true;
}

/* For COUNT, errors and text are not counted and do not fail. */
static bool count_cell(fx_ctx *c UNUSED, uint32_t row UNUSED, uint32_t col UNUSED, const fx_val *v,
		       void *ud)
{
	agg *a = ud;

	if (v->type == FX_NUM || v->type == FX_BOOL)
		a->n++;
	return true;
}

static void aggregate(fx_ctx *c, const fx_node *call, const uint32_t *args, agg *a,
		      fx_cell_visit visit)
{
	fx_val *vals = (fx_val *)sbx_fx__arena_alloc(&c->arena, call->nargs * sizeof(*vals) + 1);

	a->prod = 1;
	if (!vals) {
		c->oom = true;
		a->err = FX_E_VALUE;
		return;
	}
	/* Errors the arguments computed come first, leftmost first (see operands()). */
	for (uint32_t i = 0; i < call->nargs; i++) {
		sbx_fx__eval(c, args[i], &vals[i]);
		if (vals[i].type == FX_ERR && !a->count_all && visit != count_cell) {
			a->err = vals[i].err;
			return;
		}
	}
	/* Then what the function reads itself: the last argument first, as it pops them. */
	for (uint32_t k = call->nargs; k-- > 0 && !a->err;) {
		fx_val v = vals[k];
		double d;
		fx_err e = FX_E_NONE;

		if (v.type == FX_REF) {
			sbx_fx__each(c, &v.ref, visit, a);
			continue;
		}
		if (a->count_all) {
			a->n += v.type != FX_EMPTY || c->f->nodes[args[k]].op != N_MISSING;
			continue;
		}
		if (visit == count_cell) {
			a->n += v.type == FX_NUM || v.type == FX_BOOL ||
				(v.type == FX_STR && sbx_fx__parse_number(v.str, v.len, &d));
			continue;
		}
		if (v.type == FX_EMPTY && c->f->nodes[args[k]].op == N_MISSING)
			continue;
		if (v.type == FX_STR) {
			/* Text typed as an argument is an error (a cell's text is skipped). */
			a->err = FX_E_VALUE;
			break;
		}
		if (!sbx_fx__to_num(c, &v, &d, &e)) {
			a->err = e;
			break;
		}
		agg_add(a, d);
	}
}

enum { AGG_SUM, AGG_PRODUCT, AGG_AVERAGE, AGG_MIN, AGG_MAX, AGG_COUNT, AGG_COUNTA };

/* SUM, PRODUCT, AVERAGE, MIN, MAX, COUNT and COUNTA: the table entry's variant says which. */
static void agg_fn(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	int kind = sbx_fx__variant(call);
	agg a = {.count_all = kind == AGG_COUNTA};

	aggregate(c, call, args, &a, kind == AGG_COUNT ? count_cell : agg_cell);
	if (kind == AGG_COUNT || kind == AGG_COUNTA)
		sbx_fx__set_num(out, (double)a.n); /* errors are not counted, not raised */
	else if (a.err)
		sbx_fx__set_err(out, a.err);
	else if (kind == AGG_AVERAGE && a.n == 0)
		sbx_fx__set_err(out, FX_E_DIV0);
	else if (kind == AGG_AVERAGE)
		sbx_fx__set_num(out, (a.sum + a.comp) / (double)a.n);
	else if (kind == AGG_SUM)
		sbx_fx__set_num(out, a.sum + a.comp);
	else
		sbx_fx__set_num(out, !a.n		   ? 0
				     : kind == AGG_PRODUCT ? a.prod
				     : kind == AGG_MIN	   ? a.min
							   : a.max);
}

static bool count_nonempty(fx_ctx *c UNUSED, uint32_t row UNUSED, uint32_t col UNUSED,
			   const fx_val *v, void *ud)
{
	/* A formula's "" result counts as blank for COUNTBLANK. */
	if (!(v->type == FX_STR && v->len == 0))
		(*(uint64_t *)ud)++;
	return true;
}

static void fn_countblank(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	fx_val v;
	uint64_t n = 0;

	sbx_fx__eval(c, args[0], &v);
	if (v.type != FX_REF) {
		sbx_fx__set_err(out, v.type == FX_ERR ? v.err : FX_E_VALUE);
		return;
	}
	sbx_fx__each(c, &v.ref, count_nonempty, &n);
	uint64_t area = (uint64_t)(v.ref.r1 - v.ref.r0 + 1) * (v.ref.c1 - v.ref.c0 + 1);
	sbx_fx__set_num(out, (double)(area - n));
}

/* ---- rounding ---- */

/* The value at 15 significant digits, as rtl::math::approxValue does. */
static double approx(double x)
{
	char buf[40];

	/* A whole number of at most 15 digits is its own 15-digit text. */
	if (x == 0 || !isfinite(x) || (fabs(x) < 1e15 && x == trunc(x)))
		return x;
	snprintf(buf, sizeof(buf), "%.15g", x);
	return strtod(buf, NULL);
}

/*
 * Whether x + offset lies so near a whole number that rounding x to 15
 * digits first (approx) could move it across: approx moves x by at most
 * 5e-15 of |x|, so farther than 1e-14 of |x| (plus the addition's own
 * rounding) from any integer, floor and ceil give what they give on
 * approx(x). Saves the printf/strtod round trip on nearly every call.
 */
static bool approx_matters(double x, double offset)
{
	double b = fabs(x) + offset;

	return fabs(b - nearbyint(b)) <= fabs(x) * 1e-14 + 1e-300 || fabs(x) >= 1e15;
}

/* floor(approx(x)), as rtl::math::approxFloor. */
static double approx_floor(double x)
{
	return floor(approx_matters(x, 0) ? approx(x) : x);
}

typedef enum { ROUND_HALF, ROUND_UP, ROUND_DOWN } round_mode;

static double round_to(double x, double digits, round_mode mode)
{
	double p, v, r;
	int d = (int)trunc(fmax(-20, fmin(20, digits)));

	p = pow(10, fabs((double)d));
	v = d >= 0 ? x * p : x / p;
	v = fabs(v);
	if (approx_matters(v, mode == ROUND_HALF ? 0.5 : 0))
		v = approx(v);
	r = mode == ROUND_HALF ? floor(v + 0.5) : mode == ROUND_UP ? ceil(v) : floor(v);
	r = copysign(r, x);
	return d >= 0 ? r / p : r * p;
}

/* x at 12 significant digits, as ScInterpreter::RoundSignificant computes it. */
static double significant_12(double x)
{
	double a = fabs(x), e;

	if (a == 0 || !isfinite(a))
		return x;
	e = approx_floor(log10(a)) + 1 - 12;
	return copysign(round_to(a * pow(10, -e), 0, ROUND_HALF) * pow(10, e), x);
}

static void round_fn(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	round_mode mode = (round_mode)sbx_fx__variant(call);
	double x, d = 0;

	if (!sbx_fx__arg_num(c, args[0], &x, out))
		return;
	if (sbx_fx__given(c, call, args, 1) && !sbx_fx__arg_num(c, args[1], &d, out))
		return;
	/*
	 * ROUNDUP and ROUNDDOWN with digits below 12 first round a value under
	 * 1e12 to 12 significant digits (ROUNDUP(1.000000000001,0) is 1), as
	 * LibreOffice does against decimal-to-binary noise; not with one argument.
	 */
	if (mode != ROUND_HALF && call->nargs > 1 && trunc(d) < 12 && fabs(x) < 1e12)
		x = significant_12(x);
	sbx_fx__set_num(out, round_to(x, d, mode));
}

enum { U_INT, U_ABS, U_SIGN, U_EXP, U_SQRT, U_LN };

/* INT, ABS, SIGN, EXP, SQRT and LN of one number: the table entry's variant says which. */
static void unary_fn(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	int op = sbx_fx__variant(call);
	double x, r;

	if (!sbx_fx__arg_num(c, args[0], &x, out))
		return;
	if ((op == U_SQRT && x < 0) || (op == U_LN && x <= 0)) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	switch (op) {
	case U_INT:
		r = approx_floor(x);
		break;
	case U_ABS:
		r = fabs(x);
		break;
	case U_SIGN:
		r = x > 0 ? 1 : x < 0 ? -1 : 0;
		break;
	case U_EXP:
		r = exp(x);
		break;
	case U_SQRT:
		r = sqrt(x);
		break;
	default:
		r = log(x);
		break;
	}
	sbx_fx__set_num(out, r);
}

static void fn_mod(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	double x, y;

	if (!sbx_fx__arg_num(c, args[0], &x, out) || !sbx_fx__arg_num(c, args[1], &y, out))
		return;
	if (y == 0) {
		sbx_fx__set_err(out, FX_E_DIV0);
		return;
	}
	/* As ScMod: approxSub(x, approxFloor(x / y) * y), so noise is 0. */
	double q = approx_floor(x / y) * y;
	double r = sbx_fx__approx_add(x, -q);
	if (sbx_fx__approx_equal(r, y))
		r = 0;
	sbx_fx__set_num(out, r);
}

static void fn_power(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	double x, y, r;

	if (!sbx_fx__arg_num(c, args[0], &x, out) || !sbx_fx__arg_num(c, args[1], &y, out))
		return;
	fx_err e = FX_E_NONE;
	r = sbx_fx__pow(x, y, &e);
	if (e)
		sbx_fx__set_err(out, e);
	else
		sbx_fx__set_num(out, r);
}

static void fn_pi(fx_ctx *c UNUSED, const fx_node *call UNUSED, const uint32_t *args UNUSED,
		  fx_val *out)
{
	sbx_fx__set_num(out, M_PI);
}

/* ---- conditional aggregates ---- */

/* One (range, criterion) pair of COUNTIFS and friends. */
typedef struct cond {
	fx_rect r;
	fx_crit k;
} cond;

#define MAX_CONDS 32

/*
 * Walks the positions of the criteria ranges (same shape, clamped to what
 * the sheets use) and calls back for each that meets every criterion.
 */
typedef void (*cond_hit)(fx_ctx *c, uint32_t dr, uint32_t dc, void *ud);

static fx_err conds_walk(fx_ctx *c, const cond *cs, size_t n, cond_hit hit, void *ud,
			 uint64_t *outside)
{
	uint32_t h = cs[0].r.r1 - cs[0].r.r0 + 1, w = cs[0].r.c1 - cs[0].r.c0 + 1;
	uint32_t hmax = 0, wmax = 0;

	for (size_t i = 0; i < n; i++) {
		fx_rect cl;
		if (cs[i].r.r1 - cs[i].r.r0 + 1 != h || cs[i].r.c1 - cs[i].r.c0 + 1 != w)
			return FX_E_VALUE;
		/* Past every sheet's used range all cells are empty: that part is one case. */
		if (sbx_fx__clamp(c, &cs[i].r, &cl)) {
			if (cl.r1 - cs[i].r.r0 + 1 > hmax)
				hmax = cl.r1 - cs[i].r.r0 + 1;
			if (cl.c1 - cs[i].r.c0 + 1 > wmax)
				wmax = cl.c1 - cs[i].r.c0 + 1;
		}
	}
	*outside = (uint64_t)h * w - (uint64_t)hmax * wmax;
	for (uint32_t dr = 0; dr < hmax; dr++)
		for (uint32_t dc = 0; dc < wmax; dc++) {
			bool ok = true;
			for (size_t i = 0; i < n && ok; i++) {
				fx_val v;
				sbx_fx__cell(c, cs[i].r.sheet, cs[i].r.r0 + dr, cs[i].r.c0 + dc,
					     &v);
				ok = sbx_fx__crit_match(&cs[i].k, &v);
			}
			if (c->over)
				return FX_E_VALUE;
			if (ok)
				hit(c, dr, dc, ud);
		}
	return FX_E_NONE;
}

typedef struct cond_sum {
	fx_rect sum;
	bool has_sum;
	double total, comp;
	uint64_t n;
	fx_err err;
} cond_sum;

static void cond_add(fx_ctx *c, uint32_t dr, uint32_t dc, void *ud)
{
	cond_sum *s = ud;
	fx_val v;

	if (!s->has_sum) {
		s->n++;
		return;
	}
	sbx_fx__cell(c, s->sum.sheet, s->sum.r0 + dr, s->sum.c0 + dc, &v);
	if (v.type == FX_ERR && !s->err)
		s->err = v.err;
	if (v.type == FX_NUM || v.type == FX_BOOL) {
		neumaier(&s->total, &s->comp, v.num);
		s->n++;
	}
}

static bool arg_crit(fx_ctx *c, uint32_t node, fx_crit *out, fx_val *res)
{
	fx_val v;

	sbx_fx__eval_scalar(c, node, &v);
	if (v.type == FX_ERR) {
		*res = v;
		return false;
	}
	sbx_fx__crit_init(c, &v, out);
	return true;
}

/* Variant kind | ifs << 2. kind: 0 sum, 1 count, 2 average. ifs: the *IFS argument order. */
static void cond_fn(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	int kind = sbx_fx__variant(call) & 3;
	bool ifs = sbx_fx__variant(call) >> 2;
	cond *cs;
	cond_sum s = {.has_sum = kind != 1};
	size_t n = 0;
	uint32_t first = ifs && kind != 1 ? 1 : 0;

	if (ifs && ((call->nargs - first) % 2 || (call->nargs - first) / 2 > MAX_CONDS)) {
		sbx_fx__set_err(out, FX_E_VALUE);
		return;
	}
	/* In the arena, not on the stack: criteria are computed (recursing) while it lives. */
	cs = (cond *)(void *)sbx_fx__arena_alloc(&c->arena, (ifs ? (call->nargs - first) / 2 : 1) *
								    sizeof(*cs));
	if (!cs) {
		c->oom = true;
		sbx_fx__set_err(out, FX_E_VALUE);
		return;
	}
	if (ifs) {
		for (uint32_t i = first; i + 1 < call->nargs; i += 2, n++)
			if (!sbx_fx__arg_ref(c, args[i], &cs[n].r, out, FX_E_VALUE) ||
			    !arg_crit(c, args[i + 1], &cs[n].k, out))
				return;
		if (kind != 1 && !sbx_fx__arg_ref(c, args[0], &s.sum, out, FX_E_VALUE))
			return;
	} else {
		if (!sbx_fx__arg_ref(c, args[0], &cs[0].r, out, FX_E_VALUE) ||
		    !arg_crit(c, args[1], &cs[0].k, out))
			return;
		n = 1;
		s.sum = cs[0].r;
		if (kind != 1 && call->nargs > 2 &&
		    !sbx_fx__arg_ref(c, args[2], &s.sum, out, FX_E_VALUE))
			return;
	}
	if (s.has_sum) {
		/* The sum range takes the criteria range's shape from its top-left. */
		s.sum.r1 = s.sum.r0 + (cs[0].r.r1 - cs[0].r.r0);
		s.sum.c1 = s.sum.c0 + (cs[0].r.c1 - cs[0].r.c0);
		if (ifs && kind != 1) {
			fx_val tmp;
			if (!sbx_fx__arg_ref(c, args[0], &s.sum, &tmp, FX_E_VALUE))
				return;
			if (s.sum.r1 - s.sum.r0 != cs[0].r.r1 - cs[0].r.r0 ||
			    s.sum.c1 - s.sum.c0 != cs[0].r.c1 - cs[0].r.c0) {
				sbx_fx__set_err(out, FX_E_VALUE);
				return;
			}
		}
	}
	uint64_t outside = 0;
	fx_err e = conds_walk(c, cs, n, cond_add, &s, &outside);
	if (e || s.err) {
		sbx_fx__set_err(out, e ? e : s.err);
		return;
	}
	/* Cells past the used range are empty: LibreOffice counts them when "" matches. */
	if (kind == 1 && outside) {
		fx_val empty = {.type = FX_EMPTY};
		bool all = true;
		for (size_t i = 0; i < n && all; i++)
			all = sbx_fx__crit_match(&cs[i].k, &empty);
		if (all)
			s.n += outside;
	}
	s.total += s.comp;
	if (kind == 2 && s.n == 0)
		sbx_fx__set_err(out, FX_E_DIV0);
	else
		sbx_fx__set_num(out, kind == 0	 ? s.total
				     : kind == 1 ? (double)s.n
						 : s.total / (double)s.n);
}

static void fn_sumproduct(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	fx_rect rs[MAX_CONDS];
	uint32_t h, w, hmax = 0;
	double total = 0;

	if (call->nargs > MAX_CONDS) {
		sbx_fx__unsupported(c, out, "SUMPRODUCT with more than %d arguments", MAX_CONDS);
		return;
	}
	for (uint32_t i = 0; i < call->nargs; i++) {
		fx_val v;

		sbx_fx__eval(c, args[i], &v);
		if (v.type != FX_REF) {
			/* An array expression (A1:A3*B1:B3) needs array evaluation. */
			if (v.type == FX_ERR)
				*out = v;
			else
				sbx_fx__unsupported(c, out, "SUMPRODUCT of an expression");
			return;
		}
		rs[i] = v.ref;
	}
	h = rs[0].r1 - rs[0].r0 + 1;
	w = rs[0].c1 - rs[0].c0 + 1;
	for (uint32_t i = 0; i < call->nargs; i++) {
		fx_rect cl;
		if (rs[i].r1 - rs[i].r0 + 1 != h || rs[i].c1 - rs[i].c0 + 1 != w) {
			sbx_fx__set_err(out, FX_E_VALUE);
			return;
		}
		if (sbx_fx__clamp(c, &rs[i], &cl) && cl.r1 - rs[i].r0 + 1 > hmax)
			hmax = cl.r1 - rs[i].r0 + 1;
	}
	for (uint32_t dr = 0; dr < hmax; dr++)
		for (uint32_t dc = 0; dc < w; dc++) {
			double p = 1;
			for (uint32_t i = 0; i < call->nargs; i++) {
				fx_val v;
				sbx_fx__cell(c, rs[i].sheet, rs[i].r0 + dr, rs[i].c0 + dc, &v);
				if (v.type == FX_ERR) {
					*out = v;
					return;
				}
				p *= v.type == FX_NUM || v.type == FX_BOOL ? v.num : 0;
			}
			if (c->over) {
				sbx_fx__set_err(out, FX_E_VALUE);
				return;
			}
			total += p;
		}
	sbx_fx__set_num(out, total);
}

const fx_func sbx_fx__math_funcs[] = {
	{"SUM", 1, 255, agg_fn, AGG_SUM},
	{"PRODUCT", 1, 255, agg_fn, AGG_PRODUCT},
	{"AVERAGE", 1, 255, agg_fn, AGG_AVERAGE},
	{"MIN", 1, 255, agg_fn, AGG_MIN},
	{"MAX", 1, 255, agg_fn, AGG_MAX},
	{"COUNT", 1, 255, agg_fn, AGG_COUNT},
	{"COUNTA", 1, 255, agg_fn, AGG_COUNTA},
	{"COUNTBLANK", 1, 1, fn_countblank, 0},
	{"SUMIF", 2, 3, cond_fn, 0 | 0 << 2},
	{"SUMIFS", 3, 255, cond_fn, 0 | 1 << 2},
	{"COUNTIF", 2, 2, cond_fn, 1 | 0 << 2},
	{"COUNTIFS", 2, 255, cond_fn, 1 | 1 << 2},
	{"AVERAGEIF", 2, 3, cond_fn, 2 | 0 << 2},
	{"AVERAGEIFS", 3, 255, cond_fn, 2 | 1 << 2},
	{"SUMPRODUCT", 1, 255, fn_sumproduct, 0},
	{"ROUND", 1, 2, round_fn, ROUND_HALF},
	{"ROUNDUP", 1, 2, round_fn, ROUND_UP},
	{"ROUNDDOWN", 1, 2, round_fn, ROUND_DOWN},
	{"INT", 1, 1, unary_fn, U_INT},
	{"ABS", 1, 1, unary_fn, U_ABS},
	{"SIGN", 1, 1, unary_fn, U_SIGN},
	{"MOD", 2, 2, fn_mod, 0},
	{"POWER", 2, 2, fn_power, 0},
	{"SQRT", 1, 1, unary_fn, U_SQRT},
	{"EXP", 1, 1, unary_fn, U_EXP},
	{"LN", 1, 1, unary_fn, U_LN},
	{"PI", 0, 0, fn_pi, 0},
	{NULL, 0, 0, NULL, 0},
};
