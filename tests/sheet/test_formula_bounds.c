/* SPDX-License-Identifier: MIT */
/*
 * The formula evaluator's bounds (issue 24): hostile formulas, too long or too
 * deep, are unsupported with a reason and never overflow the stack; long flat
 * chains below the length bound still compute. Everything runs on a thread
 * with a small stack whose high-water mark is measured, so the figure in
 * lib/sheet/README.md is checked here (SBX_STACK_DEBUG=1 prints it per formula).
 */
#include "check_main.h"
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "formula-internal.h"
#include "sbx/formula.h"
#include "sbx/sheet.h"

/*
 * The stack the worst formula the bounds admit may use, and the thread stack
 * the tests run on (glibc's default is 8 MiB). Measured on x86-64, gcc 12:
 * 125 KiB at -O2, 367 KiB under ASan, whose frames are larger (64 nested
 * SUMIFS, each criterion a chain through all five operator levels).
 */
#ifdef __SANITIZE_ADDRESS__
#define STACK_BUDGET (512u << 10)
#define THREAD_STACK (768u << 10)
#else
#define STACK_BUDGET (192u << 10)
#define THREAD_STACK (256u << 10)
#endif
#define PAINT 0xa5

static sbx_book *book;
static sbx_sheet *sheet;

static void setup(void)
{
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_book_new(SBX_FORMAT_ODS, &book, &err), 0);
	ck_assert_int_eq(sbx_book_add_sheet(book, "Sheet1", SIZE_MAX, &sheet, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_number(sheet, 0, 0, 2, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_string(sheet, 1, 0, "x", &err), 0);
}

static void teardown(void)
{
	book = sbx_book_free(book);
}

/* "=" head, then tail n times: a malloc'd formula. */
static char *repeat(const char *head, const char *tail, size_t n, const char *end)
{
	size_t lh = strlen(head), lt = strlen(tail), le = strlen(end);
	char *s = malloc(1 + lh + lt * n + le + 1), *p = s;

	ck_assert_ptr_nonnull(s);
	*p++ = '=';
	memcpy(p, head, lh);
	p += lh;
	for (size_t i = 0; i < n; i++, p += lt)
		memcpy(p, tail, lt);
	memcpy(p, end, le + 1);
	return s;
}

/* n times open, the core, n times close: "=" + nesting. */
static char *nest(const char *open, size_t n, const char *core, const char *close)
{
	size_t lo = strlen(open), lc = strlen(close), lk = strlen(core);
	char *s = malloc(1 + (lo + lc) * n + lk + 1), *p = s;

	ck_assert_ptr_nonnull(s);
	*p++ = '=';
	for (size_t i = 0; i < n; i++, p += lo)
		memcpy(p, open, lo);
	memcpy(p, core, lk);
	p += lk;
	for (size_t i = 0; i < n; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	return s;
}

typedef struct job {
	const char *formula;
	int r;
	sbx_formula_value v;
	char msg[1024]; /* sbx_error's */
} job;

static void *eval_main(void *p)
{
	job *j = p;
	sbx_error err = SBX_ERROR_INIT;

	j->r = sbx_formula_eval(sheet, 5, 5, j->formula, &j->v, &err);
	snprintf(j->msg, sizeof(j->msg), "%s", err.msg);
	sbx_error_clear(&err);
	return NULL;
}

static size_t max_used;

/*
 * Runs fn on a thread with a THREAD_STACK-byte stack painted first, and
 * returns how much of it fn used (its high-water mark).
 */
static size_t on_small_stack(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	unsigned char *stack = aligned_alloc(4096, THREAD_STACK);
	size_t untouched = 0;

	ck_assert_ptr_nonnull(stack);
	memset(stack, PAINT, THREAD_STACK);
	ck_assert_int_eq(pthread_attr_init(&attr), 0);
	ck_assert_int_eq(pthread_attr_setstack(&attr, stack, THREAD_STACK), 0);
	ck_assert_int_eq(pthread_create(&t, &attr, fn, arg), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	pthread_attr_destroy(&attr);
	/* The stack grows down: what was never written is at the bottom. */
	while (untouched < THREAD_STACK && stack[untouched] == PAINT)
		untouched++;
	free(stack);
	if (THREAD_STACK - untouched > max_used)
		max_used = THREAD_STACK - untouched;
	return THREAD_STACK - untouched;
}

/* Evaluates f on a small stack: the return code, the value in *v (clear it). */
static int eval_small(const char *f, sbx_formula_value *v, char *msg, size_t cap)
{
	job j = {.formula = f};
	size_t used = on_small_stack(eval_main, &j);

	ck_assert_msg(used <= STACK_BUDGET, "%.40s...: %zu bytes of stack", f, used);
	if (getenv("SBX_STACK_DEBUG"))
		fprintf(stderr, "%zu %.60s\n", used, f);
	*v = j.v;
	snprintf(msg, cap, "%s", j.msg);
	return j.r;
}

/* f (malloc'd, freed here) is unsupported, err naming why. */
static void expect_unsupported(char *f, const char *why)
{
	sbx_formula_value v = {0};
	char msg[1024];
	int r = eval_small(f, &v, msg, sizeof(msg));

	ck_assert_msg(r == -EOPNOTSUPP, "%.40s...: %d", f, r);
	ck_assert_msg(strstr(msg, why), "%.40s...: '%s'", f, msg);
	free(f);
}

/* f (malloc'd, freed here) computes x. */
static void expect_number(char *f, double x)
{
	sbx_formula_value v = {0};
	char msg[1024];
	int r = eval_small(f, &v, msg, sizeof(msg));

	ck_assert_msg(r == 0, "%.40s...: %d %s", f, r, msg);
	ck_assert_msg(v.kind == SBX_CELL_NUMBER || v.kind == SBX_CELL_BOOL, "%.40s...: kind %d", f,
		      v.kind);
	ck_assert_msg(fabs(v.number - x) <= 1e-9 * fmax(1, fabs(x)), "%.40s...: %g, not %g", f,
		      v.number, x);
	sbx_formula_value_clear(&v);
	free(f);
}

static const char *const chain_ops[] = {"+1", "*1", "&1", "^1", "-1", "/1", "=1", "<>1"};

/* 50,000 terms of each operator: past the length bound, unsupported, no crash. */
START_TEST(chains_of_50000_terms)
{
	expect_unsupported(repeat("1", chain_ops[_i], 49999, ""),
			   "formula longer than 8192 characters (limit)");
}
END_TEST

/* The longest chains the length bound admits compute, in a loop, on a small stack. */
START_TEST(chains_below_the_bound_compute)
{
	char *f;

	expect_number(repeat("1", "+1", 4095, ""), 4096); /* 8,192 bytes: the most allowed */
	expect_number(repeat("1", "*1", 4095, ""), 1);
	expect_number(repeat("2", "^1", 4095, ""), 2);
	/* Cell references: 2 - 2,729 * 2. */
	expect_number(repeat("A1", "-A1", 2729, ""), 2 - 2729.0 * 2);
	/* Text grows left to right. */
	expect_number(repeat("LEN(\"a\"", "&\"a\"", 2000, ")"), 2001);
	/* Mixed levels: each right operand is a chain of the next level up. */
	expect_number(repeat("0", "+1*2^1", 1000, ""), 2000);
	/* TRUE=1 is TRUE: booleans are numbers. */
	expect_number(repeat("1", "=1", 4095, ""), 1);
	/* Errors still propagate left to right through the loop. */
	{
		sbx_formula_value v = {0};
		char msg[1024];

		f = repeat("1/0", "+A2", 1000, "");
		ck_assert_int_eq(eval_small(f, &v, msg, sizeof(msg)), 0);
		ck_assert_int_eq(v.kind, SBX_CELL_ERROR);
		ck_assert_str_eq(v.text, "#DIV/0!");
		sbx_formula_value_clear(&v);
		free(f);
	}
}
END_TEST

/* 64 levels of each kind of nesting compute; 65 are refused; thousands never crash. */
START_TEST(nesting_bounded)
{
	static const struct {
		const char *open, *core, *close;
		size_t per; /* levels each open adds */
		double at64;
	} kinds[] = {
		{"(", "1", ")", 1, 1},
		{"-", "1", "", 1, 1},
		{"+-", "1", "", 2, 1},
		{"ABS(", "1-2", ")", 1, 1},
		{"SUM(1,", "1", ")", 1, 65},
		{"IF(1,", "2", ",0)", 1, 2},
		{"IFERROR(", "1/0", ",3)", 1, 3},
		{"ROUND(", "1.5", ",0)", 1, 2},
		{"LEN(", "\"abc\"", ")", 1, 1},
		{"VALUE(TEXT(", "7", ",\"0\"))", 2, 7},
		{"INDEX(", "A1:A2", ",1,1)", 1, 2},
		{"VLOOKUP(", "2", ",A1:A2,1,0)", 1, 2},
		{"COUNTIFS(A1:A2,", "1", ")", 1, 0},
		{"SUMIFS(A1:A2,A1:A2,", "2", ")", 1, 2},
	};
	static const struct {
		const char *open, *close;
		size_t n;
	} worst[] = {
		{"-(1=1&1+2*3^(", "))", 21},
		{"1=1&1+2*3^(", ")", 64},
		{"IF(1=1&1+2*3^", ",1)", 64},
		{"SUMIFS(A1:A2,A1:A2,1=1&1+2*3^", ")", 64},
	};
	char *f;
	double v = 0;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		size_t n = 64 / kinds[k].per;

		expect_number(nest(kinds[k].open, n, kinds[k].core, kinds[k].close), kinds[k].at64);
		expect_unsupported(nest(kinds[k].open, n + 1, kinds[k].core, kinds[k].close),
				   "formula nested more than 64 levels deep (limit)");
		expect_unsupported(nest(kinds[k].open,
					8000 / (strlen(kinds[k].open) + strlen(kinds[k].close)),
					kinds[k].core, kinds[k].close),
				   "formula nested more than 64 levels deep (limit)");
		expect_unsupported(nest(kinds[k].open, 50000, kinds[k].core, kinds[k].close),
				   "formula longer than 8192 characters (limit)");
	}
	/* Every binary level inside each of 21 levels of three: -(1+2*3^(...)). */
	for (int k = 0; k < 21; k++)
		v = -(1 + 2 * pow(3, v));
	/* The stack's worst cases: a chain through every level at every nesting level. */
	for (size_t k = 0; k < sizeof(worst) / sizeof(worst[0]); k++) {
		sbx_formula_value r = {0};
		char msg[1024];

		f = nest(worst[k].open, worst[k].n, "0", worst[k].close);
		ck_assert_msg(eval_small(f, &r, msg, sizeof(msg)) == 0, "%s", msg);
		sbx_formula_value_clear(&r);
		free(f);
	}
	expect_number(nest("-(1+2*3^(", 21, "0", "))"), v);
	/* Postfix operators nest too (each one's operand is the chain before it). */
	expect_number(repeat("100000", "%", 3, ""), 0.1);
	expect_unsupported(repeat("1", "%", 65, ""),
			   "formula nested more than 64 levels deep (limit)");
	/* A1:A1 is one reference, then ":" A1:A1 ... */
	expect_unsupported(repeat("A1", ":A1", 200, ""),
			   "formula nested more than 64 levels deep (limit)");
	expect_number(repeat("SUM(1", ",1", 254, ")"), 255);
	expect_unsupported(repeat("SUM(1", ",1", 255, ")"), "more than 255 arguments (limit)");
	fprintf(stderr, "formula bounds: nesting: at most %zu bytes of stack used\n", max_used);
}
END_TEST

typedef struct recalc_job {
	int r;
	sbx_recalc_stats st;
	char msg[1024];
} recalc_job;

static void *recalc_main(void *p)
{
	recalc_job *j = p;
	sbx_error err = SBX_ERROR_INIT;

	j->r = sbx_book_recalc(book, NULL, &j->st, &err);
	snprintf(j->msg, sizeof(j->msg), "%s", err.msg);
	sbx_error_clear(&err);
	return NULL;
}

/*
 * A whole book, as grading and complete_task recalculate it: the hostile
 * cells are unsupported (no value), the others computed, on a small stack.
 */
START_TEST(recalc_survives_hostile_cells)
{
	sbx_error err = SBX_ERROR_INIT;
	recalc_job j = {0};
	sbx_cell c;
	char *f;
	size_t used;

	for (size_t k = 0; k < sizeof(chain_ops) / sizeof(chain_ops[0]); k++) {
		f = repeat("1", chain_ops[k], 49999, "");
		ck_assert_int_eq(sbx_sheet_set_formula(sheet, (uint32_t)k, 1, f, NULL, &err), 0);
		free(f);
	}
	f = nest("(", 5000, "1", ")");
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 0, 2, f, NULL, &err), 0);
	free(f);
	f = repeat("A1", "+A1", 2700, "");
	ck_assert_int_eq(sbx_sheet_set_formula(sheet, 1, 2, f, NULL, &err), 0);
	free(f);
	used = on_small_stack(recalc_main, &j);
	ck_assert_msg(used <= STACK_BUDGET, "%zu bytes of stack", used);
	ck_assert_msg(j.r == 0, "%d %s", j.r, j.msg);
	ck_assert_uint_eq(j.st.unsupported, 9);
	ck_assert_msg(strstr(j.st.why, "formula longer than 8192 characters (limit)"), "%s",
		      j.st.why);
	sbx_sheet_get(sheet, 1, 2, &c);
	ck_assert(c.kind == SBX_CELL_NUMBER && c.number == 5402);
	/* max_used: the figure lib/sheet/README.md quotes. */
	fprintf(stderr, "formula bounds: recalc: at most %zu bytes of stack used\n", max_used);
}
END_TEST

/* The evaluator's own guard, for nodes the parser did not make: 1,000 nested minus signs. */
START_TEST(eval_guards_its_depth)
{
	fx_node nodes[1001];
	fx_formula f = {.nodes = nodes, .n = 1001, .cap = 1001, .root = 1000};
	fx_ctx c = {.book = book, .f = &f, .max_steps = 1000000};
	fx_val v;

	nodes[0] = (fx_node){.op = N_NUM, .fn = -1, .num = 1};
	for (uint32_t i = 1; i <= 1000; i++)
		nodes[i] = (fx_node){.op = N_NEG, .fn = -1, .a = i - 1};
	sbx_fx__eval(&c, f.root, &v);
	ck_assert(v.type == FX_ERR && v.err == FX_E_UNSUP);
	ck_assert_str_eq(c.why, "formula nested too deeply to evaluate");
	ck_assert_uint_eq(c.depth, 0);
	sbx_fx__ctx_free(&c);
}
END_TEST

static void add_cases(Suite *s)
{
	TCase *tc = sbx_test_case(s, "bounds", setup, teardown, 120);

	SBX_TEST_TABLE(tc, chains_of_50000_terms, chain_ops);
	SBX_TEST_ADD(tc, chains_below_the_bound_compute, nesting_bounded,
		     recalc_survives_hostile_cells, eval_guards_its_depth);
}

SBX_TEST_MAIN("formula-bounds", add_cases)
