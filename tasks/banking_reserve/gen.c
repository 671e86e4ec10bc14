/* SPDX-License-Identifier: MIT */
/*
 * banking_reserve: 100 periods of cash flows with rate points known every
 * tenth period; the agent adds Required_Reserve = cash flow x rate, where the
 * rate is the known point or the linear interpolation between the nearest
 * known periods (not rounded), and the reserve is rounded to 2 decimals.
 */
#include "../common/gen.h"

#define PERIODS 100
#define SEED	0x62616e6b696e67ull /* "banking" */

static bool known(int period)
{
	return period == 1 || period % 10 == 0;
}

GEN_TASK(banking_reserve, SEED)
{
	static const char *const headers[] = {"Period", "Cash_Flow_Amount", "Rate_Point",
					      "Required_Reserve"};
	sbx_error err = SBX_ERROR_INIT;
	double cf[PERIODS + 1], rate[PERIODS + 1];
	sbx_sheet *start, *oracle;
	sbx_book *bs = gen_book(g, "Sheet1", &start), *bo = gen_book(g, "Sheet1", &oracle);

	for (int p = 1; p <= PERIODS; p++) {
		cf[p] = gen_decimal(&g->rng, 10000, 500000, 2);
		rate[p] = known(p) ? gen_decimal(&g->rng, 0.02, 0.15, 4) : 0;
	}
	gen_headers(g, start, oracle, headers, 3, 4);
	for (int p = 1; p <= PERIODS; p++) {
		int lo = p, hi = p;
		double r;

		while (!known(lo))
			lo--;
		while (!known(hi))
			hi++;
		r = lo == hi ? rate[p] : rate[lo] + (rate[hi] - rate[lo]) * (p - lo) / (hi - lo);
		for (int i = 0; i < 2; i++) {
			sbx_sheet *s = i ? oracle : start;

			gen_check(g, sbx_sheet_set_number(s, (uint32_t)p, 0, p, &err), &err,
				  "period");
			gen_check(g, sbx_sheet_set_number(s, (uint32_t)p, 1, cf[p], &err), &err,
				  "cf");
			if (known(p))
				gen_check(g, sbx_sheet_set_number(s, (uint32_t)p, 2, rate[p], &err),
					  &err, "rate");
		}
		gen_check(
			g,
			sbx_sheet_set_number(oracle, (uint32_t)p, 3, gen_round(cf[p] * r, 2), &err),
			&err, "reserve");
	}
	gen_save(g, bs, "files/cash_flows.ods");
	gen_save(g, bo, "oracle/expected_reserves.ods");
}
