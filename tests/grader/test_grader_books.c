/* SPDX-License-Identifier: MIT */
/*
 * Whole books: caps, missing sheets and output, formulas, scope, thresholds,
 * reports, the gate, and the reference tasks' own files.
 */
#include "test_grader.h"

START_TEST(test_caps)
{
	char *longtext = malloc(5000);

	memset(longtext, 'x', 4999);
	longtext[4999] = '\0';
	str(oracle, "Sheet1", 0, 0, "short");
	str(output, "Sheet1", 0, 0, longtext);
	for (uint32_t r = 1; r <= SBX_GRADE_MAX_MISMATCHES; r++) {
		num(oracle, "Sheet1", r, 0, 1);
		num(output, "Sheet1", r, 0, 2);
	}
	grade_counts(SBX_GRADE_MAX_MISMATCHES + 1, 0);
	ck_assert_uint_eq(result.n_mismatches, SBX_GRADE_MAX_MISMATCHES);
	ck_assert_uint_eq(result.mismatches_total, SBX_GRADE_MAX_MISMATCHES + 1);
	ck_assert_uint_eq(strlen(result.mismatches[0].got), SBX_GRADE_MAX_VALUE + 3);
	ck_assert_str_eq(result.mismatches[0].got + SBX_GRADE_MAX_VALUE, "...");
	free(longtext);
}
END_TEST

START_TEST(test_missing_sheet)
{
	both(banking);
	num(oracle, "Totals", 0, 0, 1);
	str(oracle, "Totals", 1, 0, "x");
	grade_counts(23, 21);
	ck_assert_uint_eq(result.n_missing_sheets, 1);
	ck_assert_str_eq(result.missing_sheets[0], "Totals");
	ck_assert_int_eq(result.status, SBX_GRADE_PARTIAL);
	ck_assert_line(&result, 0, "Totals: missing sheet (2 graded cells)");

	opts.missing_sheet = SBX_MISSING_SHEET_FAIL;
	opts.pass_threshold = 0.5;
	grade();
	ck_assert_int_eq(result.status, SBX_GRADE_FAIL);
}
END_TEST

START_TEST(test_missing_output)
{
	sbx_error err = SBX_ERROR_INIT;

	both(banking);
	ck_assert_int_eq(
		sbx_grade_books(&opts, NULL, "output 'x.ods' not found", oracle, &result, &err), 0);
	ck_assert_int_eq(result.status, SBX_GRADE_FAIL);
	ck_assert_uint_eq(result.graded, 21);
	ck_assert_uint_eq(result.matched, 0);
	ck_assert_str_eq(result.failure, "output 'x.ods' not found");
}
END_TEST

START_TEST(test_formulas)
{
	num(oracle, "Sheet1", 0, 0, 1);
	num(oracle, "Sheet1", 1, 0, 2);
	formula(oracle, "Sheet1", 2, 0, "=SUM(A1:A2)", 3);
	num(output, "Sheet1", 0, 0, 1);
	num(output, "Sheet1", 1, 0, 2);
	num(output, "Sheet1", 2, 0, 3); /* the right value, typed in */

	grade(); /* ignore: values only */
	ck_assert_uint_eq(result.matched, 3);

	opts.formulas = SBX_FORMULA_REQUIRE;
	grade();
	ck_assert_uint_eq(result.matched, 2);
	ck_assert_line(&result, 0,
		       "Sheet1!A3: expected formula =SUM(A1:A2), got=3 (formula missing)");

	formula(output, "Sheet1", 2, 0, "=A1+A2", 3);
	grade();
	ck_assert_uint_eq(result.matched, 3);

	opts.formulas = SBX_FORMULA_MATCH;
	grade();
	ck_assert_uint_eq(result.matched, 2);
	ck_assert_line(&result, 0,
		       "Sheet1!A3: expected formula =SUM(A1:A2), got formula =A1+A2 (formula "
		       "differs)");

	/* Normalised: case, '$' and spaces do not matter. */
	formula(output, "Sheet1", 2, 0, "=sum( $A$1:A2 )", 3);
	grade();
	ck_assert_uint_eq(result.matched, 3);

	/* A formula without a cached value cannot show the right value. */
	ck_assert_int_eq(
		sbx_sheet_set_formula(sheet_of(output, "Sheet1"), 2, 0, "=SUM(A1:A2)", NULL, NULL),
		0);
	grade();
	ck_assert_uint_eq(result.matched, 2);
	ck_assert_line(&result, 0, "Sheet1!A3: expected=3, got=empty (missing value)");
	opts.formulas = SBX_FORMULA_IGNORE;
	grade();
	ck_assert_uint_eq(result.matched, 2);
	opts.formulas = SBX_FORMULA_MATCH;

	/* An oracle formula without a cached value is graded by its formula alone. */
	ck_assert_int_eq(
		sbx_sheet_set_formula(sheet_of(oracle, "Sheet1"), 2, 0, "=SUM(A1:A2)", NULL, NULL),
		0);
	grade_counts(3, 3);
	opts.formulas = SBX_FORMULA_IGNORE;
	grade();
	ck_assert_uint_eq(result.graded, 2); /* no value to grade */
	opts.formulas = SBX_FORMULA_MATCH;
	formula(oracle, "Sheet1", 2, 0, "=SUM(A1:A2)", 3);

	/* A formula with the wrong cached value is a value mismatch first. */
	formula(output, "Sheet1", 2, 0, "=SUM(A1:A2)", 4);
	grade();
	ck_assert_uint_eq(result.matched, 2);
	ck_assert_int_eq(result.mismatches[0].reason, SBX_MISMATCH_NUMBER);
}
END_TEST

START_TEST(test_scope)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_grading_range range = {
		.sheet = NULL, .first_row = 1, .first_col = 3, .last_row = 1048575, .last_col = 3};
	sbx_grading_sheet pick = {.name = NULL, .index = 1};

	both(banking);
	num(oracle, "Other", 0, 0, 1);
	num(output, "Other", 0, 0, 2);
	num(output, "Sheet1", 2, 3, -1);

	/* Column D from row 2 on (a whole-column range is clamped, not a million cells). */
	opts.ranges = &range;
	opts.n_ranges = 1;
	grade_counts(5, 4); /* D2:D6 of Sheet1; Other has nothing in column D */

	/* Only sheet index 1. */
	opts.n_ranges = 0;
	opts.ranges = NULL;
	opts.sheets = &pick;
	opts.n_sheets = 1;
	grade();
	ck_assert_uint_eq(result.graded, 1);
	ck_assert_line(&result, 0,
		       "Other!A1: expected=1, got=2 (numeric mismatch: diff=1, tolerance=0.01)");

	/* A sheet index out of range, or a range naming an unknown sheet, is a config error. */
	pick.index = 7;
	ck_assert_int_eq(sbx_grade_books(&opts, output, NULL, oracle, &result, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "grading: the oracle has no sheet at index 7 (it has 2)");
	opts.sheets = NULL;
	opts.n_sheets = 0;
	range.sheet = (char *)"Nope";
	opts.ranges = &range;
	opts.n_ranges = 1;
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_grade_books(&opts, output, NULL, oracle, &result, &err), -EINVAL);
	ck_assert_str_eq(err.msg,
			 "grading: range names sheet 'Nope', which the oracle does not have");
	opts.ranges = NULL;
	opts.n_ranges = 0;
}
END_TEST

START_TEST(test_nothing_to_grade)
{
	sbx_error err = SBX_ERROR_INIT;

	sheet_of(oracle, "Sheet1");
	ck_assert_int_eq(sbx_grade_books(&opts, output, NULL, oracle, &result, &err), -ENODATA);
	ck_assert_str_eq(err.msg, "nothing to grade: the oracle's graded scope holds no cells");
}
END_TEST

START_TEST(test_thresholds)
{
	for (uint32_t i = 0; i < 10; i++) {
		num(oracle, "Sheet1", i, 0, i);
		num(output, "Sheet1", i, 0, i < 3 ? i : 100 + i);
	}
	grade(); /* 3/10 */
	ck_assert_int_eq(result.status, SBX_GRADE_PARTIAL);
	opts.fail_threshold = 0.5;
	grade();
	ck_assert_int_eq(result.status, SBX_GRADE_FAIL);
	opts.pass_threshold = 0.3;
	opts.fail_threshold = 0.3;
	grade();
	ck_assert_int_eq(result.status, SBX_GRADE_PASS);

	/* Nothing matched is a FAIL whatever the thresholds. */
	opts.pass_threshold = 0;
	opts.fail_threshold = 0;
	for (uint32_t i = 0; i < 3; i++)
		num(output, "Sheet1", i, 0, -1);
	grade();
	ck_assert_int_eq(result.status, SBX_GRADE_FAIL);
}
END_TEST

START_TEST(test_reports)
{
	sbx_grade_result *all = calloc(1, sizeof(*all));
	sbx_buf text = SBX_BUF_INIT(1 << 20);
	cJSON *json = NULL;
	const cJSON *m;
	char *j;

	both(banking);
	num(output, "Sheet1", 4, 3, 2100);
	num(output, "Sheet1", 5, 3, 2100);
	all->cases = calloc(2, sizeof(*all->cases));
	all->n_cases = 2;
	grade();
	all->cases[0] = result; /* the report owns it now */
	result = (sbx_grade_case_result){0};
	all->cases[0].name = strdup("reserves");
	num(output, "Sheet1", 4, 3, 400.5);
	num(output, "Sheet1", 5, 3, 500.5);
	grade();
	all->cases[1] = result; /* the report owns it now */
	result = (sbx_grade_case_result){0};
	all->cases[1].name = strdup("again");
	sbx_grade_result_summarise(all);
	ck_assert_int_eq(all->status, SBX_GRADE_PARTIAL);
	ck_assert_double_eq(all->soft, 0.5);
	ck_assert(!all->hard);
	ck_assert_uint_eq(all->graded, 42);
	ck_assert_uint_eq(all->matched, 40);

	ck_assert_int_eq(sbx_grade_report_text(all, 1, &text), 0);
	ck_assert_str_eq(
		sbx_buf_str(&text),
		"PARTIAL 1/2 cases passed (soft 0.50, hard 0); 40/42 cells matched "
		"(95.24%)\n"
		"case 'reserves': PARTIAL 19/21 cells matched (90.48%; pass at >= 100.00%)\n"
		"  Sheet1!D5: expected=400.5, got=2100 (numeric mismatch: diff=1699.5, "
		"tolerance=0.01)\n"
		"  ... 1 more mismatches (the JSON report has them all)\n"
		"case 'again': PASS 21/21 cells matched (100.00%; pass at >= 100.00%)\n");
	sbx_buf_free(&text);

	j = sbx_grade_report_json(all);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(sbx_json_parse(j, strlen(j), &json, NULL), 0);
	ck_assert_str_eq(sbx_json_get_string(json, "status", ""), "PARTIAL");
	ck_assert(!sbx_json_get_bool(json, "passed", true));
	ck_assert_double_eq(sbx_json_get_number(json, "soft", 0), 0.5);
	m = cJSON_GetArrayItem(
		sbx_json_get(cJSON_GetArrayItem(sbx_json_get(json, "cases"), 0), "mismatches"), 1);
	ck_assert_str_eq(sbx_json_get_string(m, "cell", ""), "Sheet1!D6");
	ck_assert_str_eq(sbx_json_get_string(m, "reason", ""), "number");
	/* Numbers as JSON numbers, not their display text. */
	ck_assert(cJSON_IsNumber(sbx_json_get(m, "expected")));
	ck_assert_double_eq(sbx_json_get_number(m, "expected", 0), 500.5);
	ck_assert_double_eq(sbx_json_get_number(m, "got", 0), 2100);
	ck_assert_double_eq(sbx_json_get_number(m, "row", 0), 6);
	ck_assert_str_eq(sbx_json_get_string(m, "col", ""), "D");
	ck_assert_double_eq_tol(sbx_json_get_number(m, "diff", 0), 1599.5, 1e-9);
	cJSON_Delete(json);
	free(j);
	sbx_grade_result_free(all);
}
END_TEST

static char *data_path(const char *name)
{
	const char *root = getenv("SBX_SOURCE_ROOT");
	char *p;

	ck_assert_int_ge(asprintf(&p, "%s/tests/data/grader/%s", root ? root : "../..", name), 0);
	return p;
}

/* The reference system's oracles (written by odfpy) grade as a full pass against themselves. */
static const struct {
	const char *file;
	uint64_t graded;
} reference[] = {
	{"reference/banking_reserve-expected_reserves.ods", 315},
	{"reference/sales_revenue-expected_revenue.ods", 51 * 5},
	{"reference/banking_reserve-cash_flows.ods", 315 - 101},
	{"reference/sales_revenue-sales_data.ods", 51 * 4},
};

/* The reference system's grading: one case, "default", that passes at 95%. */
static void reference_spec(sbx_grading_spec *spec, sbx_grading_case *c)
{
	*c = (sbx_grading_case){.name = (char *)"default"};
	sbx_grading_opts_init(&c->opts);
	c->opts.pass_threshold = 0.95;
	*spec = (sbx_grading_spec){.cases = c, .n_cases = 1};
}

START_TEST(test_reference_self)
{
	sbx_grading_spec spec;
	sbx_grading_case c;
	sbx_grade_result *res = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char *path = data_path(reference[_i].file);
	const char *files[] = {path};

	reference_spec(&spec, &c);
	ck_assert_msg(sbx_grade_files(&spec, files, files, &res, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(res->status, SBX_GRADE_PASS);
	ck_assert_uint_eq(res->graded, reference[_i].graded);
	ck_assert_uint_eq(res->matched, reference[_i].graded);
	sbx_grade_result_free(res);
	free(path);
}
END_TEST

/* The starting file is not the answer: column D is missing. */
START_TEST(test_reference_start_vs_oracle)
{
	sbx_grading_spec spec;
	sbx_grading_case c;
	sbx_grade_result *res = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char *out = data_path("reference/banking_reserve-cash_flows.ods");
	char *ora = data_path("reference/banking_reserve-expected_reserves.ods");
	const char *outs[] = {out}, *oras[] = {ora}, *missing[] = {"/nonexistent/x.ods"};
	sbx_buf text = SBX_BUF_INIT(1 << 20);

	reference_spec(&spec, &c);
	ck_assert_msg(sbx_grade_files(&spec, outs, oras, &res, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(res->status, SBX_GRADE_PARTIAL);
	ck_assert_uint_eq(res->graded, 315);
	ck_assert_uint_eq(res->matched, 214);
	ck_assert_int_eq(sbx_grade_report_text(res, 2, &text), 0);
	ck_assert_str_eq(sbx_buf_str(&text),
			 "PARTIAL 214/315 cells matched (67.94%; pass at >= 95.00%)\n"
			 "Sheet1!D1: expected=\"Required_Reserve\", got=empty (missing value)\n"
			 "Sheet1!D2: expected=26561.04, got=empty (missing value)\n"
			 "... 99 more mismatches (the JSON report has them all)\n");
	sbx_buf_free(&text);
	res = sbx_grade_result_free(res);

	/* A missing output fails the case; a missing oracle is an error. */
	ck_assert_int_eq(sbx_grade_files(&spec, missing, oras, &res, &err), 0);
	ck_assert_int_eq(res->status, SBX_GRADE_FAIL);
	ck_assert_str_eq(res->cases[0].failure, "output '/nonexistent/x.ods' not found");
	res = sbx_grade_result_free(res);
	ck_assert_int_lt(sbx_grade_files(&spec, outs, missing, &res, &err), 0);
	ck_assert_ptr_null(res);
	ck_assert_msg(strstr(err.msg, "oracle"), "%s", err.msg);
	free(out);
	free(ora);
}
END_TEST

/* Gate cases decide, they do not score: a failed gate is FAIL with score 0. */
START_TEST(test_gate)
{
	sbx_grade_result r = {0};
	sbx_grade_case_result c[2] = {
		{.status = SBX_GRADE_PASS, .graded = 10, .matched = 10, .score = 1},
		{.status = SBX_GRADE_PASS, .graded = 30, .matched = 30, .score = 1, .gate = true},
	};

	r.cases = c;
	r.n_cases = 2;
	sbx_grade_result_summarise(&r);
	ck_assert_int_eq(r.status, SBX_GRADE_PASS);
	ck_assert_uint_eq(r.graded, 10); /* the gate's cells are not in the score */
	ck_assert_double_eq(r.score, 1);
	/* Doing nothing: the answer fails, the gate passes: FAIL, not PARTIAL. */
	c[0] = (sbx_grade_case_result){.status = SBX_GRADE_FAIL, .graded = 10};
	sbx_grade_result_summarise(&r);
	ck_assert_int_eq(r.status, SBX_GRADE_FAIL);
	ck_assert_double_eq(r.score, 0);
	ck_assert(!r.gate_failed);
	/* A right answer on changed inputs: FAIL, score 0. */
	c[0] = (sbx_grade_case_result){
		.status = SBX_GRADE_PASS, .graded = 10, .matched = 10, .score = 1};
	c[1].status = SBX_GRADE_PARTIAL;
	c[1].matched = 29;
	sbx_grade_result_summarise(&r);
	ck_assert_int_eq(r.status, SBX_GRADE_FAIL);
	ck_assert_double_eq(r.score, 0);
	ck_assert(r.gate_failed);
	ck_assert_uint_eq(r.matched, 10);
	/* Only gates: they are the score. */
	c[0].gate = true;
	c[1].status = SBX_GRADE_PASS;
	c[1].matched = 30;
	sbx_grade_result_summarise(&r);
	ck_assert_int_eq(r.status, SBX_GRADE_PASS);
	ck_assert_uint_eq(r.graded, 40);
}
END_TEST

void grader_book_tests(TCase *tc)
{
	SBX_TEST_ADD(tc, test_caps, test_missing_sheet, test_missing_output, test_formulas,
		     test_scope, test_nothing_to_grade, test_thresholds, test_reports, test_gate);
}

void grader_reference_cases(Suite *s)
{
	TCase *tc = sbx_test_case(s, "reference", NULL, NULL, 0);

	SBX_TEST_TABLE(tc, test_reference_self, reference);
	SBX_TEST_ADD(tc, test_reference_start_vs_oracle);
}
