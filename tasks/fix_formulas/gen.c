/* SPDX-License-Identifier: MIT */
/*
 * fix_formulas (medium): a budget whose tax formulas are broken in four ways
 * (wrong row, a typed-in rate, text instead of a formula, a relative
 * reference that slid off the rate cell) and whose totals miss rows. The
 * agent repairs them; the grader wants formulas and their values.
 */
#include <stdio.h>

#include "../common/gen.h"

#define ITEMS 8

GEN_TASK(fix_formulas, 0x666978666f726dull /* "fixform" */)
{
	static const char *const items[] = {"Rent",	"Salaries", "Software",	 "Travel",
					    "Training", "Hardware", "Marketing", "Insurance"};
	sbx_sheet *s, *o;
	sbx_book *bs = gen_book(g, "Budget", &s), *bo = gen_book(g, "Budget", &o);
	double amount[ITEMS + 2], rate = gen_decimal(&g->rng, 0.05, 0.25, 2);
	double sum_b = 0, sum_c = 0, broken_b = 0, broken_c = 0, c_start[ITEMS] = {0};
	char f[64];

	gen_str2(g, s, o, 0, 0, "Item");
	gen_str2(g, s, o, 0, 1, "Amount");
	gen_str2(g, s, o, 0, 2, "With_Tax");
	gen_str2(g, s, o, 0, 5, "Tax_Rate");
	gen_num2(g, s, o, 0, 6, rate);
	for (uint32_t i = 0; i < ITEMS; i++) {
		/* Distinct amounts, so a formula on the wrong row has the wrong value. */
		amount[i] = (double)(i + 1) * 1000 + gen_decimal(&g->rng, 0, 900, 2);
		gen_str2(g, s, o, i + 1, 0, items[i]);
		gen_num2(g, s, o, i + 1, 1, amount[i]);
	}
	for (uint32_t i = 0; i < ITEMS; i++) {
		uint32_t row = i + 2; /* 1-based */
		double good = amount[i] * (1 + rate);

		snprintf(f, sizeof(f), "=B%u*(1+$G$1)", row);
		gen_formula(g, o, i + 1, 2, f, good);
		sum_b += amount[i];
		sum_c += good;
		switch (i % 4) {
		case 0: { /* the row below's amount */
			uint32_t other = i + 1 < ITEMS ? i + 1 : i - 1;

			snprintf(f, sizeof(f), "=B%u*(1+$G$1)", other + 2);
			gen_formula(g, s, i + 1, 2, f, amount[other] * (1 + rate));
			c_start[i] = amount[other] * (1 + rate);
			break;
		}
		case 1: /* a typed-in rate that is not the sheet's */
			snprintf(f, sizeof(f), "=B%u*1.02", row);
			gen_formula(g, s, i + 1, 2, f, amount[i] * 1.02);
			c_start[i] = amount[i] * 1.02;
			break;
		case 2: /* the formula typed as text */
			snprintf(f, sizeof(f), "B%u*(1+G1)", row);
			gen_str(g, s, i + 1, 2, f);
			break;
		default: /* copied down without $: the rate cell slid to the empty G(row-1) */
			snprintf(f, sizeof(f), "=B%u*(1+G%u)", row, row - 1);
			gen_formula(g, s, i + 1, 2, f, amount[i]);
			c_start[i] = amount[i];
			break;
		}
		if (i < ITEMS - 1)
			broken_b += amount[i];
		if (i < ITEMS / 2) /* C10 sums only the first half; text counts as 0 */
			broken_c += c_start[i];
	}
	gen_str2(g, s, o, ITEMS + 1, 0, "Total");
	snprintf(f, sizeof(f), "=SUM(B2:B%u)", ITEMS); /* misses the last item */
	gen_formula(g, s, ITEMS + 1, 1, f, broken_b);
	snprintf(f, sizeof(f), "=SUM(C2:C%u)", ITEMS / 2 + 1);
	gen_formula(g, s, ITEMS + 1, 2, f, broken_c);
	snprintf(f, sizeof(f), "=SUM(B2:B%u)", ITEMS + 1);
	gen_formula(g, o, ITEMS + 1, 1, f, sum_b);
	snprintf(f, sizeof(f), "=SUM(C2:C%u)", ITEMS + 1);
	gen_formula(g, o, ITEMS + 1, 2, f, sum_c);
	gen_save(g, bs, "files/budget.ods");
	gen_save(g, bo, "oracle/expected_budget.ods");
}
