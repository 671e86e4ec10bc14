/* SPDX-License-Identifier: MIT */
/*
 * sandbox-mcp in-process: the JSON-RPC handler, the dispatch table, every
 * tool and every error path, through mcp_handle_text as a transport would.
 */
#include "check_main.h"
#include "test_files.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "output_capture.h"
#include "resources.h"
#include "tool_schema.h"
#include "server.h"
#include "task_session.h"
#include "wbcache.h"

static server srv;
static mcp_session session;
static char ws[64];
static char status_path[128];

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	fclose(out);
}

/* A failed check exits the forked test without teardown: remove the files anyway. */
static void remove_workspace(void)
{
	if (ws[0])
		sbx_path_remove_tree_at(AT_FDCWD, ws);
	if (status_path[0])
		unlink(status_path);
}

static void setup_timeout(double task_timeout)
{
	static bool registered;

	if (!registered) {
		atexit(remove_workspace);
		registered = true;
	}
	char src[1024], dst[256];
	sbx_error err = SBX_ERROR_INIT;
	const char *root = getenv("SBX_SOURCE_ROOT");

	strcpy(ws, "/tmp/sbx-server-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(ws));
	snprintf(src, sizeof(src), "%s/tests/server/data/cash_flows.ods", root ? root : "..");
	snprintf(dst, sizeof(dst), "%s/cash_flows.ods", ws);
	copy_file(src, dst);
	snprintf(status_path, sizeof(status_path), "%s.status.json", ws);
	ck_assert_int_eq(server_init(&srv, ws, NULL, task_timeout, status_path, &err), 0);
	mcp_session_init(&session);
}

static void setup(void)
{
	setup_timeout(0);
}

static void teardown(void)
{
	server_done(&srv);
	sbx_path_remove_tree_at(AT_FDCWD, ws);
	unlink(status_path);
}

/* Sends one message; returns the parsed response (NULL for none). */
static cJSON *rpc(const char *text)
{
	char *out = NULL;
	cJSON *r;

	ck_assert_int_eq(mcp_handle_text(&srv, &session, text, strlen(text), NULL, &out), 0);
	if (!out)
		return NULL;
	r = cJSON_Parse(out);
	ck_assert_msg(r != NULL, "response is not JSON: %s", out);
	free(out);
	return r;
}

static int error_code(const cJSON *r)
{
	return (int)sbx_json_get_number(sbx_json_get(r, "error"), "code", 0);
}

/* Calls a tool; returns the CallToolResult (caller frees via the root in *root). */
static const cJSON *call(const char *name, const char *args, cJSON **root)
{
	char *text = NULL;

	ck_assert_int_ge(asprintf(&text,
				  "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
				  "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
				  name, args),
			 0);
	*root = rpc(text);
	free(text);
	ck_assert_ptr_nonnull(*root);
	ck_assert_msg(sbx_json_get(*root, "result"), "no result for %s", name);
	return sbx_json_get(*root, "result");
}

static bool is_error(const cJSON *res)
{
	return cJSON_IsTrue(sbx_json_get(res, "isError"));
}

static const char *error_text(const cJSON *res)
{
	return sbx_json_get_string(cJSON_GetArrayItem(sbx_json_get(res, "content"), 0), "text", "");
}

static const cJSON *structured(const cJSON *res)
{
	ck_assert_msg(!is_error(res), "tool failed: %s", error_text(res));
	return sbx_json_get(res, "structuredContent");
}

#define F "\"file_path\":\"cash_flows.ods\",\"sheet_name\":\"Sheet1\""

/* ---- protocol ---- */

START_TEST(initialize_negotiates_version)
{
	cJSON *r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		       "\"protocolVersion\":\"2024-11-05\"}}");
	const cJSON *res = sbx_json_get(r, "result");

	ck_assert_str_eq(sbx_json_get_string(res, "protocolVersion", ""), "2024-11-05");
	ck_assert_ptr_nonnull(sbx_json_get(sbx_json_get(res, "capabilities"), "tools"));
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(res, "serverInfo"), "name", ""),
			 "sandbox-mcp");
	cJSON_Delete(r);
	r = rpc("{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"initialize\",\"params\":{"
		"\"protocolVersion\":\"1999-01-01\"}}");
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(r, "result"), "protocolVersion", ""),
			 "2025-11-25");
	ck_assert(cJSON_IsString(sbx_json_get(r, "id")));
	cJSON_Delete(r);
	ck_assert_ptr_null(rpc("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
}
END_TEST

START_TEST(ping_and_unknown_methods)
{
	cJSON *r = rpc("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");

	ck_assert(cJSON_IsObject(sbx_json_get(r, "result")));
	ck_assert_int_eq((int)sbx_json_get_number(r, "id", 0), 3);
	cJSON_Delete(r);
	r = rpc("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"server/discover\"}");
	ck_assert_int_eq(error_code(r), -32601);
	cJSON_Delete(r);
	r = rpc("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"no/such\"}");
	ck_assert_int_eq(error_code(r), -32601);
	cJSON_Delete(r);
	/* Unknown notifications and responses are ignored. */
	ck_assert_ptr_null(rpc("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}"));
	ck_assert_ptr_null(rpc("{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}"));
}
END_TEST

START_TEST(malformed_messages)
{
	static const struct {
		const char *text;
		int code;
	} cases[] = {
		{"{not json", -32700},
		{"", -32700},
		{"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600},
		{"42", -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600},
		{"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":1}", -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}", -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", -32602},
	};

	for (size_t i = 0; i < SBX_ELEMENTSOF(cases); i++) {
		char *out = NULL;
		cJSON *r;

		ck_assert_int_eq(mcp_handle_text(&srv, &session, cases[i].text,
						 strlen(cases[i].text), NULL, &out),
				 0);
		ck_assert_msg(out, "no answer to %s", cases[i].text);
		r = cJSON_Parse(out);
		ck_assert_msg(error_code(r) == cases[i].code, "%s -> %s", cases[i].text, out);
		free(out);
		cJSON_Delete(r);
	}
}
END_TEST

START_TEST(deep_nesting_refused)
{
	size_t n = 10000;
	char *text = malloc(2 * n + 1), *out = NULL;
	cJSON *r;

	memset(text, '[', n);
	memset(text + n, ']', n);
	text[2 * n] = '\0';
	ck_assert_int_eq(mcp_handle_text(&srv, &session, text, 2 * n, NULL, &out), 0);
	r = cJSON_Parse(out);
	ck_assert_int_eq(error_code(r), -32700);
	cJSON_Delete(r);
	free(out);
	free(text);
}
END_TEST

START_TEST(tools_list_is_complete)
{
	static const char *const expected[] = {
		"read_cell",	"write_cell",	  "read_range",	    "write_range",   "set_formula",
		"list_sheets",	"get_sheet_info", "list_files",	    "create_sheet",  "rename_sheet",
		"delete_sheet", "insert_rows",	  "delete_rows",    "clear_range",   "find_cells",
		"recalculate",	"complete_task",  "execute_python", "execute_shell",
	};
	cJSON *r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	const cJSON *tools = sbx_json_get(sbx_json_get(r, "result"), "tools"), *t;
	regex_t re;

	ck_assert_int_eq(regcomp(&re, "^[A-Za-z0-9_.-]{1,64}$", REG_EXTENDED | REG_NOSUB), 0);
	cJSON_ArrayForEach (t, tools) {
		const cJSON *ann = sbx_json_get(t, "annotations");
		const char *name = sbx_json_get_string(t, "name", "");

		ck_assert_int_eq(regexec(&re, name, 0, NULL, 0), 0);
		ck_assert_msg(cJSON_IsBool(sbx_json_get(ann, "readOnlyHint")), "%s", name);
		ck_assert(cJSON_IsFalse(sbx_json_get(ann, "openWorldHint")));
		ck_assert_str_eq(sbx_json_get_string(sbx_json_get(t, "inputSchema"), "type", ""),
				 "object");
		ck_assert(*sbx_json_get_string(t, "description", ""));
	}
	for (size_t i = 0; i < SBX_ELEMENTSOF(expected); i++) {
		bool found = false;
		cJSON_ArrayForEach (t, tools)
			if (strcmp(sbx_json_get_string(t, "name", ""), expected[i]) == 0)
				found = true;
		ck_assert_msg(found, "tool %s missing", expected[i]);
	}
	regfree(&re);
	cJSON_Delete(r);
}
END_TEST

START_TEST(unknown_tool_is_protocol_error)
{
	cJSON *r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
		       "\"name\":\"fake_tool\",\"arguments\":{}}}");

	ck_assert_int_eq(error_code(r), -32602);
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(r, "error"), "message", ""),
			 "Unknown tool: fake_tool");
	cJSON_Delete(r);
}
END_TEST

/* A call that must fail, and what its error text must contain. */
typedef struct error_case {
	const char *tool, *args, *error;
} error_case;

static void check_errors(const error_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cJSON *root;
		const cJSON *res = call(cases[i].tool, cases[i].args, &root);

		ck_assert_msg(is_error(res), "%s %s: not an error", cases[i].tool, cases[i].args);
		ck_assert_msg(strstr(error_text(res), cases[i].error), "%s %s: '%s' lacks '%s'",
			      cases[i].tool, cases[i].args, error_text(res), cases[i].error);
		cJSON_Delete(root);
	}
}

START_TEST(arguments_validated)
{
	static const error_case cases[] = {
		{"read_cell", "{\"file_path\":\"cash_flows.ods\"}",
		 "missing required argument 'cell_reference'"},
		{"read_cell", "{" F ",\"cell_reference\":\"A1\",\"bogus\":1}",
		 "unexpected argument 'bogus'"},
		{"read_cell", "{" F ",\"cell_reference\":5}",
		 "argument 'cell_reference': expected string"},
		{"insert_rows", "{" F ",\"row\":0}", "must be >= 1"},
		{"write_range", "{" F ",\"start_cell\":\"A1\",\"values\":[[{}]]}", "values[0][0]"},
	};

	check_errors(cases, SBX_ELEMENTSOF(cases));
}
END_TEST

START_TEST(schema_subset)
{
	cJSON *schema = cJSON_Parse(
		"{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":1,"
		"\"maximum\":3},\"e\":{\"enum\":[\"a\",\"b\"]},\"l\":{\"type\":\"array\","
		"\"items\":{\"type\":\"string\"},\"maxItems\":2}},\"required\":[\"n\"],"
		"\"additionalProperties\":false}");
	static const struct {
		const char *value;
		bool ok;
	} cases[] = {
		{"{\"n\":1}", true},
		{"{\"n\":2.5}", false},
		{"{\"n\":4}", false},
		{"{}", false},
		{"{\"n\":1,\"x\":0}", false},
		{"{\"n\":1,\"e\":\"a\"}", true},
		{"{\"n\":1,\"e\":\"c\"}", false},
		{"{\"n\":1,\"l\":[\"a\"]}", true},
		{"{\"n\":1,\"l\":[1]}", false},
		{"{\"n\":1,\"l\":[\"a\",\"b\",\"c\"]}", false},
		{"[]", false},
	};

	for (size_t i = 0; i < SBX_ELEMENTSOF(cases); i++) {
		cJSON *v = cJSON_Parse(cases[i].value);
		sbx_error err = SBX_ERROR_INIT;
		int r = schema_validate(schema, v, &err);

		ck_assert_msg((r == 0) == cases[i].ok, "%s: %s", cases[i].value,
			      sbx_error_message(&err));
		cJSON_Delete(v);
	}
	cJSON_Delete(schema);
}
END_TEST

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

/* ---- task session, resources ---- */

/* Fails unless the status file the server writes says "status":"want". */
static void assert_status_file_says(const char *want)
{
	char buf[4096] = "", needle[64];
	FILE *f = fopen(status_path, "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_gt(fread(buf, 1, sizeof(buf) - 1, f), 0);
	fclose(f);
	snprintf(needle, sizeof(needle), "\"status\":\"%s\"", want);
	ck_assert_msg(strstr(buf, needle), "%s lacks %s", buf, needle);
}

START_TEST(task_deadline)
{
	cJSON *root;
	const cJSON *res;

	server_done(&srv);
	sbx_path_remove_tree_at(AT_FDCWD, ws);
	setup_timeout(0.3);
	structured(call("list_files", "{}", &root)); /* starts the task */
	cJSON_Delete(root);
	usleep(500 * 1000);
	res = call("read_cell", "{" F ",\"cell_reference\":\"A1\"}", &root);
	ck_assert(is_error(res));
	ck_assert_str_eq(error_text(res), "Task has timed out");
	cJSON_Delete(root);
	ck_assert_int_eq(task_session_state(srv.base.task), TASK_TIMED_OUT);
	assert_status_file_says("timed_out");
}
END_TEST

static double ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) * 1e3 + (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

static void *complete_later(void *arg)
{
	usleep(100 * 1000);
	task_session_complete(arg, NULL);
	return NULL;
}

/* GET /control/status's wait: at once when changed, on the change, at the wait, at shutdown. */
START_TEST(status_wait_long_polls)
{
	task_session *t = srv.base.task;
	_cleanup_json_ cJSON *a = task_session_wait(t, -1, -1, 5000), *b = NULL, *c = NULL,
			     *d = NULL, *e = NULL;
	struct timespec t0;
	pthread_t th;
	long v;

	ck_assert_str_eq(sbx_json_get_string(a, "status", ""), "pending");
	v = (long)sbx_json_get_number(a, "version", -1);
	ck_assert_int_ge(v, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	b = task_session_wait(t, v, -1, 150);
	ck_assert_double_ge(ms_since(&t0), 140);
	ck_assert_int_eq((long)sbx_json_get_number(b, "version", -1), v);
	ck_assert_int_eq(task_session_start(t, "w", 60, false), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, complete_later, t), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c = task_session_wait(t, v + 1, -1, 10000); /* saw "running": woken by the completion */
	ck_assert_double_lt(ms_since(&t0), 2000);
	ck_assert_double_ge(ms_since(&t0), 50);
	pthread_join(th, NULL);
	ck_assert_str_eq(sbx_json_get_string(c, "status", ""), "completed");
	ck_assert_int_eq((long)sbx_json_get_number(c, "version", -1), v + 2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	d = task_session_wait(t, -1, TASK_RUNNING, 10000); /* behind: at once */
	ck_assert_double_lt(ms_since(&t0), 100);
	task_session_wake_all(t);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	e = task_session_wait(t, v + 2, -1, 10000);
	ck_assert_double_lt(ms_since(&t0), 100);
	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(e);
}
END_TEST

START_TEST(complete_task_writes_status)
{
	cJSON *root;
	const cJSON *s;
	struct stat st;
	char *text;

	ck_assert_int_eq(task_session_start(srv.base.task, "t1", 60, false), 0);
	ck_assert_int_eq(task_session_start(srv.base.task, "t1", 60, false), -EBUSY);
	ck_assert_int_ne(fstatat(srv.base.workspace_fd, TASK_MARKER, &st, 0), 0);
	s = structured(call("complete_task", "{\"summary\":\"done\"}", &root));
	ck_assert_str_eq(sbx_json_get_string(s, "status", ""), "completed");
	ck_assert_str_eq(sbx_json_get_string(s, "task_id", ""), "t1");
	cJSON_Delete(root);
	/* The marker the reference's wait_for_agent polls; list_files does not show it. */
	ck_assert_int_eq(fstatat(srv.base.workspace_fd, TASK_MARKER, &st, 0), 0);
	s = structured(call("list_files", "{}", &root));
	text = cJSON_PrintUnformatted(sbx_json_get(s, "files"));
	ck_assert_ptr_null(strstr(text, TASK_MARKER));
	free(text);
	cJSON_Delete(root);
	/* After completion the workspace is frozen for writes. */
	ck_assert(is_error(
		call("write_cell", "{" F ",\"cell_reference\":\"A1\",\"value\":1}", &root)));
	cJSON_Delete(root);
	assert_status_file_says("completed");
	/* A new episode removes it: a poller must not see the old one as done. */
	ck_assert_int_eq(task_session_start(srv.base.task, "t2", 60, false), 0);
	ck_assert_int_ne(fstatat(srv.base.workspace_fd, TASK_MARKER, &st, 0), 0);
}
END_TEST

/* complete_task gives formulas values natively; without LibreOffice it names what it could not. */
START_TEST(complete_task_computes_formulas_natively)
{
	cJSON *root;
	const cJSON *s, *rc, *row;
	double b2, c2;

	setenv("PATH", "/nonexistent", 1); /* no soffice: this process only (forked case) */
	ck_assert_int_eq(task_session_start(srv.base.task, "t1", 60, false), 0);
	structured(call("set_formula", "{" F ",\"cell_reference\":\"D2\",\"formula\":\"=B2*C2\"}",
			&root));
	cJSON_Delete(root);
	structured(call("set_formula",
			"{" F
			",\"cell_reference\":\"D3\",\"formula\":\"=FORECAST.ETS(1,B2:B3,B2:B3)\"}",
			&root));
	cJSON_Delete(root);
	s = structured(call("complete_task", "{}", &root));
	rc = sbx_json_get(s, "recalc");
	ck_assert_str_eq(sbx_json_get_string(rc, "method", ""), "native");
	ck_assert_int_eq((int)sbx_json_get_number(rc, "native", 0), 1);
	ck_assert_str_eq(cJSON_GetArrayItem(sbx_json_get(rc, "unsupported"), 0)->valuestring,
			 "unsupported function FORECAST.ETS in Sheet1!D3");
	cJSON_Delete(root);
	/* The final status carries it too: the host puts it in result.json. */
	s = structured(call("get_task_status", "{}", &root));
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(s, "recalc"), "method", ""), "native");
	cJSON_Delete(root);
	wb_cache_clear(srv.wbcache);
	s = structured(
		call("read_range", "{" F ",\"start_cell\":\"B2\",\"end_cell\":\"D3\"}", &root));
	row = cJSON_GetArrayItem(sbx_json_get(s, "values"), 0);
	b2 = cJSON_GetArrayItem(row, 0)->valuedouble;
	c2 = cJSON_GetArrayItem(row, 1)->valuedouble;
	ck_assert_double_eq(cJSON_GetArrayItem(row, 2)->valuedouble, b2 * c2);
	row = cJSON_GetArrayItem(sbx_json_get(s, "values"), 1);
	ck_assert_str_eq(cJSON_GetArrayItem(row, 2)->valuestring, "#NAME?");
	cJSON_Delete(root);
}
END_TEST

/* The reference's POST /task/start replaces a running task; ours keeps it. */
START_TEST(task_start_replaces_when_asked)
{
	cJSON *st;

	ck_assert_int_eq(task_session_start(srv.base.task, "a", 60, false), 0);
	ck_assert_int_eq(task_session_start(srv.base.task, "b", 5, false), -EBUSY);
	ck_assert_int_eq(task_session_start(srv.base.task, "b", 5, true), 1);
	st = task_session_status(srv.base.task);
	ck_assert_str_eq(sbx_json_get_string(st, "task_id", ""), "b");
	ck_assert_int_eq((int)sbx_json_get_number(st, "timeout_seconds", 0), 5);
	cJSON_Delete(st);
}
END_TEST

/* SANDBOX_TASK_DEADLINE: the time left until it becomes the task's timeout. */
START_TEST(deadline_sets_timeout)
{
	cJSON *st;
	double t;

	task_session_set_deadline(srv.base.task, (double)time(NULL) + 100);
	st = task_session_status(srv.base.task);
	t = sbx_json_get_number(st, "timeout_seconds", 0);
	ck_assert_msg(t > 97 && t <= 101, "pending timeout_seconds %g", t);
	cJSON_Delete(st);
	ck_assert_int_eq(task_session_start(srv.base.task, NULL, 0, false), 0);
	st = task_session_status(srv.base.task);
	t = sbx_json_get_number(st, "timeout_seconds", 0);
	ck_assert_msg(t > 97 && t <= 101, "running timeout_seconds %g", t);
	cJSON_Delete(st);
	/* An explicit timeout wins. */
	ck_assert_int_eq(task_session_start(srv.base.task, NULL, 7, true), 1);
	st = task_session_status(srv.base.task);
	ck_assert_int_eq((int)sbx_json_get_number(st, "timeout_seconds", 0), 7);
	cJSON_Delete(st);
}
END_TEST

/* Without a display the computer-use tools are not listed, yet answer clearly when called. */
START_TEST(gui_tools_unlisted_without_display)
{
	cJSON *r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	char *text = cJSON_PrintUnformatted(r);
	const cJSON *res;
	cJSON *root;
	size_t i;

	ck_assert_ptr_null(strstr(text, "\"take_screenshot\""));
	ck_assert_ptr_null(strstr(text, "\"click\""));
	free(text);
	cJSON_Delete(r);
	ck_assert_ptr_nonnull(server_find_tool(&srv, "take_screenshot", &i));
	ck_assert(!server_tool_listed(&srv, i));
	res = call("take_screenshot", "{}", &root);
	ck_assert(is_error(res));
	ck_assert_ptr_nonnull(strstr(error_text(res), "No display available"));
	cJSON_Delete(root);
}
END_TEST

/*
 * SANDBOX_TOOLSET=gui: a GUI task offers the desktop, the task tools and the
 * reading tools; a tool that writes cells or runs code is neither listed nor
 * callable, and is answered exactly as a tool that does not exist.
 */
START_TEST(gui_toolset_hides_writers)
{
	static const char *const gone[] = {"write_range",    "write_cell",    "set_formula",
					   "execute_python", "execute_shell", "recalculate",
					   "clear_range",    "create_sheet"};
	static const char *const kept[] = {"computer",	    "take_screenshot", "get_task_status",
					   "complete_task", "read_range",      "list_sheets"};
	sbx_error err = SBX_ERROR_INIT;
	size_t before = srv.n_tools;
	const cJSON *t;
	char *req;
	cJSON *r;
	int listed = 0;

	ck_assert_int_eq(server_restrict_tools(&srv, "no-such-set", &err), -EINVAL);
	ck_assert_int_eq((int)srv.n_tools, (int)before);
	ck_assert_int_eq(server_restrict_tools(&srv, "gui", &err), 0);
	ck_assert_int_lt((int)srv.n_tools, (int)before);
	r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	cJSON_ArrayForEach (t, sbx_json_get(sbx_json_get(r, "result"), "tools")) {
		const char *name = sbx_json_get_string(t, "name", "");

		for (size_t i = 0; i < SBX_ELEMENTSOF(gone); i++)
			ck_assert_msg(strcmp(name, gone[i]) != 0, "%s listed", name);
		listed += strcmp(name, "read_range") == 0 || strcmp(name, "get_task_status") == 0;
	}
	cJSON_Delete(r);
	/* Reading still works (no display here, so the GUI tools stay unlisted). */
	ck_assert_int_eq(listed, 2);
	for (size_t i = 0; i < SBX_ELEMENTSOF(gone); i++) {
		ck_assert_ptr_null(server_find_tool(&srv, gone[i], NULL));
		ck_assert_int_ge(asprintf(&req,
					  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
					  "\"params\":{\"name\":\"%s\",\"arguments\":{}}}",
					  gone[i]),
				 0);
		r = rpc(req);
		free(req);
		ck_assert_int_eq(error_code(r), -32602);
		ck_assert_ptr_nonnull(
			strstr(sbx_json_get_string(sbx_json_get(r, "error"), "message", ""),
			       "Unknown tool: "));
		cJSON_Delete(r);
	}
	for (size_t i = 0; i < SBX_ELEMENTSOF(kept); i++)
		ck_assert_msg(server_find_tool(&srv, kept[i], NULL), "%s gone", kept[i]);
}
END_TEST

/* GET /tools and /resources in the reference's shapes. */
START_TEST(reference_listing_shapes)
{
	size_t i;
	cJSON *t, *res;
	const cJSON *p, *first;
	bool saw_file = false;

	ck_assert_ptr_nonnull(server_find_tool(&srv, "read_cell", &i));
	t = server_tool_json_reference(&srv, i);
	ck_assert_str_eq(sbx_json_get_string(t, "name", ""), "read_cell");
	ck_assert(*sbx_json_get_string(t, "description", ""));
	ck_assert_ptr_null(sbx_json_get(t, "inputSchema"));
	cJSON_ArrayForEach (p, sbx_json_get(t, "parameters")) {
		ck_assert(*sbx_json_get_string(p, "type", ""));
		ck_assert(cJSON_IsBool(sbx_json_get(p, "required")));
		if (strcmp(sbx_json_get_string(p, "name", ""), "file_path") == 0) {
			saw_file = true;
			ck_assert_str_eq(sbx_json_get_string(p, "type", ""), "string");
			ck_assert(cJSON_IsTrue(sbx_json_get(p, "required")));
		}
	}
	ck_assert(saw_file);
	cJSON_Delete(t);
	res = resources_list_reference(&srv.base);
	ck_assert(cJSON_IsArray(res));
	first = cJSON_GetArrayItem(res, 0);
	ck_assert_str_eq(sbx_json_get_string(first, "uri", ""), "file://cash_flows.ods");
	ck_assert_str_eq(sbx_json_get_string(first, "name", ""), "cash_flows.ods");
	cJSON_Delete(res);
}
END_TEST

START_TEST(resources_read_and_refuse)
{
	cJSON *r = rpc("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}");
	const cJSON *first =
		cJSON_GetArrayItem(sbx_json_get(sbx_json_get(r, "result"), "resources"), 0);
	char msg[1024];

	ck_assert_ptr_nonnull(first);
	snprintf(msg, sizeof(msg),
		 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":"
		 "\"%s\"}}",
		 sbx_json_get_string(first, "uri", ""));
	cJSON_Delete(r);
	r = rpc(msg);
	ck_assert(*sbx_json_get_string(
		cJSON_GetArrayItem(sbx_json_get(sbx_json_get(r, "result"), "contents"), 0), "blob",
		""));
	cJSON_Delete(r);
	r = rpc("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":"
		"\"file:///etc/passwd\"}}");
	ck_assert_int_eq(error_code(r), -32002);
	cJSON_Delete(r);
}
END_TEST

struct sink_log {
	char text[8192];
};

static void sink_collect(void *payload, const char *json)
{
	struct sink_log *l = payload;

	strncat(l->text, json, sizeof(l->text) - strlen(l->text) - 2);
	strcat(l->text, "\n");
}

static void *slow_call(void *arg)
{
	char *out = NULL;
	const char *msg = "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"tools/call\","
			  "\"params\":{\"name\":\"execute_python\",\"arguments\":{\"code\":"
			  "\"import time\\ntime.sleep(20)\"}}}";

	mcp_handle_text(&srv, &session, msg, strlen(msg), NULL, &out);
	return out;
}

START_TEST(cancellation_stops_code)
{
	pthread_t t;
	char *out = NULL;
	cJSON *r;

	ck_assert_int_eq(pthread_create(&t, NULL, slow_call, NULL), 0);
	usleep(500 * 1000);
	ck_assert_ptr_null(rpc("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			       "\"params\":{\"requestId\":\"slow\",\"reason\":\"test\"}}"));
	pthread_join(t, (void **)&out);
	ck_assert_ptr_nonnull(out);
	r = cJSON_Parse(out);
	ck_assert_ptr_nonnull(strstr(out, "E_CANCELLED"));
	ck_assert(cJSON_IsTrue(sbx_json_get(sbx_json_get(r, "result"), "isError")));
	cJSON_Delete(r);
	free(out);
}
END_TEST

START_TEST(log_and_progress_notifications)
{
	struct sink_log log = {""};
	rpc_sink sink = {sink_collect, &log};
	char *out = NULL;
	const char *lvl = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\","
			  "\"params\":{\"level\":\"info\"}}";
	const char *bad = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
			  "\"name\":\"read_cell\",\"arguments\":{\"file_path\":\"x.ods\","
			  "\"cell_reference\":\"A1\"}}}";
	const char *slow = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
			   "\"_meta\":{\"progressToken\":\"p1\"},\"name\":\"execute_python\","
			   "\"arguments\":{\"code\":\"import time\\ntime.sleep(1.5)\"}}}";

	ck_assert_int_eq(mcp_handle_text(&srv, &session, lvl, strlen(lvl), &sink, &out), 0);
	free(out);
	ck_assert_int_eq(mcp_handle_text(&srv, &session, bad, strlen(bad), &sink, &out), 0);
	free(out);
	ck_assert_ptr_nonnull(strstr(log.text, "notifications/message"));
	ck_assert_ptr_nonnull(strstr(log.text, "File not found: x.ods"));
	ck_assert_int_eq(mcp_handle_text(&srv, &session, slow, strlen(slow), &sink, &out), 0);
	free(out);
	ck_assert_ptr_nonnull(strstr(log.text, "notifications/progress"));
	ck_assert_ptr_nonnull(strstr(log.text, "\"progressToken\":\"p1\""));
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "core", setup, teardown, 60, initialize_negotiates_version,
		      ping_and_unknown_methods, malformed_messages, deep_nesting_refused,
		      tools_list_is_complete, unknown_tool_is_protocol_error, arguments_validated,
		      schema_subset, read_tools, write_tools_persist, sheet_and_row_tools,
		      reference_error_texts, absolute_path_inside_workspace,
		      sheet_qualified_references, xlsx_files_work_too,
		      execute_python_runs_in_workspace, execute_python_timeout_and_caps,
		      capture_keeps_head_and_tail, task_deadline, status_wait_long_polls,
		      complete_task_writes_status, complete_task_computes_formulas_natively,
		      task_start_replaces_when_asked, deadline_sets_timeout,
		      gui_tools_unlisted_without_display, gui_toolset_hides_writers,
		      reference_listing_shapes, resources_read_and_refuse, cancellation_stops_code,
		      log_and_progress_notifications);
}

SBX_TEST_MAIN("server", add_cases)
