/* SPDX-License-Identifier: MIT */
/*
 * Helper for the LibreOffice round-trip test (test_libreoffice.py):
 *   sheet_tool sample OUT        write the sample book (format from OUT's extension)
 *   sheet_tool dump FILE         print every non-empty cell as a TSV line:
 *                                sheet, A1, kind, value (%.17g or text, escaped), formula
 *   sheet_tool copy IN OUT       open IN, save as OUT (format from OUT's extension)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
/* Outside a Check runner the ck_assert macros cannot report: use plain checks. */
#undef ck_assert_int_eq
#undef ck_assert_msg
#undef ck_assert_str_eq
#undef ck_assert_ptr_nonnull
#define ck_assert_int_eq(a, b)	 tool_check((a) == (b), #a)
#define ck_assert_msg(e, ...)	 tool_check(!!(e), #e)
#define ck_assert_str_eq(a, b)	 tool_check(strcmp((a), (b)) == 0, #a)
#define ck_assert_ptr_nonnull(p) tool_check((p) != NULL, #p)

static void tool_check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "sheet_tool: check failed: %s\n", what);
		exit(1);
	}
}

#include "helpers.h"

static void put_escaped(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\n", stdout);
		else if (*s == '\t')
			fputs("\\t", stdout);
		else if (*s == '\\')
			fputs("\\\\", stdout);
		else
			putchar(*s);
	}
}

static int dump(const char *path)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;

	if (sbx_book_open(path, NULL, &b, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	for (size_t i = 0; i < sbx_book_sheet_count(b); i++) {
		const sbx_sheet *s = sbx_book_sheet(b, i);
		sbx_sheet_iter it = SBX_SHEET_ITER_INIT;
		uint32_t r, c;
		sbx_cell cell;
		while (sbx_sheet_next(s, &it, &r, &c, &cell)) {
			char col[4];
			put_escaped(sbx_sheet_name(s));
			printf("\t%s%u\t%s\t", sbx_ref_col_name(c, col), r + 1,
			       sbx_cell_kind_name(cell.kind));
			if (cell.text)
				put_escaped(cell.text);
			else if (cell.kind != SBX_CELL_EMPTY)
				printf("%.17g", cell.number);
			putchar('\t');
			if (cell.formula)
				put_escaped(cell.formula);
			putchar('\n');
		}
	}
	sbx_book_free(b);
	return 0;
}

int main(int argc, char **argv)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;
	int r = 0;

	if (argc == 3 && strcmp(argv[1], "sample") == 0) {
		b = sample_book(SBX_FORMAT_AUTO);
		r = sbx_book_save(b, argv[2], SBX_FORMAT_AUTO, &err);
	} else if (argc == 3 && strcmp(argv[1], "dump") == 0) {
		return dump(argv[2]);
	} else if (argc == 4 && strcmp(argv[1], "copy") == 0) {
		r = sbx_book_open(argv[2], NULL, &b, &err);
		if (r == 0) {
			const char *dot = strrchr(argv[3], '.');
			sbx_sheet_format f = SBX_FORMAT_ODS;
			if (dot && strcmp(dot, ".xlsx") == 0)
				f = SBX_FORMAT_XLSX;
			else if (dot && strcmp(dot, ".csv") == 0)
				f = SBX_FORMAT_CSV;
			r = sbx_book_save(b, argv[3], f, &err);
		}
	} else {
		fprintf(stderr, "usage: sheet_tool sample OUT | dump FILE | copy IN OUT\n");
		return 2;
	}
	if (r < 0)
		fprintf(stderr, "%s\n", err.msg);
	sbx_book_free(b);
	return r < 0 ? 1 : 0;
}
