/* SPDX-License-Identifier: MIT */
/*
 * The host's control API: GET /control/status (a long-poll on the task
 * state), GET /control/file/<path> (a workspace file's raw bytes),
 * GET /control/screenshot (PNG bytes), POST /control/complete,
 * POST /control/deadline (a warm sandbox learns its episode's),
 * PUT /control/files (the task's files as a tar, unpack.c),
 * POST and GET /control/reset (a reused sandbox: PID 1 resets it between
 * episodes, images/init/sandbox-reset-pid1.h). Plain HTTP
 * with raw bodies, so the host needs neither an MCP session nor base64.
 * The relay never forwards /control from an agent (lib/relay), so only the
 * host that owns the sandbox reaches it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_server.h"
#include "resources.h"
#include "sbx/base64.h"
#include "sbx/file.h"
#include "spawn-protocol.h"
#include "task_session.h"
#include "unpack.h"

#define CONTROL_WAIT_MAX_MS 30000

static const char *arg(http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* A decimal in [0, max], else -1. */
static long decimal(const char *s, long max)
{
	char *end;
	long v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	return v;
}

/* ?since= a version the client was shown, or a state name ("running"). */
static int parse_since(const char *s, long *version, int *state)
{
	static const task_state states[] = {TASK_PENDING, TASK_RUNNING, TASK_COMPLETED,
					    TASK_TIMED_OUT};

	*version = -1;
	*state = -1;
	if (!s)
		return 0;
	*version = decimal(s, 0x7fffffffL);
	if (*version >= 0)
		return 0;
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strcmp(s, task_state_name(states[i])) == 0) {
			*state = (int)states[i];
			return 0;
		}
	return -EINVAL;
}

static enum MHD_Result status(http_request *req)
{
	const char *wait = arg(req, "wait");
	long wait_ms = wait ? decimal(wait, 1L << 30) : 0, version;
	int state;
	cJSON *o;

	if (wait_ms < 0)
		return http_reply_error(req, 422, "Invalid wait: expected milliseconds");
	if (parse_since(arg(req, "since"), &version, &state) < 0)
		return http_reply_error(req, 422,
					"Invalid since: expected a version or a task state");
	if (wait_ms > CONTROL_WAIT_MAX_MS)
		wait_ms = CONTROL_WAIT_MAX_MS;
	o = task_session_wait(req->srv->base.task, version, state, (int)wait_ms);
	if (o)
		cJSON_AddBoolToObject(o, "success", true);
	return http_reply_json(req, 200, o);
}

static enum MHD_Result file(http_request *req, const char *path)
{
	sbx_error err = SBX_ERROR_INIT;
	char *data = NULL;
	size_t len = 0;
	int r;

	r = resources_read_bytes(&req->srv->base, path, &data, &len, &err);
	switch (r) {
	case 0:
		return http_reply_bytes(req, 200, "application/octet-stream", data, len, NULL);
	case -ENOENT:
		return http_reply_error(req, 404, sbx_error_message(&err));
	case -EFBIG:
		return http_reply_error(req, 413, sbx_error_message(&err));
	case -ENOMEM:
		return http_reply_error(req, 500, "out of memory");
	default:
		return http_reply_error(req, 422, sbx_error_message(&err));
	}
}

/*
 * The take_screenshot tool's picture as PNG bytes. ?show_saved=1 asks it to
 * start Calc again on a file the tools changed first (X-Reloaded says
 * whether it did); ?window=TEXT looks for a window whose title has TEXT
 * (X-Window-Shown).
 */
static enum MHD_Result screenshot(http_request *req)
{
	const char *show = arg(req, "show_saved"), *window = arg(req, "window");
	tool_context ctx = req->srv->base;
	_cleanup_json_ cJSON *args = cJSON_CreateObject();
	const char *headers[5] = {NULL};
	tool_result r = {0};
	enum MHD_Result ret;
	ssize_t n;

	if (!args)
		return http_reply_error(req, 500, "out of memory");
	if (show && strcmp(show, "1") == 0)
		cJSON_AddTrueToObject(args, "show_saved");
	if (window)
		cJSON_AddStringToObject(args, "window", window);
	if (server_call_tool(req->srv, "take_screenshot", args, &ctx, &r) == -ENOENT ||
	    r.error_kind == TOOL_E_UNAVAILABLE) {
		tool_result_clear(&r);
		return http_reply_error(req, 404, "No display available");
	}
	if (r.error_kind != TOOL_OK || !r.image_png_b64 ||
	    (n = sbx_base64_decode(r.image_png_b64)) <= 0) {
		ret = http_reply_error(req,
				       r.error_kind == TOOL_E_TIMEOUT	 ? 408
				       : r.error_kind == TOOL_E_ARGUMENT ? 422
									 : 500,
				       r.error ? r.error : "no screenshot");
		tool_result_clear(&r);
		return ret;
	}
	headers[0] = "X-Reloaded";
	headers[1] = cJSON_IsTrue(sbx_json_get(r.structured, "reloaded")) ? "true" : "false";
	if (window) {
		headers[2] = "X-Window-Shown";
		headers[3] =
			cJSON_IsTrue(sbx_json_get(r.structured, "window_shown")) ? "true" : "false";
	}
	ret = http_reply_bytes(req, 200, "image/png", TAKE_PTR(r.image_png_b64), (size_t)n,
			       headers);
	tool_result_clear(&r);
	return ret;
}

/*
 * {"deadline": unix seconds}: the episode's end. A warm sandbox was started
 * before its episode existed, with only the pool's deadline in its
 * environment; without this get_task_status would count down from that.
 */
static enum MHD_Result deadline(http_request *req)
{
	_cleanup_json_ cJSON *body = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const cJSON *d;
	char msg[256];

	if (sbx_json_parse(req->body, req->body_len, &body, &err) < 0) {
		snprintf(msg, sizeof(msg), "Malformed request: %s", sbx_error_message(&err));
		return http_reply_error(req, 400, msg);
	}
	d = sbx_json_get(body, "deadline");
	if (!cJSON_IsNumber(d) || !(d->valuedouble > 0) || d->valuedouble > 1e11)
		return http_reply_error(
			req, 422, "Invalid deadline: expected unix seconds, a positive number");
	task_session_set_deadline(req->srv->base.task, d->valuedouble);
	return http_reply_json(req, 200, task_session_status(req->srv->base.task));
}

/*
 * The task's files, a tar in the body, unpacked beneath the workspace: they
 * travel on a stream the host already holds instead of an exec'd tar (a
 * container operation of 50-120 ms). 422 names the entry refused.
 */
static enum MHD_Result files_in(http_request *req)
{
	sbx_error err = SBX_ERROR_INIT;
	unpack_stats st;
	cJSON *o;

	if (workspace_unpack(req->srv->base.workspace_fd, req->body, req->body_len, &st, &err) < 0)
		return http_reply_error(req, err.code == -ENOMEM ? 500 : 422,
					sbx_error_message(&err));
	o = cJSON_CreateObject();
	if (!o)
		return http_reply_error(req, 500, "out of memory");
	cJSON_AddBoolToObject(o, "success", true);
	cJSON_AddNumberToObject(o, "files", (double)st.files);
	cJSON_AddNumberToObject(o, "bytes", (double)st.bytes);
	return http_reply_json(req, 200, o);
}

/*
 * {"reset": ID, "deadline": unix seconds}: PID 1 kills this server once the
 * 202 is out, resets the sandbox and starts a new server, whose
 * GET /control/reset then answers the verdict for ID. 404 when the sandbox
 * was not started for reuse.
 */
static enum MHD_Result reset_order(http_request *req)
{
	_cleanup_json_ cJSON *body = NULL;
	sbx_error err = SBX_ERROR_INIT;
	struct sbx_reset_order o = {SBX_RESET_MAGIC, 0, 0, 0};
	const cJSON *id, *d;
	char *ans;

	if (req->srv->init_fd < 0)
		return http_reply_error(
			req, 404, "Reset is not offered: the sandbox was not started for reuse");
	if (sbx_json_parse(req->body, req->body_len, &body, &err) < 0)
		return http_reply_error(req, 400, "Malformed request");
	id = sbx_json_get(body, "reset");
	d = sbx_json_get(body, "deadline");
	if (!cJSON_IsNumber(id) || !(id->valuedouble >= 1) || id->valuedouble > 9e15 ||
	    !cJSON_IsNumber(d) || !(d->valuedouble > 0) || d->valuedouble > 1e11)
		return http_reply_error(req, 422,
					"Invalid reset: expected {\"reset\": a positive id, "
					"\"deadline\": unix seconds}");
	o.id = (uint64_t)id->valuedouble;
	o.deadline = (int64_t)d->valuedouble;
	memcpy(req->after_reply, &o, sizeof(o));
	req->after_reply_len = sizeof(o);
	/* Connection: close: the next request on this stream reaches the next server
	 * (the host's bridge connects again), never this one as it dies. */
	if (asprintf(&ans, "{\"success\":true,\"resetting\":%llu}", (unsigned long long)o.id) < 0)
		return http_reply_error(req, 500, "out of memory");
	return http_reply_bytes(req, 202, "application/json", ans, strlen(ans),
				(const char *const[]){"Connection", "close", NULL});
}

/* The last reset's verdict, as PID 1 wrote it before starting this server. */
static enum MHD_Result reset_report(http_request *req)
{
	const char *dir = getenv("SANDBOX_RUN_DIR");
	sbx_error err = SBX_ERROR_INIT;
	char path[4096], *data = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/reset.json", dir && *dir ? dir : "/tmp/sandbox");
	if (req->srv->init_fd < 0 ||
	    sbx_file_read_capped(AT_FDCWD, path, 64 * 1024, &data, &len, &err) < 0)
		return http_reply_error(req, 404, "No reset has been made");
	return http_reply_bytes(req, 200, "application/json", data, len, NULL);
}

bool http_control_route(http_request *req, enum MHD_Result *result)
{
	bool get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0;
	const char *url = req->url;

	if (strncmp(url, "/control/", 9) != 0 && strcmp(url, "/control") != 0)
		return false;
	/* The published port is reachable by tool code and any local user: the host's
	 * API is served on the unix socket only, which the host reaches by a docker exec. */
	if (req->published) {
		*result = http_reply_error(req, 403,
					   "Forbidden: /control is the host's, not served on this "
					   "port");
		return true;
	}
	url += 8;
	if (http_sandbox_route(req, url, result))
		return true;
	if (strcmp(url, "/status") == 0 && get)
		*result = status(req);
	else if (strncmp(url, "/file/", 6) == 0 && get)
		*result = file(req, url + 6);
	else if (strcmp(url, "/screenshot") == 0 && get)
		*result = screenshot(req);
	else if (strcmp(url, "/complete") == 0 && post)
		*result = http_task_complete(req);
	else if (strcmp(url, "/deadline") == 0 && post)
		*result = deadline(req);
	else if (strcmp(url, "/files") == 0 && strcmp(req->method, "PUT") == 0)
		*result = files_in(req);
	else if (strcmp(url, "/reset") == 0 && post)
		*result = reset_order(req);
	else if (strcmp(url, "/reset") == 0 && get)
		*result = reset_report(req);
	else if (strcmp(url, "/status") == 0 || strncmp(url, "/file/", 6) == 0 ||
		 strcmp(url, "/screenshot") == 0 || strcmp(url, "/complete") == 0 ||
		 strcmp(url, "/deadline") == 0 || strcmp(url, "/files") == 0 ||
		 strcmp(url, "/reset") == 0)
		*result = http_reply_error(req, 405, "Method not allowed");
	else
		*result = http_reply_error(req, 404, "Not found");
	return true;
}
