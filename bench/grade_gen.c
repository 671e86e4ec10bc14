/* SPDX-License-Identifier: MIT */
/*
 * Writes a workbook of ROWS x COLS cells (default 100000 x 10 = 1,000,000)
 * for the grading benchmark: a header row of strings, then numbers with
 * 2 decimals, every fifth column a short string. Deterministic.
 * Usage: grade_gen OUT.ods [ROWS [COLS]]
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_book.h"
#include "sbx/sheet.h"

int main(int argc, char **argv)
{
	sbx_error err = SBX_ERROR_INIT;
	uint64_t state = 0x6772616465ull;
	uint32_t rows = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 100000;
	uint32_t cols = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 10;
	sbx_book *b = NULL;
	sbx_sheet *s = NULL;
	char text[32];

	if (argc < 2 || rows < 2 || cols < 1 || cols > 1000) {
		fprintf(stderr, "Usage: %s OUT.ods [ROWS [COLS]]\n", argv[0]);
		return 2;
	}
	if (bench_header_book(cols, &b, &s, &err) < 0)
		goto fail;
	for (uint32_t r = 1; r < rows; r++)
		for (uint32_t c = 0; c < cols; c++) {
			int rc;

			state = state * 6364136223846793005ull + 1442695040888963407ull;
			if (c % 5 == 4) {
				snprintf(text, sizeof(text), "item-%llu",
					 (unsigned long long)(state >> 54));
				rc = sbx_sheet_set_string(s, r, c, text, &err);
			} else {
				rc = sbx_sheet_set_number(s, r, c, (double)(state >> 40) / 100.0,
							  &err);
			}
			if (rc < 0)
				goto fail;
		}
	if (sbx_book_save(b, argv[1], SBX_FORMAT_ODS, &err) < 0)
		goto fail;
	sbx_book_free(b);
	return 0;
fail:
	fprintf(stderr, "grade_gen: %s\n", sbx_error_message(&err));
	sbx_book_free(b);
	return 1;
}
