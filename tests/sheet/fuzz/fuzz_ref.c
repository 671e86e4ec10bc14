/* SPDX-License-Identifier: MIT */
/* libFuzzer target: A1 references, ranges, formula conversions, CSV. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/sheet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	sbx_error err = SBX_ERROR_INIT;
	sbx_range g;
	sbx_ref r;
	char *out = NULL, *back = NULL;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	if (sbx_ref_parse(s, &r, &err) == 0) {
		char buf[16];
		sbx_ref again;
		/* A parsed reference formats and parses back to itself. */
		if (sbx_ref_parse(sbx_ref_format(&r, buf), &again, NULL) < 0 ||
		    again.row != r.row || again.col != r.col)
			abort();
	}
	if (sbx_range_parse(s, &g, &err) == 0) {
		char *t = sbx_range_format(g.sheet, &g.first, &g.last);
		sbx_range again;
		if (t && (sbx_range_parse(t, &again, NULL) < 0 || again.first.row != g.first.row ||
			  again.last.col != g.last.col || strcmp(again.sheet, g.sheet) != 0))
			abort();
		free(t);
	}
	if (sbx_formula_from_ods(s, 1 << 20, &out, &err) == 0) {
		if (sbx_formula_to_ods(out, 1 << 22, &back, &err) < 0)
			abort();
		free(back);
		back = NULL;
		free(out);
		out = NULL;
	}
	if (sbx_formula_shift(s, 3, -2, 1 << 20, &out, &err) == 0)
		free(out);
	out = NULL;
	if (sbx_formula_normalize(s, 1 << 20, &out, &err) == 0)
		free(out);

	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;
	sbx_book *b = NULL;
	o.format = SBX_FORMAT_CSV;
	o.limits.max_cells = 100000;
	if (sbx_book_open_memory(data, size, "fuzz.csv", &o, &b, &err) == 0) {
		sbx_buf csv = SBX_BUF_INIT((size_t)64 << 20);
		sbx_sheet_write_csv(sbx_book_sheet(b, 0), ',', &csv, &err);
		sbx_buf_free(&csv);
		sbx_book_free(b);
	}
	free(s);
	return 0;
}
