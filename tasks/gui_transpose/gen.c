/* SPDX-License-Identifier: MIT */
/*
 * gui_transpose (easy, GUI): a metrics table to copy, transposed, onto a new
 * sheet (in Calc: Copy, then Paste Special with Transpose).
 */
#include <stdio.h>

#include "../common/gen.h"

#define METRICS 3
#define MONTHS	7

GEN_TASK(gui_transpose, 0x7472616e7370ull /* "transp" */)
{
	static const char *const metrics[] = {"Visitors", "Signups", "Orders"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul"};
	sbx_sheet *s, *o, *t;
	sbx_book *bs = gen_book(g, "Data", &s), *bo = gen_book(g, "Data", &o);

	t = gen_sheet(g, bo, "Transposed");
	gen_str2(g, s, o, 0, 0, "Metric");
	gen_str(g, t, 0, 0, "Metric");
	for (uint32_t m = 0; m < MONTHS; m++) {
		gen_str2(g, s, o, 0, m + 1, months[m]);
		gen_str(g, t, m + 1, 0, months[m]);
	}
	for (uint32_t k = 0; k < METRICS; k++) {
		gen_str2(g, s, o, k + 1, 0, metrics[k]);
		gen_str(g, t, 0, k + 1, metrics[k]);
		for (uint32_t m = 0; m < MONTHS; m++) {
			double v = (double)gen_int(&g->rng, 10, 5000 / (k + 1));

			gen_num2(g, s, o, k + 1, m + 1, v);
			gen_num(g, t, m + 1, k + 1, v);
		}
	}
	gen_save(g, bs, "files/metrics.ods");
	gen_save(g, bo, "oracle/expected_metrics.ods");
}
