/* SPDX-License-Identifier: MIT */
/*
 * The REST API of the reference system: GET /tools, POST /tools/call,
 * GET /resources, POST /task/start, GET /task/status, POST /task/complete.
 * Answers {"success", "result", "error"}; status 400 malformed request,
 * 404 unknown tool, 408 task timed out, 422 bad argument, 500 internal fault.
 *
 * On the reference's paths the shapes and task semantics are the reference's,
 * so its clients work unchanged. The same endpoints under /v1/ (and /tools or
 * /resources with ?format=mcp) keep ours: MCP tool entries with schemas,
 * absolute resource URIs, a /task/status that always answers 200 (the host
 * polls it), and a /task/start that keeps a running task.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "http_server.h"
#include "resources.h"
#include "task_session.h"

static unsigned status_for(tool_error_kind kind)
{
	switch (kind) {
	case TOOL_OK:
		return 200;
	case TOOL_E_ARGUMENT:
	case TOOL_E_UNAVAILABLE:
		return 422;
	case TOOL_E_TIMEOUT:
		return 408;
	case TOOL_E_FAILED:
		return 200;
	case TOOL_E_INTERNAL:
		break;
	}
	return 500;
}

static enum MHD_Result tools_call(http_request *req)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_json_ cJSON *body = NULL;
	const cJSON *args;
	const char *name;
	tool_context ctx = req->srv->base;
	tool_result r = {0};
	cJSON *o;
	unsigned status;
	char msg[SBX_ERROR_MAX + 64];

	if (sbx_json_parse(req->body, req->body_len, &body, &err) < 0) {
		snprintf(msg, sizeof(msg), "Malformed request: %s", sbx_error_message(&err));
		return http_reply_error(req, 400, msg);
	}
	name = sbx_json_get_string(body, "tool_name", sbx_json_get_string(body, "name", NULL));
	if (!name)
		return http_reply_error(req, 400, "Malformed request: 'tool_name' is required");
	args = sbx_json_get(body, "arguments");
	if (cJSON_IsNull(args))
		args = NULL;
	if (args && !cJSON_IsObject(args))
		return http_reply_error(req, 400,
					"Malformed request: 'arguments' must be an object");
	if (server_call_tool(req->srv, name, args, &ctx, &r) == -ENOENT) {
		snprintf(msg, sizeof(msg), "Unknown tool: %.200s", name);
		return http_reply_error(req, 404, msg);
	}
	status = status_for(r.error_kind);
	o = cJSON_CreateObject();
	if (o) {
		cJSON_AddBoolToObject(o, "success", r.error_kind == TOOL_OK);
		if (r.structured) {
			cJSON_AddItemToObject(o, "result", r.structured);
			r.structured = NULL;
		} else {
			cJSON_AddNullToObject(o, "result");
		}
		if (r.error)
			cJSON_AddStringToObject(o, "error", r.error);
		else
			cJSON_AddNullToObject(o, "error");
		if (r.error_code)
			cJSON_AddStringToObject(o, "error_code", r.error_code);
	}
	tool_result_clear(&r);
	return http_reply_json(req, status, o);
}

/*
 * The reference's 17 tools, in its order: its check script asserts that
 * GET /tools lists exactly these. The others stay callable on every path and
 * listed by /v1/tools and MCP.
 */
static const char *const reference_tools[] = {
	"read_cell",   "write_cell",	      "read_range", "write_range",    "set_formula",
	"list_sheets", "get_sheet_info",      "list_files", "execute_python", "take_screenshot",
	"click",       "double_click",	      "type_text",  "key_press",      "mouse_move",
	"drag",	       "get_cursor_position",
};

static enum MHD_Result tools_list(http_request *req, bool ours)
{
	cJSON *o = ours ? cJSON_CreateObject() : cJSON_CreateArray();
	cJSON *arr = ours ? cJSON_AddArrayToObject(o, "tools") : o;
	size_t n = 0, i;

	for (i = 0; ours && arr && i < req->srv->n_tools; i++) {
		if (!server_tool_listed(req->srv, i))
			continue;
		cJSON_AddItemToArray(arr, server_tool_json(req->srv, i));
		n++;
	}
	for (size_t k = 0; !ours && arr && k < SBX_ELEMENTSOF(reference_tools); k++)
		if (server_find_tool(req->srv, reference_tools[k], &i) &&
		    server_tool_listed(req->srv, i))
			cJSON_AddItemToArray(arr, server_tool_json_reference(req->srv, i));
	if (ours)
		cJSON_AddNumberToObject(o, "count", (double)n);
	return http_reply_json(req, 200, o);
}

/* The task status wrapped for REST: success plus every status field at the top level. */
static enum MHD_Result task_reply_with(http_request *req, unsigned status, bool success,
				       const char *error, const char *key, cJSON *extra)
{
	cJSON *o = task_session_status(req->srv->base.task);

	if (!o) {
		cJSON_Delete(extra);
		return http_reply_error(req, 500, "out of memory");
	}
	if (extra)
		cJSON_AddItemToObject(o, key, extra);
	cJSON_AddBoolToObject(o, "success", success);
	if (error) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "error");
		cJSON_AddStringToObject(o, "error", error);
	}
	return http_reply_json(req, status, o);
}

static enum MHD_Result task_reply(http_request *req, unsigned status, bool success,
				  const char *error)
{
	return task_reply_with(req, status, success, error, NULL, NULL);
}

static enum MHD_Result task_start(http_request *req, bool ours)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_json_ cJSON *body = NULL;
	const cJSON *timeout;
	char msg[SBX_ERROR_MAX + 64];
	int r;

	if (req->body_len > 0 && sbx_json_parse(req->body, req->body_len, &body, &err) < 0) {
		snprintf(msg, sizeof(msg), "Malformed request: %s", sbx_error_message(&err));
		return http_reply_error(req, 400, msg);
	}
	if (body && !cJSON_IsObject(body))
		return http_reply_error(req, 400, "Malformed request: expected a JSON object");
	timeout = sbx_json_get(body, "timeout_seconds");
	if (timeout && !cJSON_IsNull(timeout) &&
	    (!cJSON_IsNumber(timeout) || timeout->valuedouble <= 0 ||
	     timeout->valuedouble > 7 * 86400))
		return http_reply_error(req, 422,
					"Invalid timeout_seconds: expected a number of seconds "
					"(0 < t <= 604800)");
	/* The reference replaces a running task; ours keeps it (the first tool call started it). */
	r = task_session_start(req->srv->base.task, sbx_json_get_string(body, "task_id", NULL),
			       cJSON_IsNumber(timeout) ? timeout->valuedouble : 0, !ours);
	if (r == 1)
		return task_reply_with(req, 200, true, NULL, "replaced", cJSON_CreateTrue());
	if (r == -EBUSY) {
		cJSON *o = task_session_status(req->srv->base.task);
		if (o) {
			cJSON_AddBoolToObject(o, "success", true);
			cJSON_AddBoolToObject(o, "already_running", true);
		}
		return http_reply_json(req, 200, o);
	}
	return task_reply(req, 200, true, NULL);
}

enum MHD_Result http_task_complete(http_request *req)
{
	_cleanup_json_ cJSON *recalculated = cJSON_CreateArray();
	_cleanup_json_ cJSON *recalc = cJSON_CreateObject();
	tool_context ctx = req->srv->base;
	int r;

	if (recalculated && task_session_state(ctx.task) == TASK_RUNNING)
		recalc_pending(&ctx, recalculated, recalc);
	if (recalc && cJSON_GetArraySize(recalc))
		task_session_set_recalc(ctx.task, recalc);
	r = task_session_complete(req->srv->base.task, NULL);

	if (r == -ETIME)
		return task_reply(req, 408, false, "Task has timed out");
	return task_reply_with(req, 200, true, NULL, "recalculated", TAKE_PTR(recalculated));
}

/*
 * The reference answers 404 while no task runs: before /task/start and after
 * /task/complete. A timed-out task is still reported, so a client sees why.
 */
static enum MHD_Result task_status(http_request *req, bool ours)
{
	task_state st = task_session_state(req->srv->base.task);

	if (!ours && (st == TASK_PENDING || st == TASK_COMPLETED))
		return task_reply(req, 404, false, "No active task");
	return task_reply(req, 200, true, NULL);
}

/* ?format=mcp asks a reference path for our shape. */
static bool wants_ours(http_request *req)
{
	const char *f = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "format");

	return f && strcmp(f, "mcp") == 0;
}

bool http_rest_route(http_request *req, enum MHD_Result *result)
{
	bool get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
	bool post = strcmp(req->method, "POST") == 0;
	const char *url = req->url;
	bool ours = strncmp(url, "/v1/", 4) == 0;

	if (ours)
		url += 3;
	else
		ours = wants_ours(req);
	if (strcmp(url, "/tools") == 0 && get)
		*result = tools_list(req, ours);
	else if (strcmp(url, "/tools/call") == 0 && post)
		*result = tools_call(req);
	else if (strcmp(url, "/resources") == 0 && get)
		*result = http_reply_json(req, 200,
					  ours ? resources_list(&req->srv->base)
					       : resources_list_reference(&req->srv->base));
	else if (strcmp(url, "/task/start") == 0 && post)
		*result = task_start(req, ours);
	else if (strcmp(url, "/task/status") == 0 && get)
		*result = task_status(req, ours);
	else if (strcmp(url, "/task/complete") == 0 && post)
		*result = http_task_complete(req);
	else if (strcmp(url, "/tools") == 0 || strcmp(url, "/tools/call") == 0 ||
		 strcmp(url, "/resources") == 0 || strncmp(url, "/task/", 6) == 0)
		*result = http_reply_error(req, 405, "Method not allowed");
	else
		return false;
	return true;
}
