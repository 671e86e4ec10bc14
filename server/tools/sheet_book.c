/* SPDX-License-Identifier: MIT */
/*
 * Workbook-structure tools: list_sheets, get_sheet_info, create_sheet,
 * rename_sheet, delete_sheet, insert_rows, delete_rows.
 */
#include <errno.h>
#include <string.h>

#include "wbcache.h"

static cJSON *sheet_names(const sbx_book *b)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < sbx_book_sheet_count(b); i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(sbx_sheet_name(sbx_book_sheet(b, i))));
	return arr;
}

/* The reference's shape: one object per sheet with its used size, in order. */
static cJSON *sheet_list(const sbx_book *b)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && i < sbx_book_sheet_count(b); i++) {
		const sbx_sheet *s = sbx_book_sheet(b, i);
		cJSON *o = cJSON_CreateObject();
		uint32_t rows, cols;

		if (!o)
			break;
		cJSON_AddItemToArray(arr, o);
		sbx_sheet_used_range(s, &rows, &cols);
		cJSON_AddStringToObject(o, "name", sbx_sheet_name(s));
		cJSON_AddNumberToObject(o, "row_count", rows);
		cJSON_AddNumberToObject(o, "col_count", cols);
	}
	return arr;
}

static int list_sheets(tool_context *ctx, const cJSON *args, tool_result *out)
{
	wb_handle h;

	if (wb_open(ctx, args, &h, out) < 0)
		return 0;
	out->structured = cJSON_CreateObject();
	if (out->structured) {
		cJSON_AddStringToObject(out->structured, "file_path",
					sbx_json_get_string(args, "file_path", ""));
		cJSON_AddItemToObject(out->structured, "sheets", sheet_list(h.book));
	}
	wb_close(&h);
	return out->structured ? 0 : -ENOMEM;
}

static int get_sheet_info(tool_context *ctx, const cJSON *args, tool_result *out)
{
	sbx_buf text = SBX_BUF_INIT(1u << 20);
	uint32_t rows, cols;
	wb_handle h;
	sbx_sheet *s;
	cJSON *o, *headers;

	if (!(s = wb_open_sheet(ctx, args, &h, out)))
		return 0;
	sbx_sheet_used_range(s, &rows, &cols);
	o = out->structured = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "sheet_name", sbx_sheet_name(s));
		cJSON_AddNumberToObject(o, "row_count", rows);
		cJSON_AddNumberToObject(o, "col_count", cols);
		headers = cJSON_AddArrayToObject(o, "headers");
		for (uint32_t c = 0; headers && rows > 0 && c < cols && c < 1024; c++) {
			sbx_cell cell = SBX_CELL_INIT;
			sbx_sheet_get(s, 0, c, &cell);
			sbx_buf_reset(&text);
			sbx_cell_to_text(&cell, &text);
			cJSON_AddItemToArray(headers, cJSON_CreateString(sbx_buf_str(&text)));
		}
		cJSON_AddNumberToObject(o, "cell_count", (double)sbx_sheet_cell_count(s));
		cJSON_AddNumberToObject(o, "sheet_index", (double)sbx_sheet_index(s));
	}
	sbx_buf_free(&text);
	wb_close(&h);
	return o ? 0 : -ENOMEM;
}

/* {key: value}, where an answer starts; NULL when out of memory. */
static cJSON *answer_with(const char *key, const char *value)
{
	cJSON *o = cJSON_CreateObject();

	if (o)
		cJSON_AddStringToObject(o, key, value);
	return o;
}

/* Saves, then answers {...extra, success, sheets}. */
static int save_and_answer(tool_context *ctx, wb_handle *h, tool_result *out, cJSON *o)
{
	if (o) {
		cJSON_AddBoolToObject(o, "success", true);
		cJSON_AddItemToObject(o, "sheets", sheet_names(h->book));
	}
	return wb_save_answer(ctx, h, out, o, true);
}

/* A copy of the sheet's name, kept across a change that frees it; NULL sets err. */
static char *name_copy(const sbx_sheet *s, sbx_error *err)
{
	char *copy = strdup(sbx_sheet_name(s));

	if (!copy)
		sbx_error_set(err, -ENOMEM, "out of memory");
	return copy;
}

static int create_sheet(tool_context *ctx, const cJSON *args, tool_result *out)
{
	const char *name = sbx_json_get_string(args, "sheet_name", "");
	const cJSON *index = sbx_json_get(args, "index");
	sbx_error err = SBX_ERROR_INIT;
	wb_handle h;

	if (wb_open(ctx, args, &h, out) < 0)
		return 0;
	if (sbx_book_find(h.book, name))
		return wb_fail_keep(&h, out, "Sheet '%s' already exists", name);
	if (sbx_book_add_sheet(h.book, name,
			       cJSON_IsNumber(index) ? (size_t)index->valuedouble : SIZE_MAX, NULL,
			       &err) < 0)
		return wb_fail_discard(&h, out, "Cannot create the sheet: %s",
				       sbx_error_message(&err));
	return save_and_answer(ctx, &h, out, answer_with("sheet_name", name));
}

static int rename_sheet(tool_context *ctx, const cJSON *args, tool_result *out)
{
	const char *to = sbx_json_get_string(args, "new_name", "");
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_free_ char *from = NULL;
	wb_handle h;
	sbx_sheet *s, *other;
	cJSON *o;

	if (!(s = wb_open_sheet(ctx, args, &h, out)))
		return 0;
	other = sbx_book_find(h.book, to);
	if (other && other != s)
		return wb_fail_keep(&h, out, "Sheet '%s' already exists", to);
	from = name_copy(s, &err);
	if (!from || sbx_sheet_rename(s, to, &err) < 0)
		return wb_fail_discard(&h, out, "Cannot rename the sheet: %s",
				       sbx_error_message(&err));
	o = answer_with("old_name", from);
	if (o)
		cJSON_AddStringToObject(o, "new_name", to);
	return save_and_answer(ctx, &h, out, o);
}

static int delete_sheet(tool_context *ctx, const cJSON *args, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_free_ char *name = NULL;
	wb_handle h;
	sbx_sheet *s;

	if (!(s = wb_open_sheet(ctx, args, &h, out)))
		return 0;
	if (sbx_book_sheet_count(h.book) <= 1)
		return wb_fail_keep(&h, out,
				    "Cannot delete sheet '%s': a workbook needs at least one sheet",
				    sbx_sheet_name(s));
	name = name_copy(s, &err);
	if (!name || sbx_book_remove_sheet(h.book, s, &err) < 0)
		return wb_fail_discard(&h, out, "Cannot delete the sheet: %s",
				       sbx_error_message(&err));
	return save_and_answer(ctx, &h, out, answer_with("sheet_name", name));
}

static int change_rows(tool_context *ctx, const cJSON *args, tool_result *out, bool insert)
{
	uint32_t row = (uint32_t)sbx_json_get_number(args, "row", 1);
	uint32_t count = (uint32_t)sbx_json_get_number(args, "count", 1);
	sbx_error err = SBX_ERROR_INIT;
	wb_handle h;
	sbx_sheet *s;
	cJSON *o;
	int r;

	if (!(s = wb_open_sheet(ctx, args, &h, out)))
		return 0;
	r = insert ? sbx_sheet_insert_rows(s, row - 1, count, &err)
		   : sbx_sheet_delete_rows(s, row - 1, count, &err);
	if (r < 0)
		return wb_fail_discard(&h, out, "Cannot %s rows: %s", insert ? "insert" : "delete",
				       sbx_error_message(&err));
	o = answer_with("sheet_name", sbx_sheet_name(s));
	if (o) {
		cJSON_AddNumberToObject(o, "row", row);
		cJSON_AddNumberToObject(o, "count", count);
	}
	return save_and_answer(ctx, &h, out, o);
}

static int insert_rows(tool_context *ctx, const cJSON *args, tool_result *out)
{
	return change_rows(ctx, args, out, true);
}

static int delete_rows(tool_context *ctx, const cJSON *args, tool_result *out)
{
	return change_rows(ctx, args, out, false);
}

#define P_FILE                                                                                     \
	"\"file_path\":{\"type\":\"string\",\"minLength\":1,\"description\":\"path relative to "   \
	"the workspace\"}"
#define P_SHEET "\"sheet_name\":{\"type\":\"string\"}"
#define P_NAME	"\"sheet_name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":255}"
#define P_ROWS                                                                                     \
	"\"row\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1048576,\"description\":"         \
	"\"1-based row number\"},\"count\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":"       \
	"1048576}"
/* Every book tool takes the file; props and required go after. */
#define BOOK_ARGS(props, required) TOOL_ARGS(P_FILE props, "\"file_path\"" required)
#define SHEETS_OUT                                                                                 \
	TOOL_RESULT(                                                                               \
		"\"success\":{\"type\":\"boolean\"},\"sheets\":{\"type\":\"array\",\"items\":{"    \
		"\"type\":\"string\"}}",                                                           \
		"\"success\",\"sheets\"")

static const tool_def tools[] = {
	TOOL_DEF(list_sheets, .title = "List sheets",
		 .description = "Lists the sheets of a workbook (.ods or .xlsx), in order, with "
				"each sheet's used size: {name, row_count, col_count}.",
		 .input_schema = BOOK_ARGS("", ""),
		 .output_schema =
			 TOOL_RESULT("\"file_path\":{\"type\":\"string\"},"
				     "\"sheets\":{\"type\":\"array\",\"items\":{\"type\":"
				     "\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
				     "\"row_count\":{\"type\":\"integer\"},\"col_count\":{"
				     "\"type\":\"integer\"}},\"required\":[\"name\",\"row_count\","
				     "\"col_count\"]}}",
				     "\"file_path\",\"sheets\""),
		 .annotations = TOOL_READ_ONLY | TOOL_IDEMPOTENT),
	TOOL_DEF(get_sheet_info, .title = "Describe a sheet",
		 .description = "The used size of a sheet (row_count, col_count) and its first "
				"row as headers.",
		 .input_schema = BOOK_ARGS("," P_SHEET, ""),
		 .output_schema =
			 TOOL_RESULT("\"sheet_name\":{\"type\":\"string\"},\"row_count\":{"
				     "\"type\":\"integer\"},\"col_count\":{\"type\":\"integer\"},"
				     "\"headers\":{\"type\":\"array\",\"items\":{\"type\":"
				     "\"string\"}}",
				     "\"sheet_name\",\"row_count\",\"col_count\",\"headers\""),
		 .annotations = TOOL_READ_ONLY | TOOL_IDEMPOTENT),
	TOOL_DEF(create_sheet, .title = "Create a sheet",
		 .description = "Adds an empty sheet (at index, 0-based; default: last) and saves.",
		 .input_schema =
			 BOOK_ARGS("," P_NAME ",\"index\":{\"type\":\"integer\",\"minimum\":0}",
				   ",\"sheet_name\""),
		 .output_schema = SHEETS_OUT, .annotations = TOOL_DESTRUCTIVE),
	TOOL_DEF(rename_sheet, .title = "Rename a sheet",
		 .description = "Renames a sheet and saves. Formulas referring to the old name "
				"are not rewritten.",
		 .input_schema = BOOK_ARGS("," P_SHEET ",\"new_name\":{\"type\":\"string\","
					   "\"minLength\":1,\"maxLength\":255}",
					   ",\"sheet_name\",\"new_name\""),
		 .output_schema = SHEETS_OUT, .annotations = TOOL_DESTRUCTIVE | TOOL_IDEMPOTENT),
	TOOL_DEF(delete_sheet, .title = "Delete a sheet",
		 .description = "Removes a sheet and everything on it, and saves.",
		 .input_schema = BOOK_ARGS("," P_SHEET, ",\"sheet_name\""),
		 .output_schema = SHEETS_OUT, .annotations = TOOL_DESTRUCTIVE),
	TOOL_DEF(insert_rows, .title = "Insert rows",
		 .description = "Inserts count empty rows before row (1-based); rows below move "
				"down. Formulas are not rewritten.",
		 .input_schema = BOOK_ARGS("," P_SHEET "," P_ROWS, ",\"row\""),
		 .output_schema = SHEETS_OUT, .annotations = TOOL_DESTRUCTIVE),
	TOOL_DEF(delete_rows, .title = "Delete rows",
		 .description = "Deletes count rows starting at row (1-based); rows below move up.",
		 .input_schema = BOOK_ARGS("," P_SHEET "," P_ROWS, ",\"row\""),
		 .output_schema = SHEETS_OUT, .annotations = TOOL_DESTRUCTIVE),
};

const tool_def *sheet_book_tools(size_t *n_out)
{
	*n_out = SBX_ELEMENTSOF(tools);
	return tools;
}
