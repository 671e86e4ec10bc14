/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/json.h"
#include "grader-internal.h"

/* Each reason's words for people and its id for JSON. */
static const struct {
	const char *name, *id;
} reasons[] = {
	[SBX_MISMATCH_NUMBER] = {"numeric mismatch", "number"},
	[SBX_MISMATCH_TEXT] = {"text mismatch", "text"},
	[SBX_MISMATCH_TYPE] = {"type mismatch", "type"},
	[SBX_MISMATCH_MISSING] = {"missing value", "missing"},
	[SBX_MISMATCH_EXTRA] = {"unexpected content", "extra"},
	[SBX_MISMATCH_FORMULA_MISSING] = {"formula missing", "formula_missing"},
	[SBX_MISMATCH_FORMULA_DIFFERS] = {"formula differs", "formula_differs"},
	[SBX_MISMATCH_SHEET_MISSING] = {"missing sheet", "sheet_missing"},
};

const char *sbx_mismatch_reason_name(sbx_mismatch_reason r)
{
	return r <= SBX_MISMATCH_SHEET_MISSING ? reasons[r].name : "mismatch";
}

const char *sbx_mismatch_reason_id(sbx_mismatch_reason r)
{
	return r <= SBX_MISMATCH_SHEET_MISSING ? reasons[r].id : "mismatch";
}

static char *cell_name(const sbx_grade_mismatch *m)
{
	sbx_ref ref = {.row = m->row, .col = m->col};

	return sbx_range_format(m->sheet, &ref, &ref);
}

/* A value as people read it: empty, a number as is, text quoted. */
static int put_value(sbx_buf *out, const char *text, bool empty, sbx_cell_kind kind)
{
	int r = 0;

	if (empty)
		return sbx_buf_puts(out, "empty");
	if (kind != SBX_CELL_STRING)
		return sbx_buf_puts(out, text);
	r = sbx_buf_putc(out, '"');
	for (const char *p = text; *p && r >= 0; p++) {
		if (*p == '"' || *p == '\\')
			r = sbx_buf_printf(out, "\\%c", *p);
		else if (*p == '\n')
			r = sbx_buf_puts(out, "\\n");
		else if ((unsigned char)*p < 0x20)
			r = sbx_buf_printf(out, "\\x%02x", (unsigned char)*p);
		else
			r = sbx_buf_putc(out, *p);
	}
	return r < 0 ? r : sbx_buf_putc(out, '"');
}

int sbx_grade_mismatch_format(const sbx_grade_mismatch *m, sbx_buf *out)
{
	char *cell;
	int r;

	if (m->reason == SBX_MISMATCH_SHEET_MISSING)
		return sbx_buf_printf(out, "%s: missing sheet (%llu graded cells)", m->sheet,
				      (unsigned long long)m->cells);
	cell = cell_name(m);
	if (!cell)
		return -ENOMEM;
	r = sbx_buf_printf(out, "%s: ", cell);
	free(cell);
	if (r < 0)
		return r;
	if (m->reason == SBX_MISMATCH_FORMULA_MISSING ||
	    m->reason == SBX_MISMATCH_FORMULA_DIFFERS) {
		r = sbx_buf_printf(out, "expected formula %s, ", m->expected_formula);
		if (r >= 0 && m->got_formula)
			r = sbx_buf_printf(out, "got formula %s", m->got_formula);
		else if (r >= 0) {
			r = sbx_buf_puts(out, "got=");
			if (r >= 0)
				r = put_value(out, m->got, m->got_empty, m->got_kind);
		}
		return r < 0 ? r
			     : sbx_buf_printf(out, " (%s)", sbx_mismatch_reason_name(m->reason));
	}
	r = sbx_buf_puts(out, "expected=");
	if (r >= 0)
		r = put_value(out, m->expected, m->expected_empty, m->expected_kind);
	if (r >= 0)
		r = sbx_buf_puts(out, ", got=");
	if (r >= 0)
		r = put_value(out, m->got, m->got_empty, m->got_kind);
	if (r < 0)
		return r;
	switch (m->reason) {
	case SBX_MISMATCH_NUMBER:
		return sbx_buf_printf(out, " (numeric mismatch: diff=%.10g, tolerance=%.10g)",
				      m->diff, m->tolerance);
	case SBX_MISMATCH_TYPE:
		return sbx_buf_printf(out, " (type mismatch: expected %s, got %s)",
				      sbx_cell_kind_name(m->expected_kind),
				      sbx_cell_kind_name(m->got_kind));
	default:
		return sbx_buf_printf(out, " (%s)", sbx_mismatch_reason_name(m->reason));
	}
}

static int case_line(const sbx_grade_case_result *c, sbx_buf *out)
{
	return sbx_buf_printf(out, "%s %llu/%llu cells matched (%.2f%%; pass at >= %.2f%%)\n",
			      sbx_grade_status_name(c->status), (unsigned long long)c->matched,
			      (unsigned long long)c->graded, 100.0 * c->score,
			      100.0 * c->opts.pass_threshold);
}

int sbx_grade_report_text(const sbx_grade_result *res, size_t max_lines, sbx_buf *out)
{
	bool several = res->n_cases > 1;
	size_t passed = 0;
	int r = 0;

	for (size_t i = 0; i < res->n_cases; i++)
		passed += res->cases[i].status == SBX_GRADE_PASS;
	if (several)
		r = sbx_buf_printf(out,
				   "%s %zu/%zu cases passed (soft %.2f, hard %d); %llu/%llu cells "
				   "matched (%.2f%%)%s\n",
				   sbx_grade_status_name(res->status), passed, res->n_cases,
				   res->soft, res->hard, (unsigned long long)res->matched,
				   (unsigned long long)res->graded, 100.0 * res->score,
				   res->gate_failed ? "; a gate failed: score 0" : "");
	for (size_t i = 0; i < res->n_cases && r >= 0; i++) {
		const sbx_grade_case_result *c = &res->cases[i];
		const char *indent = several ? "  " : "";
		size_t shown;

		if (several)
			r = sbx_buf_printf(out, "case '%s'%s: ", c->name,
					   c->gate ? " (gate: must pass)" : "");
		if (r >= 0)
			r = case_line(c, out);
		if (r >= 0 && c->failure)
			r = sbx_buf_printf(out, "%s%s\n", indent, c->failure);
		shown = c->n_mismatches < max_lines ? c->n_mismatches : max_lines;
		for (size_t k = 0; k < shown && r >= 0; k++) {
			r = sbx_buf_puts(out, indent);
			if (r >= 0)
				r = sbx_grade_mismatch_format(&c->mismatches[k], out);
			if (r >= 0)
				r = sbx_buf_putc(out, '\n');
		}
		if (r >= 0 && c->n_mismatches > shown)
			r = sbx_buf_printf(
				out, "%s... %zu more mismatches (the JSON report has them all)\n",
				indent, c->n_mismatches - shown);
	}
	if (r >= 0 && res->recalc.missing)
		r = sbx_buf_printf(
			out, "recalc: %s, %llu of %llu formula cells without values computed%s%s\n",
			sbx_grade_recalc_method(&res->recalc),
			(unsigned long long)res->recalc.computed,
			(unsigned long long)res->recalc.missing,
			res->recalc.why[0] ? "; not computed: " : "", res->recalc.why);
	return r;
}

/* A value in its JSON type: numbers as numbers, booleans as booleans, empty as null. */
static bool value_json(cJSON *o, const char *key, bool empty, sbx_cell_kind kind, const char *text)
{
	char *end;
	double v;

	if (empty)
		return !!cJSON_AddNullToObject(o, key);
	if (kind == SBX_CELL_BOOL)
		return sbx_json_add_bool(o, key, strcmp(text, "TRUE") == 0) >= 0;
	if (kind == SBX_CELL_NUMBER || kind == SBX_CELL_PERCENT || kind == SBX_CELL_CURRENCY) {
		v = strtod(text, &end);
		if (end != text && !*end && isfinite(v))
			return sbx_json_add_number(o, key, v) >= 0;
	}
	return sbx_json_add_string(o, key, text) >= 0;
}

static cJSON *mismatch_json(const sbx_grade_mismatch *m)
{
	cJSON *o = cJSON_CreateObject();
	char *cell = NULL, col[4];
	bool ok;

	if (!o)
		return NULL;
	ok = sbx_json_add_string(o, "reason", sbx_mismatch_reason_id(m->reason)) >= 0 &&
	     sbx_json_add_string(o, "sheet", m->sheet) >= 0;
	if (ok && m->reason == SBX_MISMATCH_SHEET_MISSING) {
		ok = sbx_json_add_number(o, "cells", (double)m->cells) >= 0;
	} else if (ok) {
		cell = cell_name(m);
		ok = cell && sbx_json_add_string(o, "cell", cell) >= 0 &&
		     sbx_json_add_number(o, "row", m->row + 1.0) >= 0 &&
		     sbx_json_add_string(o, "col", sbx_ref_col_name(m->col, col)) >= 0 &&
		     value_json(o, "expected", m->expected_empty, m->expected_kind, m->expected) &&
		     sbx_json_add_string(o, "expected_type",
					 sbx_cell_kind_name(m->expected_empty
								    ? SBX_CELL_EMPTY
								    : m->expected_kind)) >= 0 &&
		     value_json(o, "got", m->got_empty, m->got_kind, m->got) &&
		     sbx_json_add_string(
			     o, "got_type",
			     sbx_cell_kind_name(m->got_empty ? SBX_CELL_EMPTY : m->got_kind)) >= 0;
		if (ok && m->reason == SBX_MISMATCH_NUMBER)
			ok = sbx_json_add_number(o, "diff", m->diff) >= 0 &&
			     sbx_json_add_number(o, "tolerance", m->tolerance) >= 0;
		if (ok && m->expected_formula)
			ok = sbx_json_add_string(o, "expected_formula", m->expected_formula) >= 0;
		if (ok && m->got_formula)
			ok = sbx_json_add_string(o, "got_formula", m->got_formula) >= 0;
		free(cell);
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* The options a case was graded under, so a stored report explains itself. */
static bool options_json(cJSON *parent, const sbx_grading_opts *o)
{
	static const char *const formulas[] = {"ignore", "require", "match"};
	cJSON *j = cJSON_AddObjectToObject(parent, "options");

	return j && sbx_json_add_number(j, "tolerance", o->abs_tol) >= 0 &&
	       sbx_json_add_number(j, "relative_tolerance", o->rel_tol) >= 0 &&
	       (o->round_digits < 0 ? !!cJSON_AddNullToObject(j, "round")
				    : sbx_json_add_number(j, "round", o->round_digits) >= 0) &&
	       sbx_json_add_bool(j, "trim", o->trim) >= 0 &&
	       sbx_json_add_bool(j, "ignore_case", o->ignore_case) >= 0 &&
	       sbx_json_add_bool(j, "collapse_whitespace", o->collapse_whitespace) >= 0 &&
	       sbx_json_add_bool(j, "numeric_strings", o->numeric_strings) >= 0 &&
	       sbx_json_add_bool(j, "skip_empty", o->skip_empty) >= 0 &&
	       sbx_json_add_bool(j, "strict", o->strict) >= 0 &&
	       sbx_json_add_string(j, "formulas",
				   formulas[o->formulas <= SBX_FORMULA_MATCH ? o->formulas : 0]) >=
		       0 &&
	       sbx_json_add_string(j, "missing_sheet",
				   o->missing_sheet == SBX_MISSING_SHEET_FAIL ? "fail"
									      : "mismatch") >= 0 &&
	       sbx_json_add_number(j, "pass_threshold", o->pass_threshold) >= 0 &&
	       sbx_json_add_number(j, "fail_threshold", o->fail_threshold) >= 0 &&
	       (o->strip_chars ? sbx_json_add_string(j, "strip_chars", o->strip_chars) >= 0
			       : !!cJSON_AddNullToObject(j, "strip_chars")) &&
	       sbx_json_add_number(j, "replace_pairs", (double)o->n_replace) >= 0;
}

static cJSON *case_json(const sbx_grade_case_result *c)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	bool ok;

	if (!o)
		return NULL;
	ok = sbx_json_add_string(o, "name", c->name ? c->name : "default") >= 0 &&
	     (c->output ? sbx_json_add_string(o, "output", c->output) >= 0 : true) &&
	     (c->oracle ? sbx_json_add_string(o, "oracle", c->oracle) >= 0 : true) &&
	     sbx_json_add_string(o, "status", sbx_grade_status_name(c->status)) >= 0 &&
	     sbx_json_add_bool(o, "gate", c->gate) >= 0 &&
	     sbx_json_add_number(o, "score", c->score) >= 0 &&
	     sbx_json_add_number(o, "graded", (double)c->graded) >= 0 &&
	     sbx_json_add_number(o, "matched", (double)c->matched) >= 0 &&
	     sbx_json_add_number(o, "pass_threshold", c->opts.pass_threshold) >= 0 &&
	     (c->failure ? sbx_json_add_string(o, "failure", c->failure) >= 0
			 : !!cJSON_AddNullToObject(o, "failure")) &&
	     sbx_json_add_number(o, "mismatches_total", (double)c->mismatches_total) >= 0 &&
	     sbx_json_add_bool(o, "mismatches_truncated",
			       c->n_mismatches >= SBX_GRADE_MAX_MISMATCHES) >= 0 &&
	     options_json(o, &c->opts);
	arr = ok ? cJSON_AddArrayToObject(o, "missing_sheets") : NULL;
	for (size_t i = 0; arr && i < c->n_missing_sheets; i++) {
		cJSON *s = cJSON_CreateString(c->missing_sheets[i]);

		if (!s || !cJSON_AddItemToArray(arr, s)) {
			cJSON_Delete(s);
			arr = NULL;
		}
	}
	arr = arr ? cJSON_AddArrayToObject(o, "mismatches") : NULL;
	for (size_t i = 0; arr && i < c->n_mismatches; i++) {
		cJSON *m = mismatch_json(&c->mismatches[i]);

		if (!m || !cJSON_AddItemToArray(arr, m)) {
			cJSON_Delete(m);
			arr = NULL;
		}
	}
	if (!arr) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

cJSON *sbx_grade_report_tree(const sbx_grade_result *res)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	cJSON *arr;
	bool ok;

	if (!o)
		return NULL;
	ok = sbx_json_add_string(o, "status", sbx_grade_status_name(res->status)) >= 0 &&
	     sbx_json_add_bool(o, "passed", res->status == SBX_GRADE_PASS) >= 0 &&
	     sbx_json_add_number(o, "score", res->score) >= 0 &&
	     sbx_json_add_number(o, "graded", (double)res->graded) >= 0 &&
	     sbx_json_add_number(o, "matched", (double)res->matched) >= 0 &&
	     sbx_json_add_number(o, "soft", res->soft) >= 0 &&
	     sbx_json_add_bool(o, "hard", res->hard) >= 0 &&
	     sbx_json_add_bool(o, "gate_failed", res->gate_failed) >= 0;
	cJSON *rc = ok ? cJSON_AddObjectToObject(o, "recalc") : NULL;
	ok = rc && sbx_json_add_string(rc, "method", sbx_grade_recalc_method(&res->recalc)) >= 0 &&
	     sbx_json_add_number(rc, "formulas", (double)res->recalc.formulas) >= 0 &&
	     sbx_json_add_number(rc, "missing", (double)res->recalc.missing) >= 0 &&
	     sbx_json_add_number(rc, "native", (double)res->recalc.computed) >= 0 &&
	     sbx_json_add_number(rc, "unsupported", (double)res->recalc.unsupported) >= 0 &&
	     (!res->recalc.why[0] || sbx_json_add_string(rc, "why", res->recalc.why) >= 0);
	arr = ok ? cJSON_AddArrayToObject(o, "cases") : NULL;
	for (size_t i = 0; arr && i < res->n_cases; i++) {
		cJSON *c = case_json(&res->cases[i]);

		if (!c || !cJSON_AddItemToArray(arr, c)) {
			cJSON_Delete(c);
			return NULL;
		}
	}
	return arr ? TAKE_PTR(o) : NULL;
}

char *sbx_grade_report_json(const sbx_grade_result *res)
{
	_cleanup_json_ cJSON *o = sbx_grade_report_tree(res);

	return o ? sbx_json_print(o) : NULL;
}
