/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The grading engine: an output workbook against an oracle workbook, cell by
 * cell, under a grading configuration (sbx_grading_opts from sbx/task.h).
 *
 * Scope: the oracle's sheets (or opts->sheets), each over the oracle's used
 * range (or the opts->ranges that apply to it). Empty oracle cells are not
 * graded unless skip_empty is off; in strict mode, content in the output
 * where the oracle is empty counts as a graded, mismatched cell.
 *
 * A graded cell matches when its value matches (numbers within
 * max(tolerance, relative_tolerance * |expected|) after optional rounding;
 * strings after trim / case folding / whitespace collapsing; a numeric string
 * against a number when numeric_strings is on) and, with formulas: require,
 * the output has a formula where the oracle has one (formulas: match: the
 * normalised formula text is equal too).
 *
 * Score = matched / graded. Status:
 *   FAIL     the output is missing or unreadable, a sheet is missing under
 *            missing_sheet: fail, nothing matched, or score < fail_threshold;
 *   PASS     otherwise when score >= pass_threshold;
 *   PARTIAL  otherwise.
 * Several cases: soft = fraction of cases passed, hard = all passed; the
 * overall status is PASS when all passed, FAIL when all failed, else PARTIAL;
 * the overall score is matched / graded over every case.
 * Gate cases (e.g. "the inputs are unchanged") count for nothing in the
 * score; when one does not PASS, the overall status is FAIL and the score 0.
 *
 * Deterministic, never prints; hostile files fail with a one-line error.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/buf.h"
#include "sbx/error.h"
#include "sbx/sheet.h"
#include "sbx/task.h"

/* Mismatches kept per case (the count goes on past it). */
#define SBX_GRADE_MAX_MISMATCHES 100000
/* Bytes of a value's text kept in a mismatch (longer text ends in "..."). */
#define SBX_GRADE_MAX_VALUE 512

typedef enum sbx_grade_status {
	SBX_GRADE_PASS = 0,
	SBX_GRADE_PARTIAL,
	SBX_GRADE_FAIL,
} sbx_grade_status;

/*
 * "PASS", "PARTIAL", "FAIL". Inline, so lib/run and lib/serve, which take a
 * grade through sbx_run_grade without linking the grader, name it the same way.
 */
static inline const char *sbx_grade_status_name(sbx_grade_status s)
{
	return s == SBX_GRADE_PASS ? "PASS" : s == SBX_GRADE_PARTIAL ? "PARTIAL" : "FAIL";
}

typedef enum sbx_mismatch_reason {
	SBX_MISMATCH_NUMBER,	      /* numeric mismatch: diff, tolerance */
	SBX_MISMATCH_TEXT,	      /* text mismatch */
	SBX_MISMATCH_TYPE,	      /* type mismatch (e.g. expected number, got text) */
	SBX_MISMATCH_MISSING,	      /* expected a value, got an empty cell */
	SBX_MISMATCH_EXTRA,	      /* content where the oracle is empty */
	SBX_MISMATCH_FORMULA_MISSING, /* oracle has a formula, output has none */
	SBX_MISMATCH_FORMULA_DIFFERS, /* normalised formula text differs */
	SBX_MISMATCH_SHEET_MISSING,   /* a whole sheet is missing (row/col unused) */
} sbx_mismatch_reason;

/* "numeric mismatch", "text mismatch", ... as in the text report. */
const char *sbx_mismatch_reason_name(sbx_mismatch_reason r);
/* "number", "text", ... as in JSON. */
const char *sbx_mismatch_reason_id(sbx_mismatch_reason r);

typedef struct sbx_grade_mismatch {
	sbx_mismatch_reason reason;
	char *sheet;
	uint32_t row, col;	/* 0-based; unused for SHEET_MISSING */
	uint64_t cells;		/* SHEET_MISSING: graded cells it held; else 1 */
	char *expected;		/* display text of the oracle value ("" for empty) */
	char *got;		/* display text of the output value */
	char *expected_formula; /* NULL when none */
	char *got_formula;	/* NULL when none */
	bool expected_empty, got_empty;
	sbx_cell_kind expected_kind, got_kind;
	double diff, tolerance; /* NUMBER only */
} sbx_grade_mismatch;

typedef struct sbx_grade_case_result {
	char *name;
	char *output; /* the paths graded (may be NULL when books were passed in) */
	char *oracle;
	sbx_grade_status status;
	double score;
	uint64_t graded, matched;
	sbx_grading_opts opts; /* graded under; owns strip_chars; sheets, ranges, pairs not kept */
	char *failure;	       /* why the case failed outright (missing output...), or NULL */
	char **missing_sheets;
	size_t n_missing_sheets;
	sbx_grade_mismatch *mismatches;
	size_t n_mismatches;	   /* kept */
	uint64_t mismatches_total; /* counted (cells; a missing sheet counts its cells) */
	bool gate;		   /* a gate case (sbx_grading_case.gate) */
} sbx_grade_case_result;

/*
 * Formula values the grader computed itself: an output holding formulas
 * without cached values (nothing in the sandbox computed them) is
 * recalculated natively before grading, so a right formula is not graded
 * "missing value". Cached values are never replaced.
 */
typedef struct sbx_grade_recalc {
	uint64_t formulas;    /* formula cells in the outputs graded */
	uint64_t missing;     /* of those, without a cached value */
	uint64_t computed;    /* given a value natively by the grader */
	uint64_t unsupported; /* not computable natively: graded as "#NAME?" */
	char why[256];	      /* the first of those: "unsupported function X in S!C4" */
} sbx_grade_recalc;

/* "native" when the grader computed any formula value, else "none". */
const char *sbx_grade_recalc_method(const sbx_grade_recalc *r);

typedef struct sbx_grade_result {
	sbx_grade_case_result *cases;
	size_t n_cases;
	sbx_grade_status status;
	double score; /* matched / graded over all cases */
	uint64_t graded, matched;
	double soft;	  /* fraction of cases passed */
	bool hard;	  /* every case passed */
	bool gate_failed; /* a gate case did not pass: FAIL, score 0 */
	sbx_grade_recalc recalc;
} sbx_grade_result;

/*
 * Grades output against oracle under opts into *out (the caller frees it with
 * sbx_grade_case_result_clear). output NULL means the output is missing
 * (output_problem says why; the case FAILs with every graded cell counted).
 * Returns 0, or a negative errno for a bad configuration (a range naming a
 * sheet the oracle lacks, a sheet index out of range, nothing to grade).
 */
int sbx_grade_books(const sbx_grading_opts *opts, const sbx_book *output,
		    const char *output_problem, const sbx_book *oracle, sbx_grade_case_result *out,
		    sbx_error *err);

void sbx_grade_case_result_clear(sbx_grade_case_result *r);

/*
 * Grades every case of spec: outputs[i] against oracles[i] (file paths, any
 * format sbx/sheet reads, e.g. an XLSX output against an ODS oracle). A
 * missing or unreadable output fails that case; an unreadable oracle or a
 * bad configuration is an error (negative errno). On success *out is
 * malloc'd (sbx_grade_result_free).
 */
int sbx_grade_files(const sbx_grading_spec *spec, const char *const *outputs,
		    const char *const *oracles, sbx_grade_result **out, sbx_error *err);

/*
 * Grades a task: case i uses the oracle in task->dir and the output found
 * under output (a directory holding the task's outputs, or, when the task has
 * a single output, the output file itself). Errors as sbx_grade_files.
 */
int sbx_grade_task(const sbx_task *task, const char *output, sbx_grade_result **out,
		   sbx_error *err);

/*
 * A task's self-check (tasks validate): its oracle opens as a workbook and
 * grades PASS against itself (every range names a sheet it has), each .ods
 * or .xlsx starting file opens and has the sheets named by the gate cases
 * that read its output, and its untouched starting files, as an agent that
 * does nothing leaves them, score 0 and do not pass. Returns 0 or -EINVAL etc. with the reason.
 */
int sbx_grade_task_check(const sbx_task *task, sbx_error *err);

/* Frees a result. Accepts NULL; returns NULL. */
sbx_grade_result *sbx_grade_result_free(sbx_grade_result *r);
SBX_DEFINE_CLEANUP(sbx_grade_result, sbx_grade_result_free)

/* Fills the overall fields of r from its cases. */
void sbx_grade_result_summarise(sbx_grade_result *r);

/*
 * The report for people: a status line, then per case (when several) its
 * line, then at most max_lines mismatch lines per case such as
 * "Sheet1!D5: expected=2167.61, got=2100 (numeric mismatch: diff=67.61, tolerance=0.01)".
 * Appended to out.
 */
int sbx_grade_report_text(const sbx_grade_result *r, size_t max_lines, sbx_buf *out);

struct cJSON;

/*
 * The full report as a JSON tree (every kept mismatch), for a caller that
 * passes it on without printing it (lib/run's grade). The caller owns it
 * (cJSON_Delete); NULL on OOM.
 */
struct cJSON *sbx_grade_report_tree(const sbx_grade_result *r);

/* The same report as JSON text, unformatted. Returns malloc'd text or NULL on OOM. */
char *sbx_grade_report_json(const sbx_grade_result *r);

/* One mismatch as a report line (without newline), appended to out. */
int sbx_grade_mismatch_format(const sbx_grade_mismatch *m, sbx_buf *out);
