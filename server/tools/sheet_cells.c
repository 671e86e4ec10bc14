/* SPDX-License-Identifier: MIT */
/*
 * Cell tools: read_cell, write_cell, read_range, write_range, set_formula,
 * clear_range, find_cells. Names, arguments and result fields follow the
 * reference system's contract; the extras are additive.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wbcache.h"

#define MAX_RANGE_CELLS 250000u

/* The sheet a "Sheet1!B2"-style reference names, or NULL. */
static const char *ref_sheet(const cJSON *args, sbx_range *range)
{
	static const char *const keys[] = {"cell_reference", "start_cell", "end_cell"};

	for (size_t i = 0; i < SBX_ELEMENTSOF(keys); i++) {
		const char *text = sbx_json_get_string(args, keys[i], NULL);

		if (text && strchr(text, '!') && sbx_range_parse(text, range, NULL) == 0 &&
		    range->sheet[0])
			return range->sheet;
	}
	return NULL;
}

static sbx_sheet *open_sheet(tool_context *ctx, const cJSON *args, wb_handle *h, tool_result *out)
{
	const char *named = sbx_json_get_string(args, "sheet_name", NULL);
	sbx_range range;
	const char *in_ref = ref_sheet(args, &range);
	sbx_sheet *s;

	if (in_ref && named && strcasecmp(in_ref, named) != 0) {
		tool_fail(out, TOOL_E_ARGUMENT,
			  "The reference names sheet '%s' but sheet_name is '%s'", in_ref, named);
		return NULL;
	}
	if (!in_ref || named)
		return wb_open_sheet(ctx, args, h, out);
	if (wb_open(ctx, args, h, out) < 0)
		return NULL;
	s = sbx_book_find(h->book, in_ref);
	if (!s)
		wb_fail_keep(h, out, "Sheet '%s' not found", in_ref);
	return s;
}

/* Stores a JSON value into a cell: strings starting with '=' are formulas, null clears. */
static int put_value(sbx_sheet *s, uint32_t row, uint32_t col, const cJSON *v, sbx_error *err)
{
	if (cJSON_IsNull(v))
		return sbx_sheet_clear(s, row, col);
	if (cJSON_IsBool(v))
		return sbx_sheet_set_bool(s, row, col, cJSON_IsTrue(v), err);
	if (cJSON_IsNumber(v))
		return sbx_sheet_set_number(s, row, col, v->valuedouble, err);
	if (cJSON_IsString(v) && v->valuestring[0] == '=' && v->valuestring[1])
		return sbx_sheet_set_formula(s, row, col, v->valuestring, NULL, err);
	if (cJSON_IsString(v))
		return sbx_sheet_set_string(s, row, col, v->valuestring, err);
	return sbx_error_set(err, -EINVAL, "unsupported value type");
}

/* The one cell a tool works on: its reference parsed, its sheet open in h. */
typedef struct cell_target {
	const char *ref;
	uint32_t row, col;
	wb_handle h;
	sbx_sheet *s;
} cell_target;

/* Parses cell_reference, then opens the sheet; 0, or -EINVAL with the failure in out. */
static int open_cell(tool_context *ctx, const cJSON *args, cell_target *t, tool_result *out)
{
	t->ref = sbx_json_get_string(args, "cell_reference", "");
	if (cell_parse(t->ref, &t->row, &t->col, out) < 0)
		return -EINVAL;
	t->s = open_sheet(ctx, args, &t->h, out);
	return t->s ? 0 : -EINVAL;
}

/* The answer of a tool that wrote one cell: {success, cell_reference}, or NULL. */
static cJSON *cell_written(const char *ref)
{
	cJSON *o = cJSON_CreateObject();

	if (o) {
		cJSON_AddBoolToObject(o, "success", true);
		cJSON_AddStringToObject(o, "cell_reference", ref);
	}
	return o;
}

static int read_cell(tool_context *ctx, const cJSON *args, tool_result *out)
{
	sbx_cell c = SBX_CELL_INIT;
	cell_target t;
	cJSON *o;

	if (open_cell(ctx, args, &t, out) < 0)
		return 0;
	sbx_sheet_get(t.s, t.row, t.col, &c);
	o = out->structured = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "cell_reference", t.ref);
		cJSON_AddItemToObject(o, "value", cell_value_json(&c));
		cJSON_AddStringToObject(o, "value_type", cell_type_name(&c));
		if (c.formula)
			cJSON_AddStringToObject(o, "formula", c.formula);
		else
			cJSON_AddNullToObject(o, "formula");
	}
	wb_close(&t.h);
	return o ? 0 : -ENOMEM;
}

static int write_cell(tool_context *ctx, const cJSON *args, tool_result *out)
{
	const cJSON *value = sbx_json_get(args, "value");
	sbx_error err = SBX_ERROR_INIT;
	sbx_cell c = SBX_CELL_INIT;
	cell_target t;
	cJSON *o;

	if (open_cell(ctx, args, &t, out) < 0)
		return 0;
	if (put_value(t.s, t.row, t.col, value, &err) < 0)
		return wb_fail_discard(&t.h, out, "Cannot write %s: %s", t.ref,
				       sbx_error_message(&err));
	sbx_sheet_get(t.s, t.row, t.col, &c);
	o = cell_written(t.ref);
	if (o) {
		cJSON_AddItemToObject(o, "new_value", cJSON_Duplicate(value, true));
		cJSON_AddStringToObject(o, "value_type", cell_type_name(&c));
	}
	return wb_save_answer(ctx, &t.h, out, o, true);
}

static int set_formula(tool_context *ctx, const cJSON *args, tool_result *out)
{
	const char *ref = sbx_json_get_string(args, "cell_reference", "");
	const char *formula = sbx_json_get_string(args, "formula", "");
	sbx_error err = SBX_ERROR_INIT;
	sbx_cell c = SBX_CELL_INIT;
	uint32_t row, col;
	wb_handle h;
	sbx_sheet *s;
	cJSON *o;

	/* The cell is checked before the formula, the formula before the file. */
	if (cell_parse(ref, &row, &col, out) < 0)
		return 0;
	while (*formula == ' ')
		formula++;
	if (!*formula || strcmp(formula, "=") == 0)
		return tool_fail(out, TOOL_E_ARGUMENT, "Invalid formula: empty");
	if (!(s = open_sheet(ctx, args, &h, out)))
		return 0;
	if (sbx_sheet_set_formula(s, row, col, formula, NULL, &err) < 0)
		return wb_fail_discard(&h, out, "Cannot set the formula in %s: %s", ref,
				       sbx_error_message(&err));
	sbx_sheet_get(s, row, col, &c);
	o = cell_written(ref);
	if (o) {
		cJSON_AddStringToObject(o, "formula", c.formula ? c.formula : formula);
		cJSON_AddStringToObject(o, "note",
					"The formula has no computed value until the workbook "
					"is recalculated (call recalculate).");
	}
	return wb_save_answer(ctx, &h, out, o, true);
}

/* Parses start/end into a normalised rectangle; checks the size cap. */
static int parse_range(const cJSON *args, uint32_t *r0, uint32_t *c0, uint32_t *r1, uint32_t *c1,
		       tool_result *out)
{
	uint32_t t;

	if (cell_parse(sbx_json_get_string(args, "start_cell", ""), r0, c0, out) < 0 ||
	    cell_parse(sbx_json_get_string(args, "end_cell", ""), r1, c1, out) < 0)
		return -EINVAL;
	if (*r1 < *r0)
		t = *r0, *r0 = *r1, *r1 = t;
	if (*c1 < *c0)
		t = *c0, *c0 = *c1, *c1 = t;
	if ((uint64_t)(*r1 - *r0 + 1) * (*c1 - *c0 + 1) > MAX_RANGE_CELLS)
		return tool_fail(out, TOOL_E_ARGUMENT, "Range too large: at most %u cells per call",
				 MAX_RANGE_CELLS),
		       -E2BIG;
	return 0;
}

static int read_range(tool_context *ctx, const cJSON *args, tool_result *out)
{
	bool formulas = strcmp(sbx_json_get_string(args, "mode", "values"), "formulas") == 0;
	uint32_t r0, c0, r1, c1, used_rows, used_cols;
	wb_handle h;
	sbx_sheet *s;
	cJSON *o, *values;

	if (parse_range(args, &r0, &c0, &r1, &c1, out) < 0)
		return 0;
	if (!(s = open_sheet(ctx, args, &h, out)))
		return 0;
	o = out->structured = cJSON_CreateObject();
	if (!o) {
		wb_close(&h);
		return -ENOMEM;
	}
	cJSON_AddStringToObject(o, "start_cell", sbx_json_get_string(args, "start_cell", ""));
	cJSON_AddStringToObject(o, "end_cell", sbx_json_get_string(args, "end_cell", ""));
	cJSON_AddStringToObject(o, "mode", formulas ? "formulas" : "values");
	values = cJSON_AddArrayToObject(o, "values");
	sbx_sheet_used_range(s, &used_rows, &used_cols);
	for (uint32_t r = r0; values && r <= r1; r++) {
		cJSON *row = cJSON_CreateArray();

		if (!row || !cJSON_AddItemToArray(values, row)) {
			cJSON_Delete(row);
			break;
		}
		for (uint32_t c = c0; c <= c1; c++) {
			sbx_cell cell = SBX_CELL_INIT;

			if (r < used_rows && c < used_cols)
				sbx_sheet_get(s, r, c, &cell);
			cJSON_AddItemToArray(row, formulas && cell.formula
							  ? cJSON_CreateString(cell.formula)
							  : cell_value_json(&cell));
		}
	}
	wb_close(&h);
	return 0;
}

static int write_range(tool_context *ctx, const cJSON *args, tool_result *out)
{
	const cJSON *values = sbx_json_get(args, "values"), *row, *v;
	sbx_error err = SBX_ERROR_INIT;
	uint32_t r0, c0, r, c, written = 0;
	uint64_t total = 0;
	wb_handle h;
	sbx_sheet *s;
	cJSON *o;

	if (cell_parse(sbx_json_get_string(args, "start_cell", ""), &r0, &c0, out) < 0)
		return 0;
	cJSON_ArrayForEach (row, values) {
		total += (uint64_t)cJSON_GetArraySize(row);
		if (cJSON_GetArraySize(row) > 0 &&
		    (uint64_t)c0 + (uint64_t)cJSON_GetArraySize(row) > SBX_SHEET_MAX_COLS)
			return tool_fail(out, TOOL_E_ARGUMENT, "values run past the last column");
	}
	if ((uint64_t)r0 + (uint64_t)cJSON_GetArraySize(values) > SBX_SHEET_MAX_ROWS)
		return tool_fail(out, TOOL_E_ARGUMENT, "values run past the last row");
	if (total > MAX_RANGE_CELLS)
		return tool_fail(out, TOOL_E_ARGUMENT, "Range too large: at most %u cells per call",
				 MAX_RANGE_CELLS);
	if (!(s = open_sheet(ctx, args, &h, out)))
		return 0;
	r = r0;
	cJSON_ArrayForEach (row, values) {
		c = c0;
		cJSON_ArrayForEach (v, row) {
			char name[16];
			if (put_value(s, r, c, v, &err) < 0)
				return wb_fail_discard(&h, out, "Cannot write %s: %s",
						       cell_name(r, c, name),
						       sbx_error_message(&err));
			c++;
			written++;
		}
		r++;
	}
	o = cJSON_CreateObject();
	if (o) {
		cJSON_AddBoolToObject(o, "success", true);
		cJSON_AddNumberToObject(o, "cells_written", written);
	}
	return wb_save_answer(ctx, &h, out, o, true);
}

static int clear_range(tool_context *ctx, const cJSON *args, tool_result *out)
{
	uint32_t r0, c0, r1, c1, used_rows, used_cols, cleared = 0;
	wb_handle h;
	sbx_sheet *s;
	cJSON *o;

	if (parse_range(args, &r0, &c0, &r1, &c1, out) < 0)
		return 0;
	if (!(s = open_sheet(ctx, args, &h, out)))
		return 0;
	sbx_sheet_used_range(s, &used_rows, &used_cols);
	for (uint32_t r = r0; r <= r1 && r < used_rows; r++)
		for (uint32_t c = c0; c <= c1 && c < used_cols; c++) {
			sbx_cell cell = SBX_CELL_INIT;
			if (sbx_sheet_get(s, r, c, &cell) != SBX_CELL_EMPTY || cell.formula) {
				sbx_sheet_clear(s, r, c);
				cleared++;
			}
		}
	o = cJSON_CreateObject();
	if (o) {
		cJSON_AddBoolToObject(o, "success", true);
		cJSON_AddNumberToObject(o, "cells_cleared", cleared);
	}
	return wb_save_answer(ctx, &h, out, o, cleared > 0);
}

static bool matches(const char *text, const char *query, bool exact, bool case_sensitive)
{
	if (exact)
		return case_sensitive ? strcmp(text, query) == 0 : strcasecmp(text, query) == 0;
	return case_sensitive ? strstr(text, query) != NULL : strcasestr(text, query) != NULL;
}

static int find_cells(tool_context *ctx, const cJSON *args, tool_result *out)
{
	const char *query = sbx_json_get_string(args, "query", "");
	bool exact = strcmp(sbx_json_get_string(args, "match", "contains"), "exact") == 0;
	bool cs = sbx_json_get_bool(args, "case_sensitive", false);
	int max = (int)sbx_json_get_number(args, "max_results", 100);
	sbx_buf text = SBX_BUF_INIT(1u << 24);
	sbx_sheet *only = NULL;
	int found = 0;
	bool truncated = false;
	wb_handle h;
	cJSON *o, *arr;

	if (wb_open(ctx, args, &h, out) < 0)
		return 0;
	if (sbx_json_get(args, "sheet_name") && !(only = wb_sheet(&h, args, NULL, out))) {
		wb_close(&h);
		return 0;
	}
	o = out->structured = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "matches");
	for (size_t i = 0; arr && i < sbx_book_sheet_count(h.book) && !truncated; i++) {
		sbx_sheet *s = sbx_book_sheet(h.book, i);
		sbx_sheet_iter it = SBX_SHEET_ITER_INIT;
		uint32_t r, c;
		sbx_cell cell;

		if (only && s != only)
			continue;
		while (sbx_sheet_next(s, &it, &r, &c, &cell)) {
			char name[16];
			cJSON *m;

			sbx_buf_reset(&text);
			if (sbx_cell_to_text(&cell, &text) < 0)
				continue;
			if (!matches(sbx_buf_str(&text), query, exact, cs) &&
			    !(cell.formula && matches(cell.formula, query, exact, cs)))
				continue;
			if (found >= max) {
				truncated = true;
				break;
			}
			found++;
			m = cJSON_CreateObject();
			cJSON_AddItemToArray(arr, m);
			cJSON_AddStringToObject(m, "sheet_name", sbx_sheet_name(s));
			cJSON_AddStringToObject(m, "cell_reference", cell_name(r, c, name));
			cJSON_AddItemToObject(m, "value", cell_value_json(&cell));
			if (cell.formula)
				cJSON_AddStringToObject(m, "formula", cell.formula);
		}
	}
	sbx_buf_free(&text);
	cJSON_AddNumberToObject(o, "count", found);
	cJSON_AddBoolToObject(o, "truncated", truncated);
	wb_close(&h);
	return 0;
}

/* ---- schemas ---- */

#define P_FILE                                                                                     \
	"\"file_path\":{\"type\":\"string\",\"minLength\":1,\"description\":\"path relative to "   \
	"the workspace, e.g. data.ods\"}"
#define P_SHEET                                                                                    \
	"\"sheet_name\":{\"type\":\"string\",\"description\":\"sheet name (default: the first "    \
	"sheet)\"}"
#define P_CELL	"\"cell_reference\":{\"type\":\"string\",\"description\":\"A1-style cell, e.g. B7\"}"
#define P_RANGE "\"start_cell\":{\"type\":\"string\"},\"end_cell\":{\"type\":\"string\"}"
#define P_VALUE "{\"type\":[\"string\",\"number\",\"boolean\",\"null\"]}"
#define ANY	"{}"
/* Every cell tool takes the file and, optionally, the sheet; props and required go after. */
#define CELL_ARGS(props, required) TOOL_ARGS(P_FILE "," P_SHEET props, "\"file_path\"" required)
/* A tool that saves the file answers success, then its own fields. */
#define SAVED_RESULT(props, required)                                                              \
	TOOL_RESULT("\"success\":{\"type\":\"boolean\"}" props, "\"success\"" required)

static const tool_def tools[] = {
	TOOL_DEF(read_cell, .title = "Read a cell",
		 .description = "Reads one cell: its value (number, text, boolean, ISO date, or "
				"null when empty), value_type and formula if any.",
		 .input_schema = CELL_ARGS("," P_CELL, ",\"cell_reference\""),
		 .output_schema =
			 TOOL_RESULT("\"cell_reference\":{\"type\":\"string\"},\"value\":" ANY
				     ",\"value_type\":{\"type\":\"string\"},\"formula\":{\"type\":"
				     "[\"string\",\"null\"]}",
				     "\"cell_reference\",\"value\",\"value_type\""),
		 .annotations = TOOL_READ_ONLY | TOOL_IDEMPOTENT),
	TOOL_DEF(write_cell, .title = "Write a cell",
		 .description = "Writes one value into a cell and saves the file. Numbers and "
				"booleans keep their type; a string starting with '=' is stored "
				"as a formula; null clears the cell.",
		 .input_schema = CELL_ARGS("," P_CELL ",\"value\":" P_VALUE,
					   ",\"cell_reference\",\"value\""),
		 .output_schema = SAVED_RESULT(
			 ",\"cell_reference\":{\"type\":\"string\"},\"new_value\":" ANY,
			 ",\"cell_reference\",\"new_value\""),
		 .annotations = TOOL_DESTRUCTIVE | TOOL_IDEMPOTENT),
	TOOL_DEF(read_range, .title = "Read a range",
		 .description = "Reads a rectangle of cells (start_cell to end_cell inclusive) as "
				"rows of values. mode \"formulas\" shows formula text where a cell "
				"has one.",
		 .input_schema = CELL_ARGS("," P_RANGE
					   ",\"mode\":{\"type\":\"string\",\"enum\":[\"values\","
					   "\"formulas\"]}",
					   ",\"start_cell\",\"end_cell\""),
		 .output_schema =
			 TOOL_RESULT("\"start_cell\":{\"type\":\"string\"},\"end_cell\":{\"type\":"
				     "\"string\"},\"values\":{\"type\":\"array\",\"items\":{"
				     "\"type\":\"array\"}}",
				     "\"start_cell\",\"end_cell\",\"values\""),
		 .annotations = TOOL_READ_ONLY | TOOL_IDEMPOTENT),
	TOOL_DEF(write_range, .title = "Write a range",
		 .description = "Writes rows of values starting at start_cell (values[0][0] goes "
				"there) and saves the file. Same value rules as write_cell.",
		 .input_schema = CELL_ARGS(
			 ",\"start_cell\":{\"type\":\"string\"},\"values\":{\"type\":"
			 "\"array\",\"items\":{\"type\":\"array\",\"items\":" P_VALUE "}}",
			 ",\"start_cell\",\"values\""),
		 .output_schema = SAVED_RESULT(",\"cells_written\":{\"type\":\"integer\"}",
					       ",\"cells_written\""),
		 .annotations = TOOL_DESTRUCTIVE | TOOL_IDEMPOTENT),
	TOOL_DEF(set_formula, .title = "Set a formula",
		 .description = "Puts a formula such as =SUM(A1:A10) into a cell and saves the "
				"file. Formulas get computed values when the workbook is "
				"recalculated (recalculate) or opened in LibreOffice.",
		 .input_schema =
			 CELL_ARGS("," P_CELL ",\"formula\":{\"type\":\"string\",\"minLength\":1,"
				   "\"maxLength\":65536}",
				   ",\"cell_reference\",\"formula\""),
		 .output_schema = SAVED_RESULT(",\"cell_reference\":{\"type\":\"string\"},"
					       "\"formula\":{\"type\":\"string\"}",
					       ",\"cell_reference\",\"formula\""),
		 .annotations = TOOL_DESTRUCTIVE | TOOL_IDEMPOTENT),
	TOOL_DEF(clear_range, .title = "Clear a range",
		 .description = "Empties every cell from start_cell to end_cell (values and "
				"formulas) and saves the file.",
		 .input_schema = CELL_ARGS("," P_RANGE, ",\"start_cell\",\"end_cell\""),
		 .output_schema = SAVED_RESULT(",\"cells_cleared\":{\"type\":\"integer\"}",
					       ",\"cells_cleared\""),
		 .annotations = TOOL_DESTRUCTIVE | TOOL_IDEMPOTENT),
	TOOL_DEF(find_cells, .title = "Find cells",
		 .description = "Finds cells whose text (or formula) contains or equals query, "
				"in one sheet or all of them.",
		 .input_schema = CELL_ARGS(",\"query\":{\"type\":\"string\",\"maxLength\":4096},"
					   "\"match\":{\"type\":\"string\",\"enum\":[\"contains\","
					   "\"exact\"]},\"case_sensitive\":{\"type\":\"boolean\"},"
					   "\"max_results\":{\"type\":\"integer\",\"minimum\":1,"
					   "\"maximum\":10000}",
					   ",\"query\""),
		 .output_schema =
			 TOOL_RESULT("\"matches\":{\"type\":\"array\"},\"count\":{\"type\":"
				     "\"integer\"},\"truncated\":{\"type\":\"boolean\"}",
				     "\"matches\",\"count\""),
		 .annotations = TOOL_READ_ONLY | TOOL_IDEMPOTENT),
};

const tool_def *sheet_cell_tools(size_t *n_out)
{
	*n_out = SBX_ELEMENTSOF(tools);
	return tools;
}
