/* SPDX-License-Identifier: MIT */
/*
 * Financial functions: PMT, FV, PV, IPMT, PPMT, annuities computed the way
 * LibreOffice's ScGetPMT / ScGetFV do.
 */
#include <math.h>
#include <stdbool.h>

#include "formula-internal.h"

static double fin_pmt(double r, double n, double pv, double fv, bool type)
{
	if (r == 0)
		return -(pv + fv) / n;
	if (type)
		return -((fv + pv * exp(n * log1p(r))) * r / (expm1((n + 1) * log1p(r)) - r));
	return -((fv + pv * exp(n * log1p(r))) * r / expm1(n * log1p(r)));
}

static double fin_fv(double r, double n, double pmt, double pv, bool type)
{
	if (r == 0)
		return -(pv + pmt * n);
	double t = pow(1 + r, n);
	if (type)
		return -(pv * t + pmt * (1 + r) * (t - 1) / r);
	return -(pv * t + pmt * (t - 1) / r);
}

static double fin_ipmt(double r, double per, double n, double pv, double fv, bool type)
{
	double pmt = fin_pmt(r, n, pv, fv, type), i;

	if (per == 1)
		i = type ? 0 : -pv;
	else if (type)
		i = fin_fv(r, per - 2, pmt, pv, true) - pmt;
	else
		i = fin_fv(r, per - 1, pmt, pv, false);
	return i * r;
}

/* Reads numeric arguments; missing optional ones are 0. */
static bool num_args(fx_ctx *c, const fx_node *call, const uint32_t *args, double *v, uint32_t n,
		     fx_val *out)
{
	for (uint32_t i = 0; i < n; i++) {
		v[i] = 0;
		if (sbx_fx__given(c, call, args, i) && !sbx_fx__arg_num(c, args[i], &v[i], out))
			return false;
	}
	return true;
}

static void fn_pmt(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	double v[5];

	if (!num_args(c, call, args, v, 5, out))
		return;
	if (v[1] == 0) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	sbx_fx__set_num(out, fin_pmt(v[0], v[1], v[2], v[3], v[4] != 0));
}

static void fn_fv(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	double v[5];

	if (num_args(c, call, args, v, 5, out))
		sbx_fx__set_num(out, fin_fv(v[0], v[1], v[2], v[3], v[4] != 0));
}

static void fn_pv(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	double v[5], r, t;

	if (!num_args(c, call, args, v, 5, out))
		return;
	r = v[0];
	if (r == 0) {
		sbx_fx__set_num(out, -(v[3] + v[2] * v[1]));
		return;
	}
	t = pow(1 + r, v[1]);
	sbx_fx__set_num(out, -(v[3] + v[2] * (1 + r * (v[4] != 0)) * (t - 1) / r) / t);
}

static void ipmt_ppmt(fx_ctx *c, const fx_node *call, const uint32_t *args, fx_val *out)
{
	bool ppmt = sbx_fx__variant(call);
	double v[6];

	if (!num_args(c, call, args, v, 6, out))
		return;
	if (v[1] < 1 || v[1] > v[2] || v[2] == 0) {
		sbx_fx__set_err(out, FX_E_ARG);
		return;
	}
	double i = fin_ipmt(v[0], v[1], v[2], v[3], v[4], v[5] != 0);
	sbx_fx__set_num(out, ppmt ? fin_pmt(v[0], v[2], v[3], v[4], v[5] != 0) - i : i);
}

const fx_func sbx_fx__finance_funcs[] = {
	{"PMT", 3, 5, fn_pmt, 0},     {"FV", 3, 5, fn_fv, 0},	    {"PV", 3, 5, fn_pv, 0},
	{"IPMT", 4, 6, ipmt_ppmt, 0}, {"PPMT", 4, 6, ipmt_ppmt, 1}, {NULL, 0, 0, NULL, 0},
};
