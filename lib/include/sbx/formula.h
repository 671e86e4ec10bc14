/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Native formula evaluation: the OpenFormula / Excel subset agents write,
 * computed in process so formula answers get values without a LibreOffice
 * start (about 3 s), and on images that have no LibreOffice at all.
 *
 * Formulas are the A1 text kept in the book ("=SUM(B2:E2)*'Other'!C2").
 * Operators with LibreOffice's precedence (":" > unary minus > "%" > "^"
 * (left-associative) > "* /" > "+ -" > "&" > comparisons), references,
 * ranges, whole columns, cross-sheet references; the functions listed in
 * lib/formula/README.md. Errors are LibreOffice's: "#DIV/0!", "#VALUE!",
 * "#REF!", "#NAME?", "#NUM!", "#N/A", "Err:502" (invalid argument) and
 * "Err:522" (circular reference).
 *
 * A formula the evaluator cannot compute exactly as LibreOffice would (an
 * unknown function, a named range, an inline array, text it cannot parse)
 * is "unsupported": it is never given a guessed value, and the reason names
 * the function and the cell ("unsupported function FORECAST.ETS in
 * Sheet1!C4") so the caller can fall back to LibreOffice or report it.
 *
 * Deterministic: no TODAY(), NOW(), RAND().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/error.h"
#include "sbx/sheet.h"

/* Work cap default: evaluation steps (nodes evaluated plus cells visited). */
#define SBX_RECALC_DEFAULT_MAX_STEPS 200000000ull

typedef struct sbx_recalc_options {
	unsigned version;
	uint64_t max_steps; /* 0: SBX_RECALC_DEFAULT_MAX_STEPS; past it -E2BIG, book unchanged */
	bool missing_only;  /* compute only formulas without a cached value (others are inputs) */
} sbx_recalc_options;

#define SBX_RECALC_OPTIONS_VERSION 1
#define SBX_RECALC_OPTIONS_INIT                                                                    \
	{                                                                                          \
		.version = SBX_RECALC_OPTIONS_VERSION                                              \
	}

typedef struct sbx_recalc_stats {
	uint64_t formulas;    /* formula cells in the book */
	uint64_t missing;     /* of those, without a cached value before the call */
	uint64_t computed;    /* given a value natively */
	uint64_t unsupported; /* not computable natively: their cached value is kept */
	uint64_t cycles;      /* in a circular reference (given Err:522) */
	uint64_t steps;	      /* work done */
	char why[256];	      /* the first unsupported formula: "unsupported function X in S!C4" */
} sbx_recalc_stats;

/*
 * Computes the book's formula cells in dependency order and stores each
 * value as the cell's cached value (the formula is kept). Unsupported cells
 * keep their cached value; one without a cached value becomes "#NAME?", and
 * so does anything that depends on it. stats (may be NULL) says what was
 * done: stats->unsupported > 0 means LibreOffice would compute more.
 * Returns 0, -E2BIG past max_steps (book unchanged), -ENOMEM.
 */
int sbx_book_recalc(sbx_book *b, const sbx_recalc_options *opts, sbx_recalc_stats *stats,
		    sbx_error *err);

/* Counts formula cells, and those without a cached value. */
void sbx_book_count_formulas(const sbx_book *b, uint64_t *formulas, uint64_t *missing);

/* A value computed by sbx_formula_eval; text is malloc'd (sbx_formula_value_clear). */
typedef struct sbx_formula_value {
	sbx_cell_kind kind; /* NUMBER, STRING, BOOL, ERROR (EMPTY never: an empty result is 0) */
	double number;
	char *text; /* STRING and ERROR */
} sbx_formula_value;

void sbx_formula_value_clear(sbx_formula_value *v);

/*
 * Evaluates one formula as if it were in cell (row, col) of sheet s, reading
 * other cells (formula cells by their cached values). Returns 0 and fills
 * *out; -EOPNOTSUPP when it is unsupported (err says why); -E2BIG past the
 * step cap; -ENOMEM.
 */
int sbx_formula_eval(const sbx_sheet *s, uint32_t row, uint32_t col, const char *formula,
		     sbx_formula_value *out, sbx_error *err);

/* True when name (case-insensitive, "_xlfn." and "COM.MICROSOFT." prefixes allowed) is native. */
bool sbx_formula_function_native(const char *name);
