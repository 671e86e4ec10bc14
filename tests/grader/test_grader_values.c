/* SPDX-License-Identifier: MIT */
/* Cell by cell: numbers and their tolerances, strings, rewrites, dates, booleans, empty cells. */
#include "test_grader.h"

START_TEST(test_identical_pass)
{
	both(banking);
	grade();
	/* 4 headers + 5*3 + 2 rate points: the empty rate cells are skipped. */
	ck_assert_uint_eq(result.graded, 21);
	ck_assert_uint_eq(result.matched, 21);
	ck_assert_double_eq(result.score, 1.0);
	ck_assert_int_eq(result.status, SBX_GRADE_PASS);
	ck_assert_uint_eq(result.n_mismatches, 0);
}
END_TEST

START_TEST(test_one_changed_cell)
{
	both(banking);
	num(oracle, "Sheet1", 4, 3, 2167.61);
	num(output, "Sheet1", 4, 3, 2100);
	grade_counts(21, 20);
	ck_assert_int_eq(result.status, SBX_GRADE_PARTIAL);
	ck_assert_uint_eq(result.n_mismatches, 1);
	ck_assert_line(&result, 0,
		       "Sheet1!D5: expected=2167.61, got=2100 (numeric mismatch: diff=67.61, "
		       "tolerance=0.01)");

	/* At a 0.95 threshold the same output passes, still naming the cell. */
	opts.pass_threshold = 0.95;
	grade();
	ck_assert_int_eq(result.status, SBX_GRADE_PASS);
	ck_assert_uint_eq(result.n_mismatches, 1);
}
END_TEST

static const struct {
	double expected, got, abs, rel;
	int round;
	bool match;
} numbers[] = {
	{100, 100.005, 0.01, 0, -1, true},
	{100, 100.5, 0.01, 0, -1, false},
	{100, 100.01, 0.01, 0, -1, true}, /* the boundary is inclusive */
	{100, 99.99, 0.01, 0, -1, true},
	{100, 100.0101, 0.01, 0, -1, false},
	{1000, 1005, 0, 0.01, -1, true}, /* relative: 1% of 1000 */
	{1000, 1011, 0, 0.01, -1, false},
	{1000, 1005, 0.001, 0.01, -1, true}, /* max(abs, rel*|e|) */
	{0, 0.5, 1, 0.01, -1, true},
	{1.01, 1.005, 0, 0, 2, true}, /* rounded half away from zero */
	{2.68, 2.675, 0, 0, 2, true},
	{-2.68, -2.675, 0, 0, 2, true},
	{1.0, 1.4, 0, 0, 0, true},
	{1.0, 1.5, 0, 0, 0, false},
	{0.1 + 0.2, 0.3, 0, 0, -1, true}, /* binary noise is forgiven at tolerance 0 */
};

START_TEST(test_numeric_tolerance)
{
	num(oracle, "Sheet1", 0, 0, numbers[_i].expected);
	num(output, "Sheet1", 0, 0, numbers[_i].got);
	opts.abs_tol = numbers[_i].abs;
	opts.rel_tol = numbers[_i].rel;
	opts.round_digits = numbers[_i].round;
	grade();
	ck_assert_msg(result.matched == (numbers[_i].match ? 1u : 0u), "case %d: %g vs %g", _i,
		      numbers[_i].expected, numbers[_i].got);
	ck_assert_int_eq(result.status, numbers[_i].match ? SBX_GRADE_PASS : SBX_GRADE_FAIL);
}
END_TEST

START_TEST(test_relative_tolerance_line)
{
	num(oracle, "Sheet1", 0, 0, 1000);
	num(output, "Sheet1", 0, 0, 1020);
	opts.rel_tol = 0.01;
	grade();
	ck_assert_line(
		&result, 0,
		"Sheet1!A1: expected=1000, got=1020 (numeric mismatch: diff=20, tolerance=10)");
}
END_TEST

static const struct {
	const char *expected, *got;
	bool trim, ignore_case, collapse, match;
} strings[] = {
	{"Period", "Period", true, false, false, true},
	{"Period", "  Period\t", true, false, false, true},
	{"Period", "  Period", false, false, false, false},
	{"Period", "period", true, false, false, false},
	{"Period", "PERIOD", true, true, false, true},
	{"Cash Flow", "Cash   Flow", true, false, false, false},
	{"Cash Flow", "Cash \t\n Flow", true, false, true, true},
	{"Cash  Flow", "Cash Flow", true, false, true, true},
	{"Period", "Periods", true, true, true, false},
};

START_TEST(test_strings)
{
	str(oracle, "Sheet1", 0, 0, strings[_i].expected);
	str(output, "Sheet1", 0, 0, strings[_i].got);
	opts.trim = strings[_i].trim;
	opts.ignore_case = strings[_i].ignore_case;
	opts.collapse_whitespace = strings[_i].collapse;
	grade();
	ck_assert_msg(result.matched == (strings[_i].match ? 1u : 0u), "case %d: '%s' vs '%s'", _i,
		      strings[_i].expected, strings[_i].got);
}
END_TEST

START_TEST(test_rewrites)
{
	char *pairs[] = {(char *)"\u20ac", (char *)"EUR", (char *)"n/a", (char *)""};

	num(oracle, "Sheet1", 0, 0, 1234.5);
	str(output, "Sheet1", 0, 0, "$1,234.50");
	str(oracle, "Sheet1", 0, 1, "100 EUR");
	str(output, "Sheet1", 0, 1, "100 \u20ac");
	str(output, "Sheet1", 0, 2, " n/a "); /* blank once rewritten: not extra content */
	opts.strict = true;
	grade_counts(3, 0);

	opts.strip_chars = (char *)"$,";
	opts.replace = pairs;
	opts.n_replace = 2;
	grade_counts(2, 2);

	/* The report shows the values as they were, not as rewritten. */
	str(output, "Sheet1", 0, 1, "100 USD");
	grade();
	ck_assert_line(&result, 0,
		       "Sheet1!B1: expected=\"100 EUR\", got=\"100 USD\" (text mismatch)");
	opts.strip_chars = NULL;
	opts.replace = NULL;
	opts.n_replace = 0;
}
END_TEST

START_TEST(test_text_line)
{
	str(oracle, "Sheet1", 0, 0, "Period");
	str(output, "Sheet1", 0, 0, "Per\"iod\n");
	opts.trim = false;
	grade();
	ck_assert_line(&result, 0,
		       "Sheet1!A1: expected=\"Period\", got=\"Per\\\"iod\\n\" (text mismatch)");
}
END_TEST

START_TEST(test_numeric_strings)
{
	num(oracle, "Sheet1", 0, 0, 42);
	str(output, "Sheet1", 0, 0, " 42.000 ");
	str(oracle, "Sheet1", 0, 1, "7");
	num(output, "Sheet1", 0, 1, 7);
	num(oracle, "Sheet1", 0, 2, 1);
	str(output, "Sheet1", 0, 2, "abc");
	grade_counts(3, 2);
	ck_assert_line(&result, 0,
		       "Sheet1!C1: expected=1, got=\"abc\" (type mismatch: expected number, got "
		       "string)");

	opts.numeric_strings = false;
	grade();
	ck_assert_uint_eq(result.matched, 0);
	ck_assert_line(&result, 0,
		       "Sheet1!A1: expected=42, got=\" 42.000 \" (type mismatch: expected number, "
		       "got string)");
}
END_TEST

START_TEST(test_dates_and_booleans)
{
	sbx_cell date = {.kind = SBX_CELL_DATE}, yes = {.kind = SBX_CELL_BOOL, .number = 1};

	ck_assert_int_eq(sbx_sheet_parse_date("2024-03-01", &date.number), 0);
	ck_assert_int_eq(sbx_sheet_set(sheet_of(oracle, "Sheet1"), 0, 0, &date, NULL), 0);
	ck_assert_int_eq(sbx_sheet_set(sheet_of(oracle, "Sheet1"), 0, 1, &yes, NULL), 0);
	ck_assert_int_eq(sbx_sheet_set(sheet_of(oracle, "Sheet1"), 0, 2, &date, NULL), 0);
	ck_assert_int_eq(sbx_sheet_set(sheet_of(oracle, "Sheet1"), 0, 3, &yes, NULL), 0);
	str(output, "Sheet1", 0, 0, "2024-03-01"); /* ISO text for a date */
	str(output, "Sheet1", 0, 1, "TRUE");	   /* text for a boolean */
	num(output, "Sheet1", 0, 2, date.number);  /* the serial for a date */
	str(output, "Sheet1", 0, 3, "no");	   /* not a boolean's text */
	grade_counts(4, 3);
	ck_assert_line(&result, 0,
		       "Sheet1!D1: expected=TRUE, got=\"no\" (type mismatch: expected boolean, got "
		       "string)");
}
END_TEST

START_TEST(test_empty_vs_value)
{
	num(oracle, "Sheet1", 0, 0, 1);
	num(oracle, "Sheet1", 1, 1, 5);
	num(output, "Sheet1", 0, 0, 1);
	grade_counts(2, 1);
	ck_assert_line(&result, 0, "Sheet1!B2: expected=5, got=empty (missing value)");

	/* A blank string is empty, on either side. */
	str(output, "Sheet1", 1, 1, "   ");
	grade();
	ck_assert_line(&result, 0, "Sheet1!B2: expected=5, got=empty (missing value)");
}
END_TEST

START_TEST(test_empty_oracle_cells)
{
	/* Oracle: A1, C1 (B1 empty); output fills B1 too and adds D3 beyond the used range. */
	num(oracle, "Sheet1", 0, 0, 1);
	num(oracle, "Sheet1", 0, 2, 3);
	str(oracle, "Sheet1", 0, 1, "");
	num(output, "Sheet1", 0, 0, 1);
	num(output, "Sheet1", 0, 1, 2);
	num(output, "Sheet1", 0, 2, 3);
	num(output, "Sheet1", 2, 3, 9);

	/* Default: empty oracle cells are skipped, extra content is ignored. */
	grade_counts(2, 2);
	ck_assert_int_eq(result.status, SBX_GRADE_PASS);

	/* Strict: the extra cells count, within and beyond the oracle's used range. */
	opts.strict = true;
	grade_counts(4, 2);
	ck_assert_line(&result, 0, "Sheet1!B1: expected=empty, got=2 (unexpected content)");
	ck_assert_line(&result, 1, "Sheet1!D3: expected=empty, got=9 (unexpected content)");

	/* skip_empty off: every cell of the used range is graded (1 row x 3 columns). */
	opts.strict = false;
	opts.skip_empty = false;
	grade_counts(3, 2);
}
END_TEST

/* Content written far away must not buy a sea of matching empty cells. */
START_TEST(test_no_dilution)
{
	sbx_grading_range col_b = {
		.first_row = 0, .first_col = 1, .last_row = 1048575, .last_col = 1};

	for (uint32_t r = 0; r < 4; r++)
		num(oracle, "Sheet1", r, 0, r + 1);
	for (uint32_t r = 0; r < 4; r++)
		num(output, "Sheet1", r, 0, 99);
	num(output, "Sheet1", 1048575, 16383, 1);
	num(output, "Sheet1", 1048575, 1, 1);
	opts.skip_empty = false;
	opts.strict = true;
	grade_counts(6, 0); /* A1:A4 + the two far cells */
	ck_assert_int_eq(result.status, SBX_GRADE_FAIL);

	/* The same with an explicit whole-column range. */
	opts.strict = false;
	opts.ranges = &col_b;
	opts.n_ranges = 1;
	grade_counts(1, 0); /* B1048576 only: column B is outside the oracle's used range */
	opts.ranges = NULL;
	opts.n_ranges = 0;
}
END_TEST

void grader_value_tests(TCase *tc)
{
	SBX_TEST_ADD(tc, test_identical_pass, test_one_changed_cell);
	SBX_TEST_TABLE(tc, test_numeric_tolerance, numbers);
	SBX_TEST_ADD(tc, test_relative_tolerance_line);
	SBX_TEST_TABLE(tc, test_strings, strings);
	SBX_TEST_ADD(tc, test_rewrites, test_text_line, test_numeric_strings,
		     test_dates_and_booleans, test_empty_vs_value, test_empty_oracle_cells,
		     test_no_dilution);
}
