/* SPDX-License-Identifier: MIT */
/* The JSON-RPC layer: initialize, ping, malformed messages, tools/list, argument validation. */
#include "test_server.h"

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

void server_protocol_tests(TCase *tc)
{
	SBX_TEST_ADD(tc, initialize_negotiates_version, ping_and_unknown_methods,
		     malformed_messages, deep_nesting_refused, tools_list_is_complete,
		     unknown_tool_is_protocol_error, arguments_validated, schema_subset);
}
