/* SPDX-License-Identifier: MIT */
/* The native formula evaluator: precedence, errors, ranges, functions, cycles, recalc. */
#include "check_main.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/formula.h"
#include "sbx/sheet.h"

static sbx_book *book;
static sbx_sheet *sheet, *other;

static void setup(void)
{
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_book_new(SBX_FORMAT_ODS, &book, &err), 0);
	ck_assert_int_eq(sbx_book_add_sheet(book, "Sheet1", SIZE_MAX, &sheet, &err), 0);
	ck_assert_int_eq(sbx_book_add_sheet(book, "My Data", SIZE_MAX, &other, &err), 0);
	/* A1:A5 = 1..5, B1:B5 = text, C1 = TRUE, D1 = "3" (text), 'My Data'!A1 = 10. */
	for (uint32_t i = 0; i < 5; i++) {
		char t[8];
		snprintf(t, sizeof(t), "t%u", i + 1);
		ck_assert_int_eq(sbx_sheet_set_number(sheet, i, 0, i + 1, &err), 0);
		ck_assert_int_eq(sbx_sheet_set_string(sheet, i, 1, t, &err), 0);
	}
	ck_assert_int_eq(sbx_sheet_set_bool(sheet, 0, 2, true, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_string(sheet, 0, 3, "3", &err), 0);
	ck_assert_int_eq(sbx_sheet_set_number(other, 0, 0, 10, &err), 0);
}

static void teardown(void)
{
	book = sbx_book_free(book);
}

/* Evaluates f in Sheet1!H1 and returns the number (asserting a number result). */
static double num(const char *f)
{
	sbx_formula_value v;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_msg(sbx_formula_eval(sheet, 0, 7, f, &v, &err) == 0, "%s: %s", f, err.msg);
	ck_assert_msg(v.kind == SBX_CELL_NUMBER || v.kind == SBX_CELL_BOOL, "%s: kind %d (%s)", f,
		      v.kind, v.text ? v.text : "");
	double d = v.number;
	sbx_formula_value_clear(&v);
	return d;
}

/* The text (string or error) result of f. */
static char *text(const char *f)
{
	sbx_formula_value v;
	sbx_error err = SBX_ERROR_INIT;
	static char buf[256];

	ck_assert_msg(sbx_formula_eval(sheet, 0, 7, f, &v, &err) == 0, "%s: %s", f, err.msg);
	ck_assert_msg(v.kind == SBX_CELL_STRING || v.kind == SBX_CELL_ERROR, "%s: kind %d (%g)", f,
		      v.kind, v.number);
	snprintf(buf, sizeof(buf), "%s", v.text);
	sbx_formula_value_clear(&v);
	return buf;
}

#define NUM_EQ(f, x)                                                                               \
	ck_assert_msg(fabs(num(f) - (double)(x)) <= 1e-12 * fmax(1, fabs((double)(x))), "%s", f)

START_TEST(precedence)
{
	NUM_EQ("=1+2*3", 7);
	NUM_EQ("=(1+2)*3", 9);
	NUM_EQ("=-2^2", 4); /* unary minus binds tighter than ^ */
	NUM_EQ("=0-2^2", -4);
	NUM_EQ("=2^3^2", 64); /* left-associative */
	NUM_EQ("=2^-1", 0.5);
	NUM_EQ("=50%*4", 2);
	NUM_EQ("=10-2-3", 5);
	NUM_EQ("=12/3/2", 2);
	NUM_EQ("=1+2=3", 1);
	NUM_EQ("=1<2", 1);
	NUM_EQ("=\"a\"=\"A\"", 0);     /* ODS compares text with case (ODF default) */
	NUM_EQ("=\"abc\"<\"ABC\"", 1); /* lower case first */
	NUM_EQ("=\"abc\"<\"abd\"", 1);
	NUM_EQ("=COUNTIF(B1:B5,\"T1\")", 1); /* criteria ignore case */
	NUM_EQ("=0.1+0.2-0.3", 0);	     /* LibreOffice snaps cancellation noise */
	NUM_EQ("=1<\"a\"", 1);
	ck_assert_str_eq(text("=1+1&\"x\""), "2x");
	ck_assert_str_eq(text("=\"a\"&1/4"), "a0.25");
}
END_TEST

/* Numbers as text, as soffice 7.4.7 wrote them (formula_numtext.c). */
START_TEST(number_text)
{
	static const char *const cases[][2] = {
		{"=(1e-5)&\"\"", "0.00001"},
		{"=(1.5e-8)&\"\"", "0.000000015"},
		{"=(4.87e-10)&\"\"", "0.000000000487"},
		{"=(1e-19)&\"\"", "1E-019"},
		{"=(1e-21)&\"\"", "1E-021"},
		{"=(1e15)&\"\"", "1000000000000000"},
		{"=(1e16)&\"\"", "1E+016"},
		{"=(1.0042808691269508e18)&\"\"", "1.00428086912695E+018"},
		{"=(9.99994e35)&\"\"", "9.99994E+035"},
		{"=(1/3*1e-6)&\"\"", "0.00000033333333333333"},
		{"=(1/3*1e-12)&\"\"", "0.00000000000033333333"},
		{"=(1e-14)&\"\"", "0.00000000000001"},
		{"=(1/3*1e-14)&\"\"", "3.33333333333333E-015"},
		{"=(2^53-1)&\"\"", "9007199254740991"},
		{"=(2^53)&\"\"", "9.00719925474099E+015"},
		{"=(1e15+0.3)&\"\"", "1E+015"},
		{"=(999999999999999.9)&\"\"", "1000000000000000"},
		{"=(-0.5e-7)&\"\"", "-0.00000005"},
		{"=(1.7976931348623157e308)&\"\"", "1.7976931348623157E+308"},
		{"=TEXT(1e16,\"General\")", "1.00000000000000E+16"},
		{"=TEXT(1e100,\"General\")", "1.00000000000000E+100"},
		{"=TEXT(1e-15,\"General\")", "0.000000000000001"},
		{"=TEXT(6e-21,\"General\")", "0.00000000000000000001"},
		{"=TEXT(1e-21,\"General\")", "0"},
		{"=TEXT(-1e-21,\"General\")", "-0"},
		{"=TEXT(1e15,\"General\")", "1000000000000000"},
		{"=TEXT(-1/3,\"General\")", "-0.333333333333333"},
		{"=TEXT(2.675-0.1-0.5,\"0.00\")", "2.07"}, /* 2.0749999999999997 */
		{"=TEXT(1.005,\"0.00\")", "1.01"},
		{"=TEXT(1.005,\"0%\")", "100%"},
		{"=TEXT(0.3*0.005,\"0.0%\")", "0.2%"},
		{"=TEXT(0.004,\"0.00\")", "0.00"},
		{"=TEXT(0.006,\"0.00\")", "0.01"},
		{"=TEXT(1772882034375256,\"0\")", "1772882034375256"},
		{"=TEXT(-5.247447239119645e16,\"0.00\")", "-52474472391196500.00"},
	};

	for (size_t i = 0; i < SBX_ELEMENTSOF(cases); i++)
		ck_assert_str_eq(text(cases[i][0]), cases[i][1]);
}
END_TEST

START_TEST(references_and_ranges)
{
	NUM_EQ("=A1+$A$2+A$3+$A4", 10);
	NUM_EQ("=SUM(A1:A5)", 15);
	NUM_EQ("=SUM(A:A)", 15);
	NUM_EQ("=SUM(A1:B5)", 15); /* text in ranges is skipped */
	NUM_EQ("='My Data'!A1*2", 20);
	NUM_EQ("=SUM('My Data'!A1:A3)", 10);
	NUM_EQ("=D1+1", 4); /* unambiguous text converts */
	NUM_EQ("=C1+1", 2); /* booleans are numbers */
	NUM_EQ("=COUNT(A1:D5)", 6);
	NUM_EQ("=COUNTA(A1:D5)", 12);
	NUM_EQ("=AVERAGE(A1:A5)", 3);
	NUM_EQ("=MIN(A1:A5)+MAX(A1:A5)", 6);
	NUM_EQ("=Z99", 0);
}
END_TEST

START_TEST(errors)
{
	ck_assert_str_eq(text("=1/0"), "#DIV/0!");
	ck_assert_str_eq(text("=B1+1"), "#VALUE!");
	ck_assert_str_eq(text("=SUM(1/0,2)"), "#DIV/0!");
	ck_assert_str_eq(text("=NoSuch!A1"), "#REF!");
	ck_assert_str_eq(text("=VLOOKUP(99,A1:B5,2,FALSE)"), "#N/A");
	ck_assert_str_eq(text("=SQRT(-1)"), "Err:502");
	ck_assert_str_eq(text("=AVERAGE(B1:B5)"), "#DIV/0!");
	NUM_EQ("=IFERROR(1/0,7)", 7);
	NUM_EQ("=ISERROR(#N/A)", 1);
	NUM_EQ("=IFNA(#N/A,3)", 3);
}
END_TEST

START_TEST(functions)
{
	NUM_EQ("=ROUND(2.675,2)", 2.68);
	NUM_EQ("=ROUND(-2.5,0)", -3);
	NUM_EQ("=ROUNDUP(1.21,1)", 1.3);
	NUM_EQ("=ROUNDDOWN(-1.29,1)", -1.2);
	/* Digits below 12: the value at 12 significant digits first, as soffice does. */
	NUM_EQ("=ROUNDUP(10-9.95,2)", 0.05); /* 0.050000000000000711 */
	NUM_EQ("=ROUNDUP(1.000000000001,0)", 1);
	NUM_EQ("=ROUNDUP(1.00000000001,0)", 2);
	NUM_EQ("=ROUNDUP(1.000000000001)", 2);
	NUM_EQ("=ROUNDUP(1.000000000001,12)", 1.000000000001);
	NUM_EQ("=ROUNDDOWN(-2.9999999999999,0)", -3);
	NUM_EQ("=ROUNDUP(999999999999.4,0)", 999999999999);
	NUM_EQ("=ROUND(1234,-2)", 1200);
	NUM_EQ("=INT(-1.5)", -2);
	NUM_EQ("=MOD(-7,3)", 2);
	NUM_EQ("=SUMIF(A1:A5,\">2\")", 12);
	NUM_EQ("=SUMIF(B1:B5,\"t2\",A1:A5)", 2);
	NUM_EQ("=COUNTIF(A1:A5,\"<>3\")", 4);
	NUM_EQ("=COUNTIFS(A1:A5,\">1\",A1:A5,\"<5\")", 3);
	NUM_EQ("=SUMIFS(A1:A5,B1:B5,\"<>t1\",A1:A5,\"<=4\")", 9);
	NUM_EQ("=AVERAGEIF(A1:A5,\">=4\")", 4.5);
	NUM_EQ("=VLOOKUP(3,A1:B5,1,FALSE)", 3);
	ck_assert_str_eq(text("=VLOOKUP(3,A1:B5,2,FALSE)"), "t3");
	ck_assert_str_eq(text("=VLOOKUP(3.5,A1:B5,2)"), "t3");
	NUM_EQ("=MATCH(\"T4\",B1:B5,0)", 4);
	NUM_EQ("=INDEX(A1:B5,2,1)", 2);
	NUM_EQ("=SUM(INDEX(A1:A5,2):A4)", 9);
	ck_assert_str_eq(text("=XLOOKUP(5,A1:A5,B1:B5)"), "t5");
	NUM_EQ("=IF(A1>0,10,20)", 10);
	NUM_EQ("=IF(AND(A1=1,OR(A2=5,A3=3)),1,0)", 1);
	NUM_EQ("=NOT(0)", 1);
	ck_assert_str_eq(text("=LEFT(\"hello\",2)&RIGHT(\"hello\")&MID(\"hello\",2,3)"), "heoell");
	NUM_EQ("=LEN(\"héllo\")", 5);
	ck_assert_str_eq(text("=TRIM(\"  a   b  \")"), "a b");
	ck_assert_str_eq(text("=UPPER(\"abc\")&LOWER(\"DEF\")"), "ABCdef");
	ck_assert_str_eq(text("=CONCATENATE(\"a\",1,TRUE)"), "a11"); /* booleans are numbers */
	ck_assert_str_eq(text("=CONCAT(B1:B3)"), "t1t2t3");
	ck_assert_str_eq(text("=TEXT(1234.567,\"#,##0.00\")"), "1,234.57");
	ck_assert_str_eq(text("=TEXT(0.256,\"0.0%\")"), "25.6%");
	ck_assert_str_eq(text("=TEXT(DATE(2024,3,1),\"yyyy-mm-dd\")"), "2024-03-01");
	NUM_EQ("=DATE(2024,1,1)", 45292);
	NUM_EQ("=DATE(2024,13,1)", 45658);
	NUM_EQ("=YEAR(45292)*10000+MONTH(45292)*100+DAY(45292)", 20240101);
	NUM_EQ("=ROUND(PMT(0.05/12,36,10000),2)", -299.71);
	NUM_EQ("=ROUND(IPMT(0.05/12,1,36,10000),2)", -41.67);
	NUM_EQ("=ROUND(PPMT(0.05/12,1,36,10000),2)", -258.04);
	NUM_EQ("=VALUE(\"12.5\")", 12.5);
	NUM_EQ("=SUMPRODUCT(A1:A3,A2:A4)", 20);
}
END_TEST

START_TEST(unsupported_is_reported)
{
	sbx_formula_value v;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_formula_eval(sheet, 0, 7, "=FORECAST.ETS(1,A1:A5,A1:A5)", &v, &err),
			 -EOPNOTSUPP);
	ck_assert_str_eq(err.msg, "unsupported function FORECAST.ETS");
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_formula_eval(sheet, 0, 7, "=MyName*2", &v, &err), -EOPNOTSUPP);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_formula_eval(sheet, 0, 7, "=SUM(1,", &v, &err), -EOPNOTSUPP);
	ck_assert(sbx_formula_function_native("_xlfn.XLOOKUP"));
	ck_assert(!sbx_formula_function_native("FORECAST.ETS"));
}
END_TEST

static void get(uint32_t r, uint32_t c, sbx_cell *out)
{
	sbx_sheet_get(sheet, r, c, out);
}

START_TEST(recalc_orders_and_finds_cycles)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_recalc_stats st;
	sbx_cell c;

	/* E1 depends on E2 which depends on E3: written in the wrong order on purpose. */
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 0, 4, "=E2*2", NULL, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 1, 4, "=E3+1", NULL, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 2, 4, "=SUM(A1:A5)", NULL, &err), 0);
	/* F1 <-> F2 is a cycle; F3 depends on it. */
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 0, 5, "=F2+1", NULL, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 1, 5, "=F1+1", NULL, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 2, 5, "=F1", NULL, &err), 0);
	/* G1 unsupported, G2 depends on it. */
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 0, 6, "=FOO(1)", NULL, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 1, 6, "=G1+1", NULL, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 2, 6, "=\"x\"&A1", NULL, &err), 0);

	ck_assert_int_eq(sbx_book_recalc(book, NULL, &st, &err), 0);
	ck_assert_uint_eq(st.formulas, 9);
	ck_assert_uint_eq(st.computed, 5);
	ck_assert_uint_eq(st.cycles, 2);
	ck_assert_uint_eq(st.unsupported, 2);
	ck_assert_str_eq(st.why, "unsupported function FOO in Sheet1!G1");
	get(0, 4, &c);
	ck_assert(c.kind == SBX_CELL_NUMBER && c.number == 32);
	ck_assert_str_eq(c.formula, "=E2*2");
	get(0, 5, &c);
	ck_assert_str_eq(c.text, "Err:522");
	get(2, 5, &c);
	ck_assert_str_eq(c.text, "Err:522");
	get(1, 6, &c);
	ck_assert_str_eq(c.text, "#NAME?");
	get(2, 6, &c);
	ck_assert_str_eq(c.text, "x1");
}
END_TEST

/* A recalculated cell agrees with evaluating its formula alone (a parse of its own). */
static void same_as_alone(uint32_t r, uint32_t col, const char *f)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_formula_value v;
	sbx_cell c;

	get(r, col, &c);
	ck_assert_msg(sbx_formula_eval(sheet, r, col, f, &v, &err) == 0, "%s: %s", f, err.msg);
	ck_assert_msg(v.kind == c.kind, "%s: kind %d alone, %d in recalc", f, v.kind, c.kind);
	if (v.text)
		ck_assert_msg(strcmp(v.text, c.text) == 0, "%s: %s / %s", f, v.text, c.text);
	else
		ck_assert_msg(v.number == c.number, "%s: %g / %g", f, v.number, c.number);
	sbx_formula_value_clear(&v);
}

START_TEST(recalc_shared_parses_and_lookups)
{
	/* Texts of one shape (references and small integers apart), and near misses. */
	static const char *const forms[] = {
		"=A1*2+1",
		"=A5*2+7",
		"=SUM($A$5:A1)",
		"=SUM($A$5:A5)",
		"=SUM(A1:A3)",
		"=SUM(A4:A2)",
		"=ROWS(1:3)",
		"=ROWS(2:3)",
		"=MOD(7,3)",
		"=MOD(8,5)",
		"='My Data'!A1+A2",
		"='My Data'!A1+A3",
		"=\"A1\"&A2",
		"=\"A1\"&A3",
		"=A2-1%",
		"=A3-2%",
		"=VLOOKUP(7,L1:M20,2,FALSE)",
		"=VLOOKUP(3,L1:M20,2,FALSE)",
		"=VLOOKUP(99,L1:M20,2,FALSE)",
		"=MATCH(\"K4\",M1:M20,0)",
		"=MATCH(\"k9\",M1:M20,0)",
		"=MATCH(\"nope\",M1:M20,0)",
		"=XLOOKUP(12,L1:L20,M1:M20)",
	};
	sbx_error err = SBX_ERROR_INIT;
	char t[8];

	for (uint32_t i = 0; i < 20; i++) {
		snprintf(t, sizeof(t), "k%u", i);
		ck_assert_int_eq(sbx_sheet_set_number(sheet, i, 11, (i * 7) % 20, &err), 0);
		ck_assert_int_eq(sbx_sheet_set_string(sheet, i, 12, t, &err), 0);
	}
	for (uint32_t i = 0; i < SBX_ELEMENTSOF(forms); i++)
		ck_assert_int_eq(sbx_sheet_set_formula(sheet, i, 13, forms[i], NULL, &err), 0);
	ck_assert_int_eq(sbx_book_recalc(book, NULL, NULL, &err), 0);
	for (uint32_t i = 0; i < SBX_ELEMENTSOF(forms); i++)
		same_as_alone(i, 13, forms[i]);
}
END_TEST

START_TEST(recalc_long_chain_and_cap)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_recalc_options o = SBX_RECALC_OPTIONS_INIT;
	sbx_recalc_stats st;
	sbx_cell c;
	char f[32];

	/* A 100,000-long chain: no recursion depth problem. */
	for (uint32_t r = 1; r < 100000; r++) {
		snprintf(f, sizeof(f), "=K%u+1", r);
		ck_assert_int_eq(sbx_sheet_set_formula(sheet, r, 10, f, NULL, &err), 0);
	}
	ck_assert_int_eq(sbx_sheet_set_number(sheet, 0, 10, 1, &err), 0);
	o.max_steps = 1000;
	ck_assert_int_eq(sbx_book_recalc(book, &o, &st, &err), -E2BIG);
	sbx_sheet_get(sheet, 99999, 10, &c);
	ck_assert_int_eq(c.kind, SBX_CELL_EMPTY); /* unchanged */
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_book_recalc(book, NULL, &st, &err), 0);
	sbx_sheet_get(sheet, 99999, 10, &c);
	ck_assert(c.kind == SBX_CELL_NUMBER && c.number == 100000);
	ck_assert_uint_eq(st.computed, 99999);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "eval", setup, teardown, 60, precedence, number_text,
		      references_and_ranges, errors, functions, unsupported_is_reported,
		      recalc_orders_and_finds_cycles, recalc_shared_parses_and_lookups,
		      recalc_long_chain_and_cap);
}

SBX_TEST_MAIN("formula", add_cases)
