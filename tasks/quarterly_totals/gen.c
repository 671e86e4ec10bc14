/* SPDX-License-Identifier: MIT */
/*
 * quarterly_totals: eight regions x four quarters of sales. The agent adds a
 * Total column (F) and a Total row (10) as formulas (=SUM(...)); the grader
 * requires a formula wherever the oracle has one, so typed-in numbers fail.
 */
#include <stdio.h>

#include "../common/gen.h"

#define REGIONS 8
#define SEED	0x71756172746572ull /* "quarter" */

GEN_TASK(quarterly_totals, SEED)
{
	static const char *const headers[] = {"Region", "Q1", "Q2", "Q3", "Q4", "Total"};
	static const char *const regions[] = {"North",	 "South",   "East",   "West",
					      "Central", "Coastal", "Alpine", "Islands"};
	sbx_error err = SBX_ERROR_INIT;
	double v[REGIONS][4], col_total[4] = {0}, grand = 0;
	sbx_sheet *start, *oracle;
	sbx_book *bs = gen_book(g, "Sales", &start), *bo = gen_book(g, "Sales", &oracle);
	char f[64];

	gen_headers(g, start, oracle, headers, 5, 6);
	for (uint32_t r = 0; r < REGIONS; r++) {
		double row_total = 0;

		for (int i = 0; i < 2; i++)
			gen_check(g,
				  sbx_sheet_set_string(i ? oracle : start, r + 1, 0, regions[r],
						       &err),
				  &err, "region");
		for (uint32_t q = 0; q < 4; q++) {
			v[r][q] = (double)gen_int(&g->rng, 1000, 99999);
			row_total += v[r][q];
			col_total[q] += v[r][q];
			for (int i = 0; i < 2; i++)
				gen_check(g,
					  sbx_sheet_set_number(i ? oracle : start, r + 1, q + 1,
							       v[r][q], &err),
					  &err, "value");
		}
		grand += row_total;
		snprintf(f, sizeof(f), "=SUM(B%u:E%u)", r + 2, r + 2);
		gen_formula(g, oracle, r + 1, 5, f, row_total);
	}
	for (int i = 0; i < 2; i++)
		gen_check(g,
			  sbx_sheet_set_string(i ? oracle : start, REGIONS + 1, 0, "Total", &err),
			  &err, "total label");
	for (uint32_t q = 0; q < 4; q++) {
		snprintf(f, sizeof(f), "=SUM(%c2:%c%u)", 'B' + q, 'B' + q, REGIONS + 1);
		gen_formula(g, oracle, REGIONS + 1, q + 1, f, col_total[q]);
	}
	snprintf(f, sizeof(f), "=SUM(F2:F%u)", REGIONS + 1);
	gen_formula(g, oracle, REGIONS + 1, 5, f, grand);
	gen_save(g, bs, "files/quarterly_sales.ods");
	gen_save(g, bo, "oracle/expected_totals.ods");
}
