/* SPDX-License-Identifier: MIT */
/*
 * lib/grader on books built in memory: the runner, the books' fixture and the
 * helpers the tests share; the tests are in test_grader_{values,books}.c.
 */
#include "test_grader.h"

sbx_grading_opts opts;
sbx_book *oracle, *output;
sbx_grade_case_result result; /* of the last grade() */

sbx_sheet *sheet_of(sbx_book *b, const char *name)
{
	sbx_sheet *s = sbx_book_find(b, name);

	if (!s)
		ck_assert_int_eq(sbx_book_add_sheet(b, name, SIZE_MAX, &s, NULL), 0);
	return s;
}

void num(sbx_book *b, const char *sheet, uint32_t row, uint32_t col, double v)
{
	ck_assert_int_eq(sbx_sheet_set_number(sheet_of(b, sheet), row, col, v, NULL), 0);
}

void str(sbx_book *b, const char *sheet, uint32_t row, uint32_t col, const char *v)
{
	ck_assert_int_eq(sbx_sheet_set_string(sheet_of(b, sheet), row, col, v, NULL), 0);
}

void formula(sbx_book *b, const char *sheet, uint32_t row, uint32_t col, const char *f,
	     double cached)
{
	sbx_cell c = {.kind = SBX_CELL_NUMBER, .number = cached};

	ck_assert_int_eq(sbx_sheet_set_formula(sheet_of(b, sheet), row, col, f, &c, NULL), 0);
}

/* Both books: a banking-like Sheet1, header row plus 5 rows of 4 columns. */
void both(void (*fn)(sbx_book *b))
{
	fn(oracle);
	fn(output);
}

void banking(sbx_book *b)
{
	static const char *const headers[] = {"Period", "Cash_Flow_Amount", "Rate_Point",
					      "Required_Reserve"};

	for (uint32_t c = 0; c < 4; c++)
		str(b, "Sheet1", 0, c, headers[c]);
	for (uint32_t r = 1; r <= 5; r++) {
		num(b, "Sheet1", r, 0, r);
		num(b, "Sheet1", r, 1, 1000.0 * r + 0.25);
		if (r == 1 || r == 5)
			num(b, "Sheet1", r, 2, 0.05 * r);
		num(b, "Sheet1", r, 3, 100.0 * r + 0.5);
	}
}

static void setup(void)
{
	sbx_grading_opts_init(&opts);
	ck_assert_int_eq(sbx_book_new(SBX_FORMAT_ODS, &oracle, NULL), 0);
	ck_assert_int_eq(sbx_book_new(SBX_FORMAT_ODS, &output, NULL), 0);
}

static void teardown(void)
{
	sbx_grade_case_result_clear(&result);
	sbx_grading_opts_clear(&opts);
	oracle = sbx_book_free(oracle);
	output = sbx_book_free(output);
}

/* Grades output against oracle into result, replacing what it held. */
void grade(void)
{
	sbx_error err = SBX_ERROR_INIT;

	sbx_grade_case_result_clear(&result);
	ck_assert_msg(sbx_grade_books(&opts, output, NULL, oracle, &result, &err) == 0, "%s",
		      err.msg);
}

/* grade(), then checks how many cells it graded and how many of them matched. */
void grade_counts(unsigned graded, unsigned matched)
{
	grade();
	ck_assert_uint_eq(result.graded, graded);
	ck_assert_uint_eq(result.matched, matched);
}

char *line(const sbx_grade_case_result *res, size_t i)
{
	sbx_buf b = SBX_BUF_INIT(1 << 16);

	ck_assert_uint_gt(res->n_mismatches, i);
	ck_assert_int_eq(sbx_grade_mismatch_format(&res->mismatches[i], &b), 0);
	return sbx_buf_steal(&b, NULL);
}

static void add_cases(Suite *s)
{
	TCase *tc = sbx_test_case(s, "books", setup, teardown, 0);

	grader_value_tests(tc);
	grader_book_tests(tc);
	grader_reference_cases(s);
}

SBX_TEST_MAIN("grader", add_cases)
