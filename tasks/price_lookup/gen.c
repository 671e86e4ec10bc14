/* SPDX-License-Identifier: MIT */
/*
 * price_lookup (medium): orders on one sheet, a price list (in another
 * order) on a second; the agent looks each order's price up and totals it.
 */
#include <stdio.h>

#include "../common/gen.h"

#define ORDERS 60
#define SKUS   25

GEN_TASK(price_lookup, 0x6c6f6f6b7570ull /* "lookup" */)
{
	static const char *const kinds[] = {"Cable", "Adapter", "Charger", "Case", "Stand"};
	sbx_sheet *s, *o, *ps, *po;
	sbx_book *bs = gen_book(g, "Orders", &s), *bo = gen_book(g, "Orders", &o);
	double price[SKUS];
	uint32_t order[SKUS];
	char sku[32], desc[64];

	ps = gen_sheet(g, bs, "Prices");
	po = gen_sheet(g, bo, "Prices");
	gen_str2(g, ps, po, 0, 0, "SKU");
	gen_str2(g, ps, po, 0, 1, "Description");
	gen_str2(g, ps, po, 0, 2, "Unit_Price");
	for (uint32_t i = 0; i < SKUS; i++)
		price[i] = gen_decimal(&g->rng, 1.50, 249.99, 2);
	gen_shuffle(&g->rng, order, SKUS);
	for (uint32_t r = 0; r < SKUS; r++) {
		uint32_t i = order[r];

		snprintf(sku, sizeof(sku), "SKU-%04u", 1000 + i * 37);
		snprintf(desc, sizeof(desc), "%s model %u", kinds[i % 5], i + 1);
		gen_str2(g, ps, po, r + 1, 0, sku);
		gen_str2(g, ps, po, r + 1, 1, desc);
		gen_num2(g, ps, po, r + 1, 2, price[i]);
	}
	gen_str2(g, s, o, 0, 0, "Order_ID");
	gen_str2(g, s, o, 0, 1, "SKU");
	gen_str2(g, s, o, 0, 2, "Quantity");
	gen_str(g, o, 0, 3, "Unit_Price");
	gen_str(g, o, 0, 4, "Line_Total");
	for (uint32_t r = 1; r <= ORDERS; r++) {
		uint32_t i = (uint32_t)gen_int(&g->rng, 0, SKUS - 1);
		double q = (double)gen_int(&g->rng, 1, 40);
		char id[32];

		snprintf(id, sizeof(id), "ORD-%05u", 20000 + r * 7);
		snprintf(sku, sizeof(sku), "SKU-%04u", 1000 + i * 37);
		gen_str2(g, s, o, r, 0, id);
		gen_str2(g, s, o, r, 1, sku);
		gen_num2(g, s, o, r, 2, q);
		gen_num(g, o, r, 3, price[i]);
		gen_num(g, o, r, 4, gen_round(q * price[i], 2));
	}
	gen_save(g, bs, "files/orders.ods");
	gen_save(g, bo, "oracle/expected_orders.ods");
}
