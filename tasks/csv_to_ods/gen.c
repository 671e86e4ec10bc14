/* SPDX-License-Identifier: MIT */
/*
 * csv_to_ods (easy): weather readings arrive as CSV; the agent writes an ODS
 * workbook with the data and a Celsius column.
 */
#include <stdio.h>

#include "../common/gen.h"

#define ROWS 30

GEN_TASK(csv_to_ods, 0x637376746f6f6473ull /* "csvtoods" */)
{
	static const char *const stations[] = {"Oslo", "Bergen", "Tromso", "Stavanger", "Bodo"};
	sbx_sheet *s, *o;
	sbx_book *bs = gen_book(g, "readings", &s), *bo = gen_book(g, "Readings", &o);

	gen_str2(g, s, o, 0, 0, "Station");
	gen_str2(g, s, o, 0, 1, "Day");
	gen_str2(g, s, o, 0, 2, "Temp_F");
	gen_str(g, o, 0, 3, "Temp_C");
	for (uint32_t r = 1; r <= ROWS; r++) {
		double f = gen_decimal(&g->rng, -10, 95, 1);

		gen_str2(g, s, o, r, 0, stations[gen_int(&g->rng, 0, 4)]);
		gen_num2(g, s, o, r, 1, r);
		gen_num2(g, s, o, r, 2, f);
		gen_num(g, o, r, 3, gen_round((f - 32) * 5 / 9, 1));
	}
	gen_save(g, bs, "files/readings.csv");
	gen_save(g, bo, "oracle/readings.ods");
}
