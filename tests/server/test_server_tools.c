/* SPDX-License-Identifier: MIT */
/* The spreadsheet tools on cash_flows.ods and its xlsx copy, and execute_python. */
#include "test_server.h"

/* ---- spreadsheet tools ---- */

START_TEST(read_tools)
{
	cJSON *root;
	const cJSON *s, *values;

	s = structured(call("read_cell", "{" F ",\"cell_reference\":\"B2\"}", &root));
	ck_assert_double_eq_tol(sbx_json_get_number(s, "value", 0), 257624.09, 1e-9);
	ck_assert_str_eq(sbx_json_get_string(s, "value_type", ""), "float");
	cJSON_Delete(root);
	s = structured(call("read_cell", "{" F ",\"cell_reference\":\"C3\"}", &root));
	ck_assert(cJSON_IsNull(sbx_json_get(s, "value")));
	cJSON_Delete(root);
	s = structured(
		call("read_range", "{" F ",\"start_cell\":\"A1\",\"end_cell\":\"C2\"}", &root));
	values = sbx_json_get(s, "values");
	ck_assert_int_eq(cJSON_GetArraySize(values), 2);
	ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetArrayItem(values, 0), 1)->valuestring,
			 "Cash_Flow_Amount");
	cJSON_Delete(root);
	/* The reference's shape: {file_path, sheets:[{name, row_count, col_count}]}. */
	s = structured(call("list_sheets", "{\"file_path\":\"cash_flows.ods\"}", &root));
	ck_assert_str_eq(sbx_json_get_string(s, "file_path", ""), "cash_flows.ods");
	ck_assert_str_eq(
		sbx_json_get_string(cJSON_GetArrayItem(sbx_json_get(s, "sheets"), 0), "name", ""),
		"Sheet1");
	ck_assert_int_eq((int)sbx_json_get_number(cJSON_GetArrayItem(sbx_json_get(s, "sheets"), 0),
						  "row_count", 0),
			 101);
	ck_assert_int_eq((int)sbx_json_get_number(cJSON_GetArrayItem(sbx_json_get(s, "sheets"), 0),
						  "col_count", 0),
			 3);
	cJSON_Delete(root);
	s = structured(call("get_sheet_info", "{" F "}", &root));
	ck_assert_int_eq((int)sbx_json_get_number(s, "row_count", 0), 101);
	ck_assert_int_eq((int)sbx_json_get_number(s, "col_count", 0), 3);
	ck_assert_str_eq(cJSON_GetArrayItem(sbx_json_get(s, "headers"), 2)->valuestring,
			 "Rate_Point");
	cJSON_Delete(root);
	s = structured(call("list_files", "{}", &root));
	ck_assert_str_eq(cJSON_GetArrayItem(sbx_json_get(s, "files"), 0)->valuestring,
			 "cash_flows.ods");
	cJSON_Delete(root);
	s = structured(
		call("find_cells", "{\"file_path\":\"cash_flows.ods\",\"query\":\"rate\"}", &root));
	ck_assert_int_eq((int)sbx_json_get_number(s, "count", 0), 1);
	cJSON_Delete(root);
}
END_TEST

START_TEST(write_tools_persist)
{
	cJSON *root;
	const cJSON *s, *row;

	structured(call("write_cell",
			"{" F ",\"cell_reference\":\"D1\",\"value\":\"Required_Reserve\"}", &root));
	cJSON_Delete(root);
	structured(call("set_formula", "{" F ",\"cell_reference\":\"D2\",\"formula\":\"=B2*C2\"}",
			&root));
	cJSON_Delete(root);
	s = structured(call("write_range",
			    "{" F ",\"start_cell\":\"E1\",\"values\":[[1,2.5],[true,null]]}",
			    &root));
	ck_assert_int_eq((int)sbx_json_get_number(s, "cells_written", 0), 4);
	cJSON_Delete(root);
	/* Drop the cache: what follows must come from the file on disk. */
	wb_cache_clear(srv.wbcache);
	s = structured(call(
		"read_range",
		"{" F ",\"start_cell\":\"D1\",\"end_cell\":\"F2\",\"mode\":\"formulas\"}", &root));
	row = cJSON_GetArrayItem(sbx_json_get(s, "values"), 0);
	ck_assert_str_eq(cJSON_GetArrayItem(row, 0)->valuestring, "Required_Reserve");
	ck_assert_double_eq(cJSON_GetArrayItem(row, 2)->valuedouble, 2.5);
	row = cJSON_GetArrayItem(sbx_json_get(s, "values"), 1);
	ck_assert_str_eq(cJSON_GetArrayItem(row, 0)->valuestring, "=B2*C2");
	ck_assert(cJSON_IsTrue(cJSON_GetArrayItem(row, 1)));
	cJSON_Delete(root);
	s = structured(
		call("clear_range", "{" F ",\"start_cell\":\"E1\",\"end_cell\":\"F2\"}", &root));
	ck_assert_int_eq((int)sbx_json_get_number(s, "cells_cleared", 0), 3);
	cJSON_Delete(root);
	s = structured(call("get_task_status", "{}", &root));
	ck_assert_str_eq(cJSON_GetArrayItem(sbx_json_get(s, "files_modified"), 0)->valuestring,
			 "cash_flows.ods");
	cJSON_Delete(root);
}
END_TEST

START_TEST(sheet_and_row_tools)
{
	cJSON *root;
	const cJSON *s;

	s = structured(call("create_sheet",
			    "{\"file_path\":\"cash_flows.ods\",\"sheet_name\":\"Notes\"}", &root));
	ck_assert_int_eq(cJSON_GetArraySize(sbx_json_get(s, "sheets")), 2);
	cJSON_Delete(root);
	ck_assert(is_error(call("create_sheet",
				"{\"file_path\":\"cash_flows.ods\",\"sheet_name\":\"Notes\"}",
				&root)));
	cJSON_Delete(root);
	structured(call("rename_sheet",
			"{\"file_path\":\"cash_flows.ods\",\"sheet_name\":\"Notes\",\"new_name\":"
			"\"N2\"}",
			&root));
	cJSON_Delete(root);
	structured(call("delete_sheet", "{\"file_path\":\"cash_flows.ods\",\"sheet_name\":\"N2\"}",
			&root));
	cJSON_Delete(root);
	ck_assert(is_error(call("delete_sheet", "{" F "}", &root))); /* the last sheet */
	cJSON_Delete(root);
	structured(call("insert_rows", "{" F ",\"row\":2,\"count\":3}", &root));
	cJSON_Delete(root);
	s = structured(call("read_cell", "{" F ",\"cell_reference\":\"A5\"}", &root));
	ck_assert_int_eq((int)sbx_json_get_number(s, "value", 0), 1);
	cJSON_Delete(root);
	structured(call("delete_rows", "{" F ",\"row\":2,\"count\":3}", &root));
	cJSON_Delete(root);
	s = structured(call("read_cell", "{" F ",\"cell_reference\":\"A2\"}", &root));
	ck_assert_int_eq((int)sbx_json_get_number(s, "value", 0), 1);
	cJSON_Delete(root);
}
END_TEST

START_TEST(reference_error_texts)
{
	static const error_case cases[] = {
		{"read_cell", "{\"file_path\":\"x.ods\",\"cell_reference\":\"A1\"}",
		 "File not found: x.ods"},
		{"read_cell",
		 "{\"file_path\":\"cash_flows.ods\",\"sheet_name\":\"BadSheet\",\"cell_reference\":"
		 "\"A1\"}",
		 "Sheet 'BadSheet' not found"},
		{"read_cell", "{" F ",\"cell_reference\":\"ZZZ\"}", "Invalid cell reference: ZZZ"},
		{"read_range", "{" F ",\"start_cell\":\"A1\",\"end_cell\":\"1A\"}",
		 "Invalid cell reference: 1A"},
		{"read_cell", "{\"file_path\":\"../../etc/passwd\",\"cell_reference\":\"A1\"}",
		 "outside the workspace"},
		{"read_cell", "{\"file_path\":\"/etc/passwd\",\"cell_reference\":\"A1\"}",
		 "outside the workspace"},
		{"read_cell", "{\"file_path\":\"shadow.ods\",\"cell_reference\":\"A1\"}",
		 "outside the workspace"},
		{"read_cell", "{\"file_path\":\"fifo.ods\",\"cell_reference\":\"A1\"}",
		 "not a regular file"},
		{"read_cell", "{\"file_path\":\"junk.ods\",\"cell_reference\":\"A1\"}",
		 "as a spreadsheet"},
	};
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/shadow.ods", ws);
	ck_assert_int_eq(symlink("/etc/shadow", path), 0);
	snprintf(path, sizeof(path), "%s/fifo.ods", ws);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/junk.ods", ws);
	f = fopen(path, "w");
	fputs("PK\x03\x04 not really a zip", f);
	fclose(f);
	check_errors(cases, SBX_ELEMENTSOF(cases));
}
END_TEST

START_TEST(sheet_qualified_references)
{
	cJSON *root;
	const cJSON *s;
	const cJSON *res;

	s = structured(call("read_cell",
			    "{\"file_path\":\"cash_flows.ods\",\"cell_reference\":\"Sheet1!B2\"}",
			    &root));
	ck_assert_double_eq_tol(sbx_json_get_number(s, "value", 0), 257624.09, 1e-9);
	cJSON_Delete(root);
	s = structured(call("read_range",
			    "{\"file_path\":\"cash_flows.ods\",\"start_cell\":\"'Sheet1'!A1\","
			    "\"end_cell\":\"B1\"}",
			    &root));
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetArrayItem(sbx_json_get(s, "values"), 0)), 2);
	cJSON_Delete(root);
	res = call("read_cell",
		   "{\"file_path\":\"cash_flows.ods\",\"cell_reference\":\"Other!B2\"}", &root);
	ck_assert_str_eq(error_text(res), "Sheet 'Other' not found");
	cJSON_Delete(root);
	res = call("read_cell", "{" F ",\"cell_reference\":\"Other!B2\"}", &root);
	ck_assert_ptr_nonnull(strstr(error_text(res), "names sheet 'Other'"));
	cJSON_Delete(root);
}
END_TEST

START_TEST(absolute_path_inside_workspace)
{
	char args[512];
	cJSON *root;

	snprintf(args, sizeof(args), "{\"file_path\":\"%s/cash_flows.ods\"}", srv.base.workspace);
	structured(call("list_sheets", args, &root));
	cJSON_Delete(root);
}
END_TEST

START_TEST(xlsx_files_work_too)
{
	sbx_error err = SBX_ERROR_INIT;
	char src[256], dst[256];
	sbx_book *b = NULL;
	cJSON *root;
	const cJSON *s;

	snprintf(src, sizeof(src), "%s/cash_flows.ods", ws);
	snprintf(dst, sizeof(dst), "%s/data.xlsx", ws);
	ck_assert_int_eq(sbx_book_open(src, NULL, &b, &err), 0);
	ck_assert_int_eq(sbx_book_save(b, dst, SBX_FORMAT_XLSX, &err), 0);
	sbx_book_free(b);
	s = structured(call("read_cell",
			    "{\"file_path\":\"data.xlsx\",\"sheet_name\":\"Sheet1\","
			    "\"cell_reference\":\"B2\"}",
			    &root));
	ck_assert_double_eq_tol(sbx_json_get_number(s, "value", 0), 257624.09, 1e-9);
	cJSON_Delete(root);
	structured(call("write_cell",
			"{\"file_path\":\"data.xlsx\",\"cell_reference\":\"D1\",\"value\":"
			"\"Required_Reserve\"}",
			&root));
	cJSON_Delete(root);
	wb_cache_clear(srv.wbcache);
	b = NULL;
	ck_assert_int_eq(sbx_book_open(dst, NULL, &b, &err), 0);
	ck_assert_int_eq(sbx_book_format(b), SBX_FORMAT_XLSX);
	{
		sbx_cell c = SBX_CELL_INIT;
		sbx_sheet_get(sbx_book_sheet(b, 0), 0, 3, &c);
		ck_assert_str_eq(c.text, "Required_Reserve");
	}
	sbx_book_free(b);
}
END_TEST

/* ---- code execution ---- */

START_TEST(execute_python_runs_in_workspace)
{
	cJSON *root;
	const cJSON *res = call(
		"execute_python",
		"{\"code\":\"import os,sys\\nprint(sorted(os.listdir('.')))\\nprint('e',file=sys."
		"stderr)\\nsys.exit(3)\"}",
		&root);
	const cJSON *s = sbx_json_get(res, "structuredContent");

	/* A non-zero exit fails the call (the reference: success false), output kept. */
	ck_assert(is_error(res));
	ck_assert_str_eq(error_text(res), "Code exited with status 3: e");
	ck_assert_str_eq(sbx_json_get_string(s, "error_code", ""), "E_EXIT");
	ck_assert_ptr_nonnull(strstr(sbx_json_get_string(s, "stdout", ""), "cash_flows.ods"));
	ck_assert_str_eq(sbx_json_get_string(s, "stderr", ""), "e\n");
	ck_assert_int_eq((int)sbx_json_get_number(s, "exit_code", 0), 3);
	ck_assert_int_eq((int)sbx_json_get_number(s, "return_code", 0), 3);
	ck_assert(cJSON_IsFalse(sbx_json_get(s, "timed_out")));
	cJSON_Delete(root);
}
END_TEST

START_TEST(execute_python_timeout_and_caps)
{
	cJSON *root;
	const cJSON *res, *s;

	res = call("execute_python", "{\"code\":\"import time\\ntime.sleep(30)\",\"timeout\":1}",
		   &root);
	ck_assert(is_error(res));
	ck_assert_str_eq(error_text(res), "Code execution timed out after 1 seconds");
	s = sbx_json_get(res, "structuredContent");
	ck_assert(cJSON_IsTrue(sbx_json_get(s, "timed_out")));
	ck_assert_str_eq(sbx_json_get_string(s, "error_code", ""), "E_TIMEOUT");
	cJSON_Delete(root);
	s = structured(call("execute_python", "{\"code\":\"print('x'*200000)\"}", &root));
	ck_assert(cJSON_IsTrue(sbx_json_get(s, "truncated")));
	ck_assert_uint_lt(strlen(sbx_json_get_string(s, "stdout", "")), 52 * 1024);
	ck_assert_ptr_nonnull(strstr(sbx_json_get_string(s, "stdout", ""), "bytes truncated"));
	cJSON_Delete(root);
	res = call("execute_python", "{\"code\":\"x = bytearray(10 * 1024**3)\"}", &root);
	ck_assert(is_error(res));
	ck_assert_str_eq(
		sbx_json_get_string(sbx_json_get(res, "structuredContent"), "error_code", ""),
		"E_MEMORY");
	cJSON_Delete(root);
	s = structured(call("execute_shell", "{\"command\":\"echo $((6*7))\"}", &root));
	ck_assert_str_eq(sbx_json_get_string(s, "stdout", ""), "42\n");
	cJSON_Delete(root);
	/* A syntax error is a failure too; a shell's exit status is left to the caller. */
	res = call("execute_python", "{\"code\":\"def (:\"}", &root);
	ck_assert(is_error(res));
	ck_assert_ptr_nonnull(strstr(error_text(res), "SyntaxError"));
	cJSON_Delete(root);
	s = structured(call("execute_shell", "{\"command\":\"exit 1\"}", &root));
	ck_assert_int_eq((int)sbx_json_get_number(s, "exit_code", 0), 1);
	cJSON_Delete(root);
}
END_TEST

START_TEST(capture_keeps_head_and_tail)
{
	capture c;
	char big[100000];

	capture_init(&c);
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = 'Z';
	capture_add(&c, "HEAD", 4);
	capture_add(&c, big, sizeof(big));
	capture_finish(&c);
	ck_assert(c.truncated);
	ck_assert(strncmp(capture_text(&c), "HEAD", 4) == 0);
	ck_assert(capture_text(&c)[strlen(capture_text(&c)) - 1] == 'Z');
	capture_free(&c);
	{
		char *s = utf8_sanitize("a\xff\xc3\xa9", 4);
		ck_assert_str_eq(s, "a\xef\xbf\xbd\xc3\xa9");
		free(s);
	}
}
END_TEST

void server_tool_tests(TCase *tc)
{
	SBX_TEST_ADD(tc, read_tools, write_tools_persist, sheet_and_row_tools,
		     reference_error_texts, absolute_path_inside_workspace,
		     sheet_qualified_references, xlsx_files_work_too,
		     execute_python_runs_in_workspace, execute_python_timeout_and_caps,
		     capture_keeps_head_and_tail);
}
