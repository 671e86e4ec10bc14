/* SPDX-License-Identifier: MIT */
/* What the fuzz harnesses that read spreadsheets share (header only: no Check). */
#pragma once

#include <stdlib.h>

#include "sbx/sheet.h"

/* Open options with small limits, so each run stays fast and its memory bounded. */
static inline sbx_sheet_open_options fuzz_sheet_options(sbx_sheet_format format, size_t max_cells,
							size_t max_string)
{
	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;

	o.format = format;
	o.limits.max_cells = max_cells;
	o.limits.max_unpacked = 64 << 20;
	o.limits.max_string = max_string;
	return o;
}

/* Reads data as format; whatever was read must write and read back (else abort). */
static inline void fuzz_sheet_round_trip(const void *data, size_t len, const char *name,
					 sbx_sheet_format format)
{
	sbx_sheet_open_options o = fuzz_sheet_options(format, 100000, 1 << 16);
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;

	if (sbx_book_open_memory(data, len, name, &o, &b, &err) == 0) {
		sbx_buf out = SBX_BUF_INIT((size_t)256 << 20);
		if (sbx_book_save_memory(b, format, &out, &err) == 0) {
			sbx_book *back = NULL;
			if (sbx_book_open_memory(out.data, out.len, name, &o, &back, &err) < 0)
				abort();
			sbx_book_free(back);
		}
		sbx_buf_free(&out);
		sbx_book_free(b);
	}
}
