/* SPDX-License-Identifier: MIT */
/*
 * inventory_xlsx (easy): an XLSX stock list; the agent adds a reorder flag
 * and the stock value, and saves XLSX again.
 */
#include <stdio.h>

#include "../common/gen.h"

#define ROWS 40

GEN_TASK(inventory_xlsx, 0x696e76656e74ull /* "invent" */)
{
	static const char *const headers[] = {"Item",	   "On_Hand", "Reorder_Level",
					      "Unit_Cost", "Status",  "Stock_Value"};
	static const char *const items[] = {"Bolt",   "Nut",	"Washer", "Bracket", "Hinge",
					    "Spring", "Gasket", "Valve",  "Clamp",   "Pulley"};
	sbx_sheet *s, *o;
	sbx_book *bs = gen_book(g, "Stock", &s), *bo = gen_book(g, "Stock", &o);

	gen_headers(g, s, o, headers, 4, 6);
	for (uint32_t r = 1; r <= ROWS; r++) {
		char item[64];
		double on_hand = (double)gen_int(&g->rng, 0, 400);
		double level = (double)gen_int(&g->rng, 20, 200);
		double cost = gen_decimal(&g->rng, 0.25, 89.99, 2);

		snprintf(item, sizeof(item), "%s %c-%02u", items[gen_int(&g->rng, 0, 9)],
			 (char)('A' + gen_int(&g->rng, 0, 5)), r);
		gen_str2(g, s, o, r, 0, item);
		gen_num2(g, s, o, r, 1, on_hand);
		gen_num2(g, s, o, r, 2, level);
		gen_num2(g, s, o, r, 3, cost);
		gen_str(g, o, r, 4, on_hand < level ? "REORDER" : "OK");
		gen_num(g, o, r, 5, gen_round(on_hand * cost, 2));
	}
	gen_save(g, bs, "files/inventory.xlsx");
	gen_save(g, bo, "oracle/expected_inventory.xlsx");
}
