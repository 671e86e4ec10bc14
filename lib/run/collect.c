/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "collect.h"
#include "run-internal.h"
#include "rundir.h"
#include "sbx/base64.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/path.h"

#define RPC_TIMEOUT_MS 30000

/* One JSON-RPC exchange on /mcp; *out owns the parsed response. */
static int rpc(sbx_relay *relay, const char *session, const char *body, char **sid_out, cJSON **out,
	       sbx_error *err)
{
	_cleanup_free_ char *hdr = NULL;
	sbx_relay_response resp = {0};
	const char *json;
	size_t len;
	int r;

	if (session && asprintf(&hdr, "Mcp-Session-Id: %s\r\n", session) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_relay_request(relay, "POST", "/mcp", hdr, body, strlen(body), false, RPC_TIMEOUT_MS,
			      &resp, err);
	if (r < 0)
		return r;
	if (resp.status != 200) {
		r = sbx_error_set(err, -EPROTO, "POST /mcp: HTTP %d", resp.status);
		goto done;
	}
	json = resp.body;
	len = resp.len;
	/* An SSE answer: the last data line holds the response. */
	if (resp.content_type && strstr(resp.content_type, "event-stream")) {
		const char *d = NULL;

		for (const char *p = resp.body; (p = strstr(p, "data:")); p += 5)
			d = p + 5;
		if (!d) {
			r = sbx_error_set(err, -EPROTO, "POST /mcp: empty event stream");
			goto done;
		}
		json = d;
		len = strcspn(d, "\n");
	}
	r = sbx_json_parse(json, len, out, err);
	if (r >= 0 && sid_out && resp.session_id)
		*sid_out = strdup(resp.session_id);
done:
	sbx_relay_response_free(&resp);
	return r;
}

/*
 * "file://" + the path relative to the workspace (the reference's names,
 * which the server reads relative to its own --workspace), percent-encoded
 * where it must be: the host need not know where the sandbox keeps it.
 */
static char *uri_of(const char *rel)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(16384);

	if (sbx_buf_puts(&b, "file://") < 0)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)rel; *p; p++) {
		int r;

		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
			r = sbx_buf_putc(&b, (char)*p);
		else
			r = sbx_buf_printf(&b, "%%%02X", *p);
		if (r < 0)
			return NULL;
	}
	return sbx_buf_steal(&b, NULL);
}

static int read_one(sbx_relay *relay, const char *sid, const char *rel, const char *outdir, int id,
		    sbx_error *err)
{
	_cleanup_json_ cJSON *req = cJSON_CreateObject(), *resp = NULL;
	_cleanup_free_ char *uri = uri_of(rel), *body = NULL, *data = NULL;
	const cJSON *item, *e;
	const char *text, *blob;
	ssize_t n;
	int r;

	if (!req || !uri)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	cJSON_AddStringToObject(req, "jsonrpc", "2.0");
	cJSON_AddNumberToObject(req, "id", id);
	cJSON_AddStringToObject(req, "method", "resources/read");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "params"), "uri", uri);
	body = sbx_json_print(req);
	if (!body)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = rpc(relay, sid, body, NULL, &resp, err);
	if (r < 0)
		return r;
	e = sbx_json_get(resp, "error");
	if (e) {
		const char *msg = sbx_json_get_string(e, "message", "error");

		/* Not there: the agent did not write it; the grader says so. The
		 * server answers -32002 for a file over its 16 MiB too
		 * (server/tools/file_tools.c): that one the exec'd tar, with its own caps,
		 * collects, so a large output is neither lost nor "not found". */
		if (sbx_json_get_number(e, "code", 0) == -32002 &&
		    strncmp(msg, "Resource not found", 18) == 0)
			return 0;
		return sbx_error_set(err, -EPROTO, "resources/read '%s': %s", rel, msg);
	}
	item = cJSON_GetArrayItem(sbx_json_get(sbx_json_get(resp, "result"), "contents"), 0);
	text = sbx_json_get_string(item, "text", NULL);
	blob = sbx_json_get_string(item, "blob", NULL);
	if (text)
		return sbx_path_write_beneath(outdir, rel, text, strlen(text), err);
	if (!blob)
		return sbx_error_set(err, -EPROTO, "resources/read '%s': no contents", rel);
	data = strdup(blob);
	if (!data)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	n = sbx_base64_decode(data);
	if (n < 0)
		return sbx_error_set(err, -EPROTO, "resources/read '%s': bad base64", rel);
	return sbx_path_write_beneath(outdir, rel, data, (size_t)n, err);
}

int sbx_collect__outputs(sbx_relay *relay, const sbx_task *task, const char *outdir, sbx_error *err)
{
	static const char init[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		"\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
		"\"clientInfo\":{\"name\":\"sandboxctl-collect\",\"version\":\"1\"}}}";
	_cleanup_json_ cJSON *resp = NULL;
	_cleanup_free_ char *sid = NULL, *hdr = NULL;
	sbx_relay_response del = {0};
	int r;

	if (task->n_outputs == 0)
		return 0;
	r = rpc(relay, NULL, init, &sid, &resp, err);
	if (r < 0)
		return r;
	if (!sid)
		return sbx_error_set(err, -EPROTO, "initialize: no Mcp-Session-Id");
	for (size_t i = 0; r >= 0 && i < task->n_outputs; i++)
		r = read_one(relay, sid, task->outputs[i], outdir, (int)i + 2, err);
	if (asprintf(&hdr, "Mcp-Session-Id: %s\r\n", sid) >= 0 &&
	    sbx_relay_request(relay, "DELETE", "/mcp", hdr, NULL, 0, false, RPC_TIMEOUT_MS, &del,
			      NULL) >= 0)
		sbx_relay_response_free(&del);
	return r;
}

/* What sandbox-init logs once the firewall is set and every capability is gone. */
#define SBX_INIT_DROPPED "every capability dropped (bounding set included)"

void sbx_run__save_logs(sbx_run *run)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(16 * 1024 * 1024);
	sbx_error e = SBX_ERROR_INIT;

	if (run->backend->ops->logs(run->backend, &b, &e) < 0)
		sbx_log_warning("container log: %s", sbx_error_message(&e));
	/* PID 1 refuses to run when it cannot drop them, so a ready server implies this line. */
	if (b.data && memmem(b.data, b.len, SBX_INIT_DROPPED, sizeof(SBX_INIT_DROPPED) - 1))
		run->res.privileges_dropped = true;
	sbx_rundir__write(run->res.run_dir, "container.log", b.data ? b.data : "", b.len, NULL);
}

void sbx_run__save_screenshot(sbx_run *run, bool show_saved)
{
	const char *body = show_saved ? "{\"tool_name\":\"take_screenshot\",\"arguments\":"
					"{\"show_saved\":true}}"
				      : "{\"tool_name\":\"take_screenshot\",\"arguments\":{}}";
	sbx_relay_response resp = {0};
	_cleanup_json_ cJSON *j = NULL;
	const char *b64;

	/* Calc's restart on the saved file takes a few seconds of this. */
	if (sbx_relay_request(run->relay, "POST", "/tools/call", NULL, body, strlen(body), false,
			      30000, &resp, NULL) < 0)
		return;
	if (resp.status == 200 && sbx_json_parse(resp.body, resp.len, &j, NULL) == 0 &&
	    (b64 = sbx_json_get_string(sbx_json_get(j, "result"), "image_base64", NULL))) {
		run->res.screenshot_reloaded =
			cJSON_IsTrue(sbx_json_get(sbx_json_get(j, "result"), "reloaded"));
		_cleanup_free_ char *png = strdup(b64);
		ssize_t n = png ? sbx_base64_decode(png) : -1;

		if (n > 0 && sbx_rundir__write(run->res.run_dir, "screenshot.png", png, (size_t)n,
					       NULL) == 0)
			run->res.screenshot = true;
	}
	sbx_relay_response_free(&resp);
}

void sbx_run__grade(sbx_run *run)
{
	_cleanup_free_ char *outdir = NULL;
	sbx_error e = SBX_ERROR_INIT;
	double t = sbx_run__mono_msf();
	int r;

	if (!run->o.grade || asprintf(&outdir, "%s/outputs", run->res.run_dir) < 0)
		return;
	r = run->o.grade(run->task, outdir, &run->res.grade, run->o.grade_userdata, &e);
	sbx_run__phase_done(run, SBX_PHASE_GRADE, t);
	if (r < 0) {
		sbx_run__set_infra(run, "grader", &e);
		return;
	}
	if (run->res.grade.report_text)
		sbx_rundir__write(run->res.run_dir, "grade.txt", run->res.grade.report_text,
				  strlen(run->res.grade.report_text), NULL);
	if (run->res.grade.report_json)
		sbx_rundir__write(run->res.run_dir, "grade.json", run->res.grade.report_json,
				  strlen(run->res.grade.report_json), NULL);
}
