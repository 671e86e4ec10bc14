/* SPDX-License-Identifier: MIT */
/* The task session (deadlines, status, complete_task), GUI toolsets, resources, cancellation,
 * notifications. */
#include "test_server.h"

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

void server_session_tests(TCase *tc)
{
	SBX_TEST_ADD(tc, task_deadline, status_wait_long_polls, complete_task_writes_status,
		     complete_task_computes_formulas_natively, task_start_replaces_when_asked,
		     deadline_sets_timeout, gui_tools_unlisted_without_display,
		     gui_toolset_hides_writers, reference_listing_shapes, resources_read_and_refuse,
		     cancellation_stops_code, log_and_progress_notifications);
}
