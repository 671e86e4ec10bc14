/* SPDX-License-Identifier: MIT */
/*
 * sandbox-mcp in-process: the JSON-RPC handler, the dispatch table, every
 * tool and every error path, through mcp_handle_text as a transport would.
 *
 * This file: the runner, the fixture and the calls the tests share; the tests
 * are in test_server_{protocol,tools,session}.c.
 */
#include "test_server.h"

server srv;
mcp_session session;
char ws[64];
char status_path[128];

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

void setup_timeout(double task_timeout)
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
cJSON *rpc(const char *text)
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

int error_code(const cJSON *r)
{
	return (int)sbx_json_get_number(sbx_json_get(r, "error"), "code", 0);
}

/* Calls a tool; returns the CallToolResult (caller frees via the root in *root). */
const cJSON *call(const char *name, const char *args, cJSON **root)
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

bool is_error(const cJSON *res)
{
	return cJSON_IsTrue(sbx_json_get(res, "isError"));
}

const char *error_text(const cJSON *res)
{
	return sbx_json_get_string(cJSON_GetArrayItem(sbx_json_get(res, "content"), 0), "text", "");
}

const cJSON *structured(const cJSON *res)
{
	ck_assert_msg(!is_error(res), "tool failed: %s", error_text(res));
	return sbx_json_get(res, "structuredContent");
}
void check_errors(const error_case *cases, size_t n)
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

static void add_cases(Suite *s)
{
	TCase *tc = sbx_test_case(s, "core", setup, teardown, 60);

	server_protocol_tests(tc);
	server_tool_tests(tc);
	server_session_tests(tc);
}

SBX_TEST_MAIN("server", add_cases)
