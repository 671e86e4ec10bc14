/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the formula parser and evaluator. The input is one
 * formula, evaluated in a small book of numbers, text, booleans and formula
 * cells, then placed in the book (twice, so it may reference itself or the
 * other copy) and the whole book recalculated under a small work cap. Inputs
 * go past the parser's 8,192-character bound, and everything runs on a
 * thread with a 1 MiB stack, so recursion that escaped the nesting bound
 * overflows within a few hundred levels rather than the main thread's 8 MiB.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/formula.h"
#include "sbx/sheet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sbx_book *fixture(void)
{
	sbx_book *b = NULL;
	sbx_sheet *s, *o;

	if (sbx_book_new(SBX_FORMAT_ODS, &b, NULL) < 0 ||
	    sbx_book_add_sheet(b, "Sheet1", SIZE_MAX, &s, NULL) < 0 ||
	    sbx_book_add_sheet(b, "Other Sheet", SIZE_MAX, &o, NULL) < 0)
		abort();
	for (uint32_t i = 0; i < 8; i++) {
		sbx_sheet_set_number(s, i, 0, (double)i * 1.5 - 3, NULL);
		sbx_sheet_set_string(s, i, 1, i % 2 ? "abc" : "7", NULL);
		sbx_sheet_set_bool(s, i, 2, i % 3 == 0, NULL);
		sbx_sheet_set_number(o, i, 0, i, NULL);
	}
	sbx_sheet_set_formula(s, 0, 3, "=1/0", NULL, NULL);
	sbx_sheet_set_formula(s, 1, 3, "=A1+A2", NULL, NULL);
	return b;
}

#define MAX_INPUT    16384
#define THREAD_STACK (1u << 20)

static void *one(void *p)
{
	const char *f = p;
	sbx_book *b;
	sbx_formula_value v;
	sbx_recalc_options o = SBX_RECALC_OPTIONS_INIT;
	sbx_recalc_stats st;
	int r;

	b = fixture();
	r = sbx_formula_eval(sbx_book_sheet(b, 0), 9, 4, f, &v, NULL);
	if (r == 0) {
		/* A value always has a known kind, and text when it is text. */
		if ((v.kind == SBX_CELL_STRING || v.kind == SBX_CELL_ERROR) && !v.text)
			abort();
		sbx_formula_value_clear(&v);
	} else if (r != -EOPNOTSUPP && r != -E2BIG && r != -ENOMEM) {
		abort();
	}
	if (sbx_sheet_set_formula(sbx_book_sheet(b, 0), 9, 4, f, NULL, NULL) == 0 &&
	    sbx_sheet_set_formula(sbx_book_sheet(b, 0), 10, 4, f, NULL, NULL) == 0) {
		o.max_steps = 200000;
		r = sbx_book_recalc(b, &o, &st, NULL);
		if (r < 0 && r != -E2BIG && r != -ENOMEM)
			abort();
		if (r == 0 && st.computed + st.unsupported + st.cycles != st.formulas)
			abort();
	}
	sbx_book_free(b);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pthread_attr_t attr;
	pthread_t t;
	char *f;

	if (size > MAX_INPUT)
		return 0;
	f = malloc(size + 1);
	if (!f)
		return 0;
	memcpy(f, data, size);
	f[size] = '\0';
	if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, THREAD_STACK) != 0 ||
	    pthread_create(&t, &attr, one, f) != 0)
		abort();
	pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	free(f);
	return 0;
}
