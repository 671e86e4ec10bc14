/* SPDX-License-Identifier: MIT */
/*
 * Logical functions: IF, IFERROR, IFNA, AND, OR, NOT, TRUE, FALSE, the
 * IS* tests, NA.
 */
#include <stdbool.h>

#include "formula-internal.h"

#define UNUSED __attribute__((unused))

static void fn_if(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	bool b;

	if (!sbx_fx__arg_bool(c, args[0], &b, out))
		return;
	if (call->nargs < (b ? 2 : 3)) {
		sbx_fx__set_bool(out, b); /* no branch given: the condition itself */
		return;
	}
	{
		uint32_t k = args[b ? 1 : 2];
		if (c->f->nodes[k].op == N_MISSING)
			sbx_fx__set_num(out, 0);
		else
			sbx_fx__eval(c, k, out);
	}
}

static void fn_iferror(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	sbx_fx__eval_scalar(c, args[0], out);
	if (out->type == FX_ERR && out->err != FX_E_UNSUP)
		sbx_fx__eval_scalar(c, args[1], out);
	if (out->type == FX_EMPTY)
		sbx_fx__set_num(out, 0);
}

static void fn_ifna(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	sbx_fx__eval_scalar(c, args[0], out);
	if (out->type == FX_ERR && out->err == FX_E_NA)
		sbx_fx__eval_scalar(c, args[1], out);
	if (out->type == FX_EMPTY)
		sbx_fx__set_num(out, 0);
}

typedef struct logic {
	bool any, all, seen;
	fx_err err;
} logic;

static bool logic_cell(fx_ctx *c UNUSED, uint32_t row UNUSED, uint32_t col UNUSED, const fx_val *v,
		       void *ud)
{
	logic *l = ud;

	if (v->type == FX_ERR) {
		l->err = v->err;
		return false;
	}
	if (v->type == FX_NUM || v->type == FX_BOOL) {
		l->seen = true;
		l->any |= v->num != 0;
		l->all &= v->num != 0;
	}
	return true;
}

static void logic_fn(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	bool is_and = sbx_fx__variant(call);
	logic l = {.all = true};

	for (uint32_t i = 0; i < call->nargs && !l.err; i++) {
		fx_val v;
		bool b;
		fx_err e = FX_E_NONE;

		sbx_fx__eval(c, args[i], &v);
		if (v.type == FX_REF) {
			sbx_fx__each(c, &v.ref, logic_cell, &l);
			continue;
		}
		if (!sbx_fx__to_bool(c, &v, &b, &e)) {
			l.err = e;
			break;
		}
		l.seen = true;
		l.any |= b;
		l.all &= b;
	}
	if (l.err)
		sbx_fx__set_err(out, l.err);
	else if (!l.seen)
		sbx_fx__set_err(out, FX_E_VALUE);
	else
		sbx_fx__set_bool(out, is_and ? l.all : l.any);
}

static void fn_not(fx_ctx *c, const fx_node *call UNUSED, const uint32_t *args, fx_val *out)
{
	bool b;

	if (sbx_fx__arg_bool(c, args[0], &b, out))
		sbx_fx__set_bool(out, !b);
}

static void fn_true(fx_ctx *c UNUSED, const fx_node *call UNUSED, const uint32_t *args UNUSED,
		    fx_val *out)
{
	sbx_fx__set_bool(out, true);
}

static void fn_false(fx_ctx *c UNUSED, const fx_node *call UNUSED, const uint32_t *args UNUSED,
		     fx_val *out)
{
	sbx_fx__set_bool(out, false);
}

static void is_fn(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	int which = sbx_fx__variant(call);
	fx_val v;

	sbx_fx__eval_scalar(c, args[0], &v);
	if (v.type == FX_ERR && v.err == FX_E_UNSUP) {
		*out = v;
		return;
	}
	switch (which) {
	case 0:
		sbx_fx__set_bool(out, v.type == FX_ERR);
		break;
	case 1:
		sbx_fx__set_bool(out, v.type == FX_ERR && v.err == FX_E_NA);
		break;
	case 2:
		sbx_fx__set_bool(out, v.type == FX_NUM || v.type == FX_BOOL);
		break;
	case 3:
		sbx_fx__set_bool(out, v.type == FX_STR);
		break;
	default:
		sbx_fx__set_bool(out, v.type == FX_EMPTY);
		break;
	}
}

static void fn_na(fx_ctx *c UNUSED, const fx_node *call UNUSED, const uint32_t *args UNUSED,
		  fx_val *out)
{
	sbx_fx__set_err(out, FX_E_NA);
}

const fx_func sbx_fx__logic_funcs[] = {
	{"IF", 1, 3, fn_if, 0},	      {"IFERROR", 2, 2, fn_iferror, 0}, {"IFNA", 2, 2, fn_ifna, 0},
	{"AND", 1, 255, logic_fn, 1}, {"OR", 1, 255, logic_fn, 0},	{"NOT", 1, 1, fn_not, 0},
	{"TRUE", 0, 0, fn_true, 0},   {"FALSE", 0, 0, fn_false, 0},	{"ISERROR", 1, 1, is_fn, 0},
	{"ISNA", 1, 1, is_fn, 1},     {"ISNUMBER", 1, 1, is_fn, 2},	{"ISTEXT", 1, 1, is_fn, 3},
	{"ISBLANK", 1, 1, is_fn, 4},  {"NA", 0, 0, fn_na, 0},		{NULL, 0, 0, NULL, 0},
};
