/* SPDX-License-Identifier: MIT */
/* The workbook the generators (grade_gen, sheet_bench gen) start from. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include "sbx/sheet.h"

/* A new ODS book, one sheet "Sheet1" whose row 1 is the header Column_1..Column_COLS. */
static inline int bench_header_book(uint32_t cols, sbx_book **b, sbx_sheet **s, sbx_error *err)
{
	char text[32];

	if (sbx_book_new(SBX_FORMAT_ODS, b, err) < 0 ||
	    sbx_book_add_sheet(*b, "Sheet1", SIZE_MAX, s, err) < 0)
		return -1;
	for (uint32_t c = 0; c < cols; c++) {
		snprintf(text, sizeof(text), "Column_%u", c + 1);
		if (sbx_sheet_set_string(*s, 0, c, text, err) < 0)
			return -1;
	}
	return 0;
}
