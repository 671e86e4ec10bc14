/* SPDX-License-Identifier: MIT */
/*
 * region_summary (medium): a sales log; the agent fills a Summary sheet with
 * one row per region (alphabetical): total, number of sales, average.
 */
#include <stdio.h>

#include "../common/gen.h"

#define ROWS	80
#define REGIONS 6

GEN_TASK(region_summary, 0x726567696f6eull /* "region" */)
{
	/* Alphabetical: the order the summary lists them in. */
	static const char *const regions[REGIONS] = {"Central", "East",	 "North",
						     "South",	"Urban", "West"};
	static const char *const reps[] = {"Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus"};
	static const char *const sum_headers[] = {"Region", "Total_Amount", "Sales",
						  "Average_Amount"};
	sbx_sheet *s, *o, *ss, *so;
	sbx_book *bs = gen_book(g, "Sales", &s), *bo = gen_book(g, "Sales", &o);
	double total[REGIONS] = {0};
	int count[REGIONS] = {0};
	char day[16];

	ss = gen_sheet(g, bs, "Summary");
	so = gen_sheet(g, bo, "Summary");
	gen_str2(g, s, o, 0, 0, "Day");
	gen_str2(g, s, o, 0, 1, "Region");
	gen_str2(g, s, o, 0, 2, "Rep");
	gen_str2(g, s, o, 0, 3, "Amount");
	for (uint32_t r = 1; r <= ROWS; r++) {
		/* Every region appears: the first six rows take one each. */
		uint32_t k = r <= REGIONS ? (uint32_t)(r * 5 % REGIONS)
					  : (uint32_t)gen_int(&g->rng, 0, REGIONS - 1);
		double amount = gen_decimal(&g->rng, 20, 2500, 2);

		snprintf(day, sizeof(day), "2026-03-%02u", 1 + (r - 1) * 30 / ROWS);
		gen_str2(g, s, o, r, 0, day);
		gen_str2(g, s, o, r, 1, regions[k]);
		gen_str2(g, s, o, r, 2, reps[gen_int(&g->rng, 0, 6)]);
		gen_num2(g, s, o, r, 3, amount);
		total[k] += amount;
		count[k]++;
	}
	gen_headers(g, ss, so, sum_headers, 4, 4);
	for (uint32_t k = 0; k < REGIONS; k++) {
		gen_str(g, so, k + 1, 0, regions[k]);
		gen_num(g, so, k + 1, 1, gen_round(total[k], 2));
		gen_num(g, so, k + 1, 2, count[k]);
		gen_num(g, so, k + 1, 3, gen_round(total[k] / count[k], 2));
	}
	gen_save(g, bs, "files/sales_log.ods");
	gen_save(g, bo, "oracle/expected_summary.ods");
}
