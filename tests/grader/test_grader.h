/* SPDX-License-Identifier: MIT */
/*
 * What the test-grader files share: their includes, the two books the
 * "books" case grades (test_grader.c), the helpers that fill and grade them,
 * and each file's tests.
 */
#pragma once

#include "check_main.h"
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/grade.h"
#include "sbx/json.h"

extern sbx_grading_opts opts;
extern sbx_book *oracle, *output;
extern sbx_grade_case_result result; /* of the last grade() */

/* The sheet called name in b, added when it has none. */
sbx_sheet *sheet_of(sbx_book *b, const char *name);
/* A number, a string or a formula with its cached value at (row, col) of sheet in b. */
void num(sbx_book *b, const char *sheet, uint32_t row, uint32_t col, double v);
void str(sbx_book *b, const char *sheet, uint32_t row, uint32_t col, const char *v);
void formula(sbx_book *b, const char *sheet, uint32_t row, uint32_t col, const char *f,
	     double cached);
/* Both books: a banking-like Sheet1, header row plus 5 rows of 4 columns. */
void both(void (*fn)(sbx_book *b));
void banking(sbx_book *b);
/* Grades output against oracle into result, replacing what it held. */
void grade(void);
/* grade(), then checks how many cells it graded and how many of them matched. */
void grade_counts(unsigned graded, unsigned matched);
/* res's mismatch i as its report line (free it). */
char *line(const sbx_grade_case_result *res, size_t i);

#define ck_assert_line(res, i, want)                                                               \
	do {                                                                                       \
		char *l_ = line(res, i);                                                           \
		ck_assert_str_eq(l_, want);                                                        \
		free(l_);                                                                          \
	} while (0)

/* Each file's tests, added in this order: the first two to the case "books". */
void grader_value_tests(TCase *books); /* test_grader_values.c */
void grader_book_tests(TCase *books);  /* test_grader_books.c */
void grader_reference_cases(Suite *s); /* test_grader_books.c */
