/* SPDX-License-Identifier: MIT */
/*
 * Lookups (VLOOKUP, HLOOKUP, MATCH, INDEX, XLOOKUP, CHOOSE) and the
 * criteria of COUNTIF and friends. Text matches ignore case. Wildcards and
 * regular expressions depend on document settings LibreOffice reads from
 * the file, so a pattern character (* ? ~) makes the formula unsupported
 * instead of guessing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "formula-internal.h"

#define UNUSED __attribute__((unused))

static bool has_pattern(const fx_val *v)
{
	return v->type == FX_STR && (memchr(v->str, '*', v->len) || memchr(v->str, '?', v->len) ||
				     memchr(v->str, '~', v->len));
}

/* ---- criteria ---- */

void sbx_fx__crit_init(fx_ctx *c, const fx_val *v, fx_crit *k)
{
	static const struct {
		const char *text;
		int op;
	} ops[] = {{"<=", 3}, {">=", 5}, {"<>", 1}, {"<", 2}, {">", 4}, {"=", 0}};

	*k = (fx_crit){.v = *v};
	if (v->type == FX_NUM || v->type == FX_BOOL) {
		k->num_ok = true;
		k->num = v->num;
		return;
	}
	if (v->type != FX_STR)
		return;
	for (size_t i = 0; i < SBX_ELEMENTSOF(ops); i++) {
		size_t n = strlen(ops[i].text);
		if (v->len >= n && strncmp(v->str, ops[i].text, n) == 0) {
			k->op = ops[i].op;
			k->v.str = v->str + n;
			k->v.len = v->len - (uint32_t)n;
			break;
		}
	}
	k->num_ok = sbx_fx__parse_number(k->v.str, k->v.len, &k->num);
	if (has_pattern(&k->v)) {
		fx_val ignore;
		sbx_fx__unsupported(c, &ignore, "criteria with wildcards");
	}
}

static bool op_holds(int op, int cmp)
{
	switch (op) {
	case 0:
		return cmp == 0;
	case 1:
		return cmp != 0;
	case 2:
		return cmp < 0;
	case 3:
		return cmp <= 0;
	case 4:
		return cmp > 0;
	default:
		return cmp >= 0;
	}
}

bool sbx_fx__crit_match(const fx_crit *k, const fx_val *v)
{
	bool num = v->type == FX_NUM || v->type == FX_BOOL;

	if (v->type == FX_ERR)
		return k->op == 1; /* an error is "not equal" to anything */
	if (k->num_ok) {
		if (num)
			return op_holds(k->op, v->num < k->num ? -1 : v->num > k->num);
		if (v->type == FX_STR && k->v.type == FX_STR && (k->op == 0 || k->op == 1)) {
			/* Text "7" equals the criterion "7" as text. */
			bool eq = v->len == k->v.len && strncasecmp(v->str, k->v.str, v->len) == 0;
			return k->op == 0 ? eq : !eq;
		}
		return k->op == 1; /* other text and empty cells are "not equal" to a number */
	}
	/* Text criterion; "" or "=" alone matches empty cells. */
	if (v->type == FX_EMPTY)
		return k->op == 0 ? k->v.len == 0 : k->op == 1 ? k->v.len != 0 : false;
	if (num)
		return k->op == 1;
	if (k->op == 0 || k->op == 1) {
		bool eq = v->len == k->v.len && strncasecmp(v->str, k->v.str, v->len) == 0;
		return k->op == 0 ? eq : !eq;
	}
	int r = strncasecmp(v->str, k->v.str, v->len < k->v.len ? v->len : k->v.len);
	if (r == 0)
		r = v->len < k->v.len ? -1 : v->len > k->v.len;
	return op_holds(k->op, r < 0 ? -1 : r > 0);
}

/* ---- lookup core ---- */

static bool same_class(const fx_val *a, const fx_val *b)
{
	bool an = a->type == FX_NUM || a->type == FX_BOOL,
	     bn = b->type == FX_NUM || b->type == FX_BOOL;

	return an == bn && a->type != FX_EMPTY && b->type != FX_EMPTY && a->type != FX_ERR &&
	       b->type != FX_ERR;
}

/*
 * Position (0-based) of key in the cells of a 1-D walk from (r0,c0) along
 * (dr,dc) for n cells; -1 when absent. mode 0 exact, 1 largest <= key
 * (ascending data), -1 smallest >= key (descending data).
 */
static int64_t find_in(fx_ctx *c, uint32_t sheet, uint32_t r0, uint32_t c0, uint32_t dr,
		       uint32_t dc, uint64_t n, const fx_val *key, int mode)
{
	int64_t last = -1;
	fx_rect used;
	fx_rect all = {sheet, r0, c0, r0 + dr * (uint32_t)(n - 1), c0 + dc * (uint32_t)(n - 1)};

	/* Beyond the used range every cell is empty: never a match. */
	if (!sbx_fx__clamp(c, &all, &used))
		return -1;
	if (dr)
		n = used.r1 - r0 + 1;
	else
		n = used.c1 - c0 + 1;
	if (mode == 0 &&
	    (last = sbx_fx__index_find(c, sheet, r0, c0, dr, n, key)) != FX_INDEX_SCAN) {
		fx_val v;

		if (last == FX_INDEX_ABSENT)
			return last;
		sbx_fx__cell(c, sheet, r0 + dr * (uint32_t)last, c0 + dc * (uint32_t)last, &v);
		if (same_class(&v, key) && sbx_fx__compare(&v, key) == 0)
			return last;
		last = -1; /* a collision: scan */
	}
	for (uint64_t i = 0; i < n && !c->over; i++) {
		fx_val v;

		sbx_fx__cell(c, sheet, r0 + dr * (uint32_t)i, c0 + dc * (uint32_t)i, &v);
		if (!same_class(&v, key))
			continue;
		int cmp = sbx_fx__compare(&v, key);
		if (mode == 0) {
			if (cmp == 0)
				return (int64_t)i;
		} else if (mode > 0) {
			if (cmp > 0)
				break;
			last = (int64_t)i;
		} else {
			if (cmp < 0)
				break;
			last = (int64_t)i;
		}
	}
	return last;
}

static bool lookup_key(fx_ctx *c, uint32_t node, fx_val *key, fx_val *out)
{
	sbx_fx__eval_scalar(c, node, key);
	if (key->type == FX_ERR) {
		*out = *key;
		return false;
	}
	if (key->type == FX_EMPTY) {
		sbx_fx__set_err(out, FX_E_NA);
		return false;
	}
	return true;
}

static void vh_lookup(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	bool vertical = sbx_fx__variant(call);
	fx_val key;
	fx_rect t;
	double idx, approx_d = 1;
	int64_t pos;

	if (!lookup_key(c, args[0], &key, out) || !sbx_fx__arg_ref(c, args[1], &t, out, FX_E_NA) ||
	    !sbx_fx__arg_num(c, args[2], &idx, out))
		return;
	if (sbx_fx__given(c, call, args, 3)) {
		bool b;

		if (!sbx_fx__arg_bool(c, args[3], &b, out))
			return;
		approx_d = b;
	}
	if (approx_d == 0 && has_pattern(&key)) {
		sbx_fx__unsupported(c, out, "%s with wildcards", vertical ? "VLOOKUP" : "HLOOKUP");
		return;
	}
	idx = trunc(idx);
	uint32_t span = vertical ? t.c1 - t.c0 + 1 : t.r1 - t.r0 + 1;
	if (idx < 1) {
		sbx_fx__set_err(out, FX_E_VALUE);
		return;
	}
	if (idx > span) {
		sbx_fx__set_err(out, FX_E_REF);
		return;
	}
	if (vertical)
		pos = find_in(c, t.sheet, t.r0, t.c0, 1, 0, (uint64_t)t.r1 - t.r0 + 1, &key,
			      approx_d != 0);
	else
		pos = find_in(c, t.sheet, t.r0, t.c0, 0, 1, (uint64_t)t.c1 - t.c0 + 1, &key,
			      approx_d != 0);
	if (pos < 0) {
		sbx_fx__set_err(out, FX_E_NA);
		return;
	}
	if (vertical)
		sbx_fx__cell(c, t.sheet, t.r0 + (uint32_t)pos, t.c0 + (uint32_t)idx - 1, out);
	else
		sbx_fx__cell(c, t.sheet, t.r0 + (uint32_t)idx - 1, t.c0 + (uint32_t)pos, out);
	if (out->type == FX_EMPTY)
		sbx_fx__set_num(out, 0);
}

static void fn_match(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	fx_val key;
	fx_rect t;
	double type = 1;
	int64_t pos;

	if (!lookup_key(c, args[0], &key, out) || !sbx_fx__arg_ref(c, args[1], &t, out, FX_E_NA))
		return;
	if (sbx_fx__given(c, call, args, 2) && !sbx_fx__arg_num(c, args[2], &type, out))
		return;
	if (t.r0 != t.r1 && t.c0 != t.c1) {
		sbx_fx__set_err(out, FX_E_NA);
		return;
	}
	int mode = type > 0 ? 1 : type < 0 ? -1 : 0;
	if (mode == 0 && has_pattern(&key)) {
		sbx_fx__unsupported(c, out, "MATCH with wildcards");
		return;
	}
	if (t.c0 == t.c1)
		pos = find_in(c, t.sheet, t.r0, t.c0, 1, 0, (uint64_t)t.r1 - t.r0 + 1, &key, mode);
	else
		pos = find_in(c, t.sheet, t.r0, t.c0, 0, 1, (uint64_t)t.c1 - t.c0 + 1, &key, mode);
	if (pos < 0)
		sbx_fx__set_err(out, FX_E_NA);
	else
		sbx_fx__set_num(out, (double)pos + 1);
}

static void fn_index(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	fx_rect t;
	double row = 0, col = 0;
	uint32_t h, w;

	if (!sbx_fx__arg_ref(c, args[0], &t, out, FX_E_NA))
		return;
	if (sbx_fx__given(c, call, args, 1) && !sbx_fx__arg_num(c, args[1], &row, out))
		return;
	if (sbx_fx__given(c, call, args, 2) && !sbx_fx__arg_num(c, args[2], &col, out))
		return;
	if (call->nargs > 3) {
		sbx_fx__unsupported(c, out, "INDEX over several areas");
		return;
	}
	h = t.r1 - t.r0 + 1;
	w = t.c1 - t.c0 + 1;
	row = trunc(row);
	col = trunc(col);
	/* One index into a single row picks the column. */
	if (call->nargs == 2 && h == 1) {
		col = row;
		row = 0;
	}
	if (row < 0 || col < 0 || row > h || col > w) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	fx_rect r = t;
	if (row > 0)
		r.r0 = r.r1 = t.r0 + (uint32_t)row - 1;
	if (col > 0)
		r.c0 = r.c1 = t.c0 + (uint32_t)col - 1;
	*out = (fx_val){.type = FX_REF, .ref = r};
}

static void fn_xlookup(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	fx_val key;
	fx_rect l, rr;
	double mode = 0, search = 1;
	int64_t pos;

	if (!lookup_key(c, args[0], &key, out) || !sbx_fx__arg_ref(c, args[1], &l, out, FX_E_NA) ||
	    !sbx_fx__arg_ref(c, args[2], &rr, out, FX_E_NA))
		return;
	if ((sbx_fx__given(c, call, args, 4) && !sbx_fx__arg_num(c, args[4], &mode, out)) ||
	    (sbx_fx__given(c, call, args, 5) && !sbx_fx__arg_num(c, args[5], &search, out)))
		return;
	if (mode != 0 || search != 1 || has_pattern(&key)) {
		sbx_fx__unsupported(c, out, "XLOOKUP with a match or search mode");
		return;
	}
	bool vertical = l.c0 == l.c1;
	if (!vertical && l.r0 != l.r1) {
		sbx_fx__set_err(out, FX_E_VALUE);
		return;
	}
	if ((vertical && (rr.r1 - rr.r0 != l.r1 - l.r0 || rr.c0 != rr.c1)) ||
	    (!vertical && (rr.c1 - rr.c0 != l.c1 - l.c0 || rr.r0 != rr.r1))) {
		sbx_fx__unsupported(c, out, "XLOOKUP returning an array");
		return;
	}
	if (vertical)
		pos = find_in(c, l.sheet, l.r0, l.c0, 1, 0, (uint64_t)l.r1 - l.r0 + 1, &key, 0);
	else
		pos = find_in(c, l.sheet, l.r0, l.c0, 0, 1, (uint64_t)l.c1 - l.c0 + 1, &key, 0);
	if (pos < 0) {
		if (sbx_fx__given(c, call, args, 3))
			sbx_fx__eval(c, args[3], out);
		else
			sbx_fx__set_err(out, FX_E_NA);
		return;
	}
	fx_rect r = rr;
	if (vertical)
		r.r0 = r.r1 = rr.r0 + (uint32_t)pos;
	else
		r.c0 = r.c1 = rr.c0 + (uint32_t)pos;
	*out = (fx_val){.type = FX_REF, .ref = r};
}

static void fn_choose(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	double i;

	if (!sbx_fx__arg_num(c, args[0], &i, out))
		return;
	i = trunc(i);
	if (i < 1 || i >= call->nargs) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	sbx_fx__eval(c, args[(uint32_t)i], out);
}

static void fn_rows_cols(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	bool rows = sbx_fx__variant(call);
	fx_rect t;

	if (sbx_fx__arg_ref(c, args[0], &t, out, FX_E_NA))
		sbx_fx__set_num(out, rows ? t.r1 - t.r0 + 1 : t.c1 - t.c0 + 1);
}

const fx_func sbx_fx__lookup_funcs[] = {
	{"VLOOKUP", 3, 4, vh_lookup, 1},
	{"HLOOKUP", 3, 4, vh_lookup, 0},
	{"MATCH", 2, 3, fn_match, 0},
	{"INDEX", 1, 4, fn_index, 0},
	{"XLOOKUP", 3, 6, fn_xlookup, 0},
	{"CHOOSE", 2, 255, fn_choose, 0},
	{"ROWS", 1, 1, fn_rows_cols, 1},
	{"COLUMNS", 1, 1, fn_rows_cols, 0},
	{NULL, 0, 0, NULL, 0},
};
