/* SPDX-License-Identifier: MIT */
/* The book model, references, formulas and value formatting. */
#include "check_main.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/sheet.h"

static sbx_book *book;
static sbx_sheet *sheet;

static void setup(void)
{
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_book_new(SBX_FORMAT_ODS, &book, &err), 0);
	ck_assert_int_eq(sbx_book_add_sheet(book, "Sheet1", SIZE_MAX, &sheet, &err), 0);
}

static void teardown(void)
{
	book = sbx_book_free(book);
}

START_TEST(cells_set_get_overwrite_clear)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_cell c;

	ck_assert_int_eq(sbx_sheet_set_number(sheet, 4, 2, 1.5, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_string(sheet, 4, 0, "left", &err), 0);
	ck_assert_int_eq(sbx_sheet_set_bool(sheet, 0, 0, true, &err), 0);
	ck_assert_int_eq(sbx_sheet_get(sheet, 4, 2, &c), SBX_CELL_NUMBER);
	ck_assert(c.number == 1.5);
	ck_assert_int_eq(sbx_sheet_get(sheet, 4, 0, &c), SBX_CELL_STRING);
	ck_assert_str_eq(c.text, "left");
	ck_assert_int_eq(sbx_sheet_get(sheet, 4, 1, &c), SBX_CELL_EMPTY);
	ck_assert_int_eq(sbx_sheet_get(sheet, 999, 1, &c), SBX_CELL_EMPTY);
	ck_assert_uint_eq(sbx_sheet_cell_count(sheet), 3);

	/* Overwrite keeps the count; strings stay valid after more inserts. */
	const char *old = c.text;
	ck_assert_int_eq(sbx_sheet_set_string(sheet, 4, 2, "now text", &err), 0);
	ck_assert_uint_eq(sbx_sheet_cell_count(sheet), 3);
	for (int i = 0; i < 5000; i++) {
		char tmp[32];
		snprintf(tmp, sizeof(tmp), "s%d", i);
		ck_assert_int_eq(sbx_sheet_set_string(sheet, 10 + (uint32_t)i, 1, tmp, &err), 0);
	}
	(void)old;
	ck_assert_int_eq(sbx_sheet_get(sheet, 4, 2, &c), SBX_CELL_STRING);
	ck_assert_str_eq(c.text, "now text");
	ck_assert_int_eq(sbx_sheet_get(sheet, 5009, 1, &c), SBX_CELL_STRING);
	ck_assert_str_eq(c.text, "s4999");

	uint32_t rows, cols;
	sbx_sheet_used_range(sheet, &rows, &cols);
	ck_assert_uint_eq(rows, 5010);
	ck_assert_uint_eq(cols, 3);

	ck_assert_int_eq(sbx_sheet_clear(sheet, 4, 2), 0);
	ck_assert_int_eq(sbx_sheet_get(sheet, 4, 2, &c), SBX_CELL_EMPTY);
	ck_assert_uint_eq(sbx_sheet_cell_count(sheet), 5002);
}
END_TEST

START_TEST(cells_reject_bad_values)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_cell c = {SBX_CELL_STRING, 0, NULL, NULL};

	ck_assert_int_eq(sbx_sheet_set(sheet, 0, 0, &c, &err), -EINVAL);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_sheet_set_number(sheet, 0, 0, NAN, &err), -EINVAL);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_sheet_set_number(sheet, SBX_SHEET_MAX_ROWS, 0, 1, &err), -ERANGE);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_sheet_set_number(sheet, 0, SBX_SHEET_MAX_COLS, 1, &err), -ERANGE);
	ck_assert_int_eq(sbx_sheet_set_number(sheet, SBX_SHEET_MAX_ROWS - 1, SBX_SHEET_MAX_COLS - 1,
					      7, NULL),
			 0);
	ck_assert_uint_eq(sbx_sheet_cell_count(sheet), 1);
}
END_TEST

START_TEST(formula_with_and_without_cache)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_cell cached = {SBX_CELL_NUMBER, 42, NULL, NULL}, c;

	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 0, 0, " A2*2 ", &cached, &err), 0);
	ck_assert_int_eq(sbx_sheet_get(sheet, 0, 0, &c), SBX_CELL_NUMBER);
	ck_assert_str_eq(c.formula, "=A2*2");
	ck_assert(c.number == 42);
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 1, 0, "=NOW()", NULL, &err), 0);
	ck_assert_int_eq(sbx_sheet_get(sheet, 1, 0, &c), SBX_CELL_EMPTY);
	ck_assert_str_eq(c.formula, "=NOW()");
	ck_assert(!sbx_cell_is_empty(&c));
	ck_assert_uint_eq(sbx_sheet_cell_count(sheet), 2);
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 1, 0, "", NULL, &err), -EINVAL);
}
END_TEST

START_TEST(rows_insert_delete)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_cell c;

	for (uint32_t r = 0; r < 5; r++)
		ck_assert_int_eq(sbx_sheet_set_number(sheet, r, 0, r + 1, &err), 0);
	ck_assert_int_eq(sbx_sheet_insert_rows(sheet, 2, 3, &err), 0);
	ck_assert_int_eq(sbx_sheet_get(sheet, 1, 0, &c), SBX_CELL_NUMBER);
	ck_assert(c.number == 2);
	ck_assert_int_eq(sbx_sheet_get(sheet, 2, 0, &c), SBX_CELL_EMPTY);
	ck_assert_int_eq(sbx_sheet_get(sheet, 5, 0, &c), SBX_CELL_NUMBER);
	ck_assert(c.number == 3);
	uint32_t rows;
	sbx_sheet_used_range(sheet, &rows, NULL);
	ck_assert_uint_eq(rows, 8);
	ck_assert_int_eq(sbx_sheet_delete_rows(sheet, 0, 3, &err), 0);
	ck_assert_int_eq(sbx_sheet_get(sheet, 2, 0, &c), SBX_CELL_NUMBER);
	ck_assert(c.number == 3);
	ck_assert_uint_eq(sbx_sheet_cell_count(sheet), 3);
	/* Content pushed past the last row is refused. */
	ck_assert_int_eq(sbx_sheet_insert_rows(sheet, 0, SBX_SHEET_MAX_ROWS, &err), -ERANGE);
	ck_assert_int_eq(sbx_sheet_insert_cols(sheet, 0, 2, &err), 0);
	ck_assert_int_eq(sbx_sheet_get(sheet, 2, 2, &c), SBX_CELL_NUMBER);
	ck_assert_int_eq(sbx_sheet_delete_cols(sheet, 0, 1, &err), 0);
	ck_assert_int_eq(sbx_sheet_get(sheet, 2, 1, &c), SBX_CELL_NUMBER);
	ck_assert(c.number == 3);
}
END_TEST

START_TEST(sheets_add_rename_remove)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_sheet *s2, *s0;

	ck_assert_int_eq(sbx_book_add_sheet(book, "Second", SIZE_MAX, &s2, &err), 0);
	ck_assert_int_eq(sbx_book_add_sheet(book, "First", 0, &s0, &err), 0);
	ck_assert_uint_eq(sbx_book_sheet_count(book), 3);
	ck_assert_str_eq(sbx_sheet_name(sbx_book_sheet(book, 0)), "First");
	ck_assert_uint_eq(sbx_sheet_index(s2), 2);
	ck_assert_ptr_eq(sbx_book_find(book, "second"), s2);
	ck_assert_int_eq(sbx_book_add_sheet(book, "SHEET1", SIZE_MAX, NULL, &err), -EEXIST);
	ck_assert_str_eq(err.msg, "sheet 'SHEET1' already exists");
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_book_add_sheet(book, "a/b", SIZE_MAX, NULL, &err), -EINVAL);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_book_add_sheet(book, "", SIZE_MAX, NULL, &err), -EINVAL);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_sheet_rename(s2, "Renamed", &err), 0);
	ck_assert_ptr_eq(sbx_book_find(book, "Renamed"), s2);
	ck_assert_int_eq(sbx_sheet_rename(s2, "First", &err), -EEXIST);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_book_move_sheet(book, s2, 0, &err), 0);
	ck_assert_ptr_eq(sbx_book_sheet(book, 0), s2);
	ck_assert_int_eq(sbx_sheet_set_number(s0, 0, 0, 1, &err), 0);
	ck_assert_int_eq(sbx_book_remove_sheet(book, s0, &err), 0);
	ck_assert_uint_eq(sbx_book_sheet_count(book), 2);
	ck_assert_ptr_null(sbx_book_find(book, "First"));
	ck_assert_uint_eq(sbx_sheet_index(sheet), 1);
}
END_TEST

START_TEST(iterate_row_major)
{
	uint32_t r, c, n = 0;
	sbx_sheet_iter it = SBX_SHEET_ITER_INIT;
	sbx_cell cell;

	sbx_sheet_set_number(sheet, 3, 1, 31, NULL);
	sbx_sheet_set_number(sheet, 0, 2, 2, NULL);
	sbx_sheet_set_number(sheet, 3, 0, 30, NULL);
	uint32_t want[][2] = {{0, 2}, {3, 0}, {3, 1}};
	while (sbx_sheet_next(sheet, &it, &r, &c, &cell)) {
		ck_assert_uint_lt(n, 3);
		ck_assert_uint_eq(r, want[n][0]);
		ck_assert_uint_eq(c, want[n][1]);
		n++;
	}
	ck_assert_uint_eq(n, 3);
}
END_TEST

START_TEST(cell_limit_is_an_error)
{
	sbx_error err = SBX_ERROR_INIT;

	/* The book's limits apply to edits too. */
	sbx_book *b;
	sbx_sheet *s;
	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;
	sbx_buf csv = SBX_BUF_INIT(1024);
	o.limits.max_cells = 2;
	ck_assert_int_eq(sbx_buf_puts(&csv, "1,2\n"), 0);
	ck_assert_int_eq(sbx_book_open_memory(csv.data, csv.len, "x.csv", &o, &b, &err), 0);
	s = sbx_book_sheet(b, 0);
	ck_assert_int_eq(sbx_sheet_set_number(s, 0, 0, 5, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_number(s, 1, 0, 5, &err), -E2BIG);
	ck_assert_str_eq(err.msg, "more than 2 cells (limit)");
	sbx_book_free(b);
	sbx_buf_free(&csv);
}
END_TEST

/* ---- references ---- */

START_TEST(ref_parse_cells)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_ref r;
	char buf[16], col[4];

	ck_assert_int_eq(sbx_ref_parse("A1", &r, &err), 0);
	ck_assert_uint_eq(r.row, 0);
	ck_assert_uint_eq(r.col, 0);
	ck_assert_int_eq(sbx_ref_parse("$B$2", &r, &err), 0);
	ck_assert(r.row_abs && r.col_abs);
	ck_assert_uint_eq(r.col, 1);
	ck_assert_str_eq(sbx_ref_format(&r, buf), "$B$2");
	ck_assert_int_eq(sbx_ref_parse("xfd1048576", &r, &err), 0);
	ck_assert_uint_eq(r.col, 16383);
	ck_assert_uint_eq(r.row, 1048575);
	ck_assert_str_eq(sbx_ref_col_name(16383, col), "XFD");
	ck_assert_str_eq(sbx_ref_col_name(25, col), "Z");
	ck_assert_str_eq(sbx_ref_col_name(26, col), "AA");
	ck_assert_str_eq(sbx_ref_col_name(701, col), "ZZ");
	ck_assert_str_eq(sbx_ref_col_name(702, col), "AAA");
	uint32_t ci;
	ck_assert_int_eq(sbx_ref_col_parse("aaa", &ci), 0);
	ck_assert_uint_eq(ci, 702);
	ck_assert_int_eq(sbx_ref_col_parse("XFE", &ci), -EINVAL);

	const char *bad[] = {"ZZZ", "A0", "XFE1", "A1048577", "1A", "", "A1 ", "$$A1", "A-1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sbx_error_clear(&err);
		ck_assert_int_eq(sbx_ref_parse(bad[i], &r, &err), -EINVAL);
	}
	sbx_error_clear(&err);
	sbx_ref_parse("ZZZ", &r, &err);
	ck_assert_str_eq(err.msg, "Invalid cell reference: ZZZ");
}
END_TEST

START_TEST(range_parse_forms)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_range g;

	ck_assert_int_eq(sbx_range_parse("Sheet1!A1:D101", &g, &err), 0);
	ck_assert_str_eq(g.sheet, "Sheet1");
	ck_assert_uint_eq(g.last.row, 100);
	ck_assert_uint_eq(g.last.col, 3);
	ck_assert_int_eq(sbx_range_parse("'My Sheet'!C3", &g, &err), 0);
	ck_assert_str_eq(g.sheet, "My Sheet");
	ck_assert_uint_eq(g.first.col, 2);
	ck_assert_uint_eq(g.last.row, 2);
	ck_assert_int_eq(sbx_range_parse("'It''s'!A1", &g, &err), 0);
	ck_assert_str_eq(g.sheet, "It's");
	ck_assert_int_eq(sbx_range_parse("D5:B2", &g, &err), 0);
	ck_assert_str_eq(g.sheet, "");
	ck_assert_uint_eq(g.first.row, 1);
	ck_assert_uint_eq(g.first.col, 1);
	ck_assert_uint_eq(g.last.row, 4);
	ck_assert_int_eq(sbx_range_parse("B:C", &g, &err), 0);
	ck_assert_uint_eq(g.last.row, SBX_SHEET_MAX_ROWS - 1);
	ck_assert_int_eq(sbx_range_parse("2:5", &g, &err), 0);
	ck_assert_uint_eq(g.last.col, SBX_SHEET_MAX_COLS - 1);
	ck_assert_uint_eq(g.first.row, 1);

	ck_assert_int_eq(sbx_range_parse("Sheet1!ZZZ", &g, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "Invalid cell reference: ZZZ");
	const char *bad[] = {"'open!A1", "!A1", "A1:", ":A1", "A1:B", "A:1", "''!A1", "A1:B2:C3"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sbx_error_clear(&err);
		ck_assert_msg(sbx_range_parse(bad[i], &g, &err) == -EINVAL, "%s", bad[i]);
	}
	char *s = sbx_range_format("It's", &(sbx_ref){0, 0, false, false},
				   &(sbx_ref){9, 1, false, false});
	ck_assert_str_eq(s, "'It''s'!A1:B10");
	free(s);
	s = sbx_range_format("Sheet1", &(sbx_ref){0, 0, false, false}, NULL);
	ck_assert_str_eq(s, "Sheet1!A1");
	free(s);
}
END_TEST

/* ---- formulas ---- */

static void check_conv(int (*fn)(const char *, size_t, char **, sbx_error *), const char *in,
		       const char *want)
{
	sbx_error err = SBX_ERROR_INIT;
	char *out = NULL;

	ck_assert_int_eq(fn(in, 4096, &out, &err), 0);
	ck_assert_msg(strcmp(out, want) == 0, "%s -> %s, want %s", in, out, want);
	free(out);
}

/* ODS formulas and their A1 form: some convert both ways, some one way only. */
typedef struct {
	const char *ods, *a1;
} conversion;
static const conversion both_ways[] = {
	{"of:=[.A2]*[.B2]", "=A2*B2"},
	{"of:=SUM([.A3:.B3];1)", "=SUM(A3:B3,1)"},
	{"of:=[$Sheet2.A1]+[$'My Sheet'.$B$2]", "=Sheet2!A1+'My Sheet'!$B$2"},
	{"of:=SUM({1;2|3;4})", "=SUM({1,2;3,4})"},
};
/* Quoted names, strings, the old prefix, malformed input, whole columns. */
static const conversion from_ods_only[] = {
	{"of:=[$'It''s'.A1:.B2]", "='It''s'!A1:B2"},
	{"of:=IF([.A1]=\"a;[.b]\";1;2)", "=IF(A1=\"a;[.b]\",1,2)"},
	{"oooc:=[.A1]", "=A1"},
	{"of:=[.A1", "=[.A1"},
	{"of:=SUM([$Data.$A$1:.C$1048576])", "=SUM(Data!$A:C)"},
	{"of:=SUM([.A1:.A1048575])", "=SUM(A1:A1048575)"},
};
/* Strings, no '=', names, whole columns. */
static const conversion to_ods_only[] = {
	{"of:=LOG10([.A1])&\"B2,C3\"", "=LOG10(A1)&\"B2,C3\""},
	{"of:=SUM([.A1:.A3])", "SUM(A1:A3)"},
	{"of:=MyName1+X", "=MyName1+X"},
	{"of:=SUM([.B$1:.B$1048576])+SUM([$Data.$A$1:.C$1048576])", "=SUM(B:B)+SUM(Data!$A:C)"},
};

static void check_convs(const conversion *v, size_t n, bool to_ods)
{
	for (size_t i = 0; i < n; i++)
		if (to_ods)
			check_conv(sbx_formula_to_ods, v[i].a1, v[i].ods);
		else
			check_conv(sbx_formula_from_ods, v[i].ods, v[i].a1);
}

#define CHECK_CONVS(table, to_ods) check_convs(table, sizeof(table) / sizeof(table[0]), to_ods)

START_TEST(formula_ods_to_a1)
{
	CHECK_CONVS(both_ways, false);
	CHECK_CONVS(from_ods_only, false);
}
END_TEST

START_TEST(formula_a1_to_ods)
{
	CHECK_CONVS(both_ways, true);
	CHECK_CONVS(to_ods_only, true);
}
END_TEST

static int shift_1_2(const char *in, size_t max, char **out, sbx_error *err)
{
	return sbx_formula_shift(in, 1, 2, max, out, err);
}

START_TEST(formula_shift_and_normalize)
{
	check_conv(shift_1_2, "=A1+$A$1+A$1+$A1", "=C2+$A$1+C$1+$A2");
	check_conv(shift_1_2, "=SUM(Sheet2!A1:B2)", "=SUM(Sheet2!C2:D3)");
	check_conv(shift_1_2, "=XFD1", "=#REF!");
	check_conv(sbx_formula_normalize, " = sum( $a$1 : b2 ) & \"Mixed Case\"",
		   "=SUM(A1:B2)&\"Mixed Case\"");
}
END_TEST

/* ---- values ---- */

START_TEST(numbers_round_trip_shortest)
{
	char buf[32];
	double vals[] = {0.1, 1.0 / 3, 26561.04, 1e21, -0.0, 5e-324, 1.7976931348623157e308, 123};
	const char *want[] = {"0.1", "0.3333333333333333", "26561.04", "1e+21", "0", NULL, NULL,
			      "123"};

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		sbx_sheet_format_number(vals[i], buf);
		ck_assert(strtod(buf, NULL) == vals[i]);
		if (want[i])
			ck_assert_str_eq(buf, want[i]);
	}
}
END_TEST

/* The text the number writer's fast path must match: the shortest %.15g-%.17g that reads back. */
static void printf_shortest(double v, char buf[static 32])
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, 32, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

START_TEST(numbers_fast_path_is_printf)
{
	char got[32], want[32];
	uint64_t x = 0x9e3779b97f4a7c15u;
	static const double scale[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7};

	for (int i = 0; i < 60000; i++) {
		double v;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		switch (i % 4) {
		case 0: /* a decimal of up to 7 places, as people type and ROUND makes */
			v = (double)(int64_t)(x % 2000000000000ull) / scale[(x >> 50) % 8];
			break;
		case 1: /* integers near the 1e15 edge of fixed notation */
			v = 1e15 - (double)(x % 100000);
			break;
		case 2: /* small values near the 1e-4 edge */
			v = (double)(x % 100000) / 1e9;
			break;
		default: /* any double */
			memcpy(&v, &x, sizeof(v));
			if (!isfinite(v) || v == 0)
				continue;
		}
		if (x & 1)
			v = -v;
		if (v == 0)
			continue;
		sbx_sheet_format_number(v, got);
		printf_shortest(v, want);
		ck_assert_msg(strcmp(got, want) == 0, "%.17g: got %s, printf %s", v, got, want);
	}
}
END_TEST

START_TEST(dates_and_times)
{
	double v;
	char buf[40];

	ck_assert_int_eq(sbx_sheet_parse_date("1899-12-30", &v), 0);
	ck_assert(v == 0);
	ck_assert_int_eq(sbx_sheet_parse_date("2024-03-01", &v), 0);
	ck_assert(v == 45352);
	ck_assert_int_eq(sbx_sheet_parse_date("2024-03-01T12:00:00", &v), 0);
	ck_assert(v == 45352.5);
	ck_assert_int_eq(sbx_sheet_parse_date("1900-01-01T06:00:00.5Z", &v), 0);
	ck_assert_str_eq(sbx_sheet_format_date(45352.75, buf), "2024-03-01T18:00:00");
	ck_assert_str_eq(sbx_sheet_format_date(45352, buf), "2024-03-01");
	ck_assert_int_eq(sbx_sheet_parse_date("2024-13-01", &v), -EINVAL);
	ck_assert_int_eq(sbx_sheet_parse_date("2024-03-01x", &v), -EINVAL);
	ck_assert_int_eq(sbx_sheet_parse_time("PT19H03M00S", &v), 0);
	ck_assert(fabs(v - (19 * 60 + 3) / 1440.0) < 1e-12);
	ck_assert_str_eq(sbx_sheet_format_time(v, buf), "19:03:00");
	ck_assert_int_eq(sbx_sheet_parse_time("PT1.5S", &v), 0);
	ck_assert_int_eq(sbx_sheet_parse_time("P1DT1H", &v), 0);
	ck_assert(fabs(v - 25.0 / 24) < 1e-12);
	ck_assert_int_eq(sbx_sheet_parse_time("PT", &v), -EINVAL);
	ck_assert_int_eq(sbx_sheet_parse_time("19:03", &v), -EINVAL);
}
END_TEST

START_TEST(detect_formats)
{
	static const char ods_head[] = "PK\003\004xxxxxxxxxxxxxxxxxxxxxxxxxxmimetype"
				       "application/vnd.oasis.opendocument.spreadsheet";
	ck_assert_int_eq(sbx_sheet_detect_format("a.bin", ods_head, sizeof(ods_head) - 1),
			 SBX_FORMAT_ODS);
	ck_assert_int_eq(sbx_sheet_detect_format("a.xlsx", "PK\003\004", 4), SBX_FORMAT_XLSX);
	ck_assert_int_eq(sbx_sheet_detect_format("a.ods", "PK\003\004", 4), SBX_FORMAT_ODS);
	ck_assert_int_eq(sbx_sheet_detect_format("a.csv", "x,y", 3), SBX_FORMAT_CSV);
	ck_assert_int_eq(sbx_sheet_detect_format("a.ods", "x,y", 3), SBX_FORMAT_ODS);
	ck_assert_int_eq(sbx_sheet_detect_format("noext", "x,y", 3), SBX_FORMAT_AUTO);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "model", setup, teardown, 0, cells_set_get_overwrite_clear,
		      cells_reject_bad_values, formula_with_and_without_cache, rows_insert_delete,
		      sheets_add_rename_remove, iterate_row_major, cell_limit_is_an_error);

	SBX_TEST_CASE(s, "refs", NULL, NULL, 0, ref_parse_cells, range_parse_forms,
		      formula_ods_to_a1, formula_a1_to_ods, formula_shift_and_normalize);
	/* 60,000 numbers printed twice: seconds under ASan and load */
	SBX_TEST_CASE(s, "values", NULL, NULL, 60, numbers_round_trip_shortest,
		      numbers_fast_path_is_printf, dates_and_times, detect_formats);
}

SBX_TEST_MAIN("sheet-model", add_cases)
