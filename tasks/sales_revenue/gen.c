/* SPDX-License-Identifier: MIT */
/*
 * sales_revenue (easy): 50 sales lines; the agent adds
 * Revenue = round(Quantity x Unit_Price, 2) in column E.
 */
#include <stdio.h>

#include "../common/gen.h"

#define ROWS 50
#define SEED 0x73616c6573ull /* "sales" */

GEN_TASK(sales_revenue, SEED)
{
	static const char *const headers[] = {"Product", "Category", "Quantity", "Unit_Price",
					      "Revenue"};
	static const char *const categories[] = {"Electronics", "Furniture", "Office Supplies",
						 "Kitchen", "Outdoor"};
	static const char *const items[] = {"Desk Lamp",  "Office Chair", "Notebook", "Blender",
					    "Monitor",	  "Bookshelf",	  "Stapler",  "Kettle",
					    "Headphones", "Tent",	  "Printer",  "Grill"};
	sbx_error err = SBX_ERROR_INIT;
	sbx_sheet *start, *oracle;
	sbx_book *bs = gen_book(g, "Sheet1", &start), *bo = gen_book(g, "Sheet1", &oracle);

	gen_headers(g, start, oracle, headers, 4, 5);
	for (uint32_t r = 1; r <= ROWS; r++) {
		const char *item = items[gen_int(&g->rng, 0, 11)];
		const char *category = categories[gen_int(&g->rng, 0, 4)];
		double qty = (double)gen_int(&g->rng, 1, 500);
		double price = gen_decimal(&g->rng, 5.00, 999.99, 2);
		char product[64];

		snprintf(product, sizeof(product), "%s %03u", item, r);
		for (int i = 0; i < 2; i++) {
			sbx_sheet *s = i ? oracle : start;

			gen_check(g, sbx_sheet_set_string(s, r, 0, product, &err), &err, "product");
			gen_check(g, sbx_sheet_set_string(s, r, 1, category, &err), &err,
				  "category");
			gen_check(g, sbx_sheet_set_number(s, r, 2, qty, &err), &err, "quantity");
			gen_check(g, sbx_sheet_set_number(s, r, 3, price, &err), &err, "price");
		}
		gen_check(g, sbx_sheet_set_number(oracle, r, 4, gen_round(qty * price, 2), &err),
			  &err, "revenue");
	}
	gen_save(g, bs, "files/sales_data.ods");
	gen_save(g, bo, "oracle/expected_revenue.ods");
}
