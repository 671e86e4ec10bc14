/* SPDX-License-Identifier: MIT */
#pragma once

/* Internals shared by the files of lib/grade/. */

#include "sbx/grade.h"

typedef struct sbx_cmp {
	bool match;
	sbx_mismatch_reason reason;
	double diff, tolerance;
} sbx_cmp;

/* True when c holds nothing gradable: no value and no formula, or blank text. */
bool sbx_grader__is_empty(const sbx_grading_opts *o, const sbx_cell *c);

/* Compares an output cell a with an oracle cell e (both values and formulas). */
void sbx_grader__compare(const sbx_grading_opts *o, const sbx_cell *e, const sbx_cell *a,
			 sbx_cmp *out);

/* Rounds v to digits decimals, halves away from zero (decimal intent, not binary). */
double sbx_grader__round(double v, int digits);
