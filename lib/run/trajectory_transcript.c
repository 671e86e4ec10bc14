/* SPDX-License-Identifier: MIT */
/*
 * trajectory.json's tool calls from transcript.jsonl: each request (MCP
 * tools/call, a JSON-RPC batch's, the reference's REST POST /tools/call)
 * paired with its reply by JSON-RPC id, same connection first; what the
 * relay cut kept as a head. The caller (trajectory.c) makes the steps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "trajectory-internal.h"

#define SEARCH_BACK 4096 /* open calls a reply is matched against */

/* "2026-12-05T02:02:40.320Z" (the transcript's form) → unix ms, or -1. */
static double parse_iso(const char *s)
{
	struct tm tm = {0};
	int ms = 0, n = 0;

	if (!s ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &n) != 7 ||
	    n == 0 || s[n] != '\0')
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) * 1000 + ms;
}

/* A tool result's content as one string: text items as they are, others named. */
static char *result_text(traj *t, const cJSON *result)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(t->content_max * 2 + 256);
	const cJSON *c, *content = cJSON_GetObjectItemCaseSensitive(result, "content");

	if (sbx_json_get_bool(result, "isError", false))
		sbx_buf_puts(&b, "[tool error] ");
	cJSON_ArrayForEach (c, content) {
		const char *type = sbx_json_get_string(c, "type", "?");
		const char *text = sbx_json_get_string(c, "text", NULL);

		if (b.len && b.data[b.len - 1] != ' ')
			sbx_buf_putc(&b, '\n');
		if (strcmp(type, "text") == 0 && text) {
			size_t room = b.max > b.len + 64 ? b.max - b.len - 64 : 0;
			sbx_buf_append(&b, text, strlen(text) < room ? strlen(text) : room);
		} else {
			const char *data = sbx_json_get_string(c, "data", "");
			sbx_buf_printf(&b, "[%.32s %.64s, %zu bytes base64]", type,
				       sbx_json_get_string(c, "mimeType", ""), strlen(data));
		}
	}
	if (!cJSON_IsArray(content)) {
		_cleanup_free_ char *text = cJSON_PrintUnformatted(result);
		if (text)
			sbx_buf_append(&b, text, strlen(text));
	}
	return sbx_run__traj_clip(t, b.data ? b.data : "", b.len, t->content_max);
}

static char *error_text(traj *t, const cJSON *error)
{
	_cleanup_free_ char *s = NULL;

	if (asprintf(&s, "[JSON-RPC error %.0f] %s", sbx_json_get_number(error, "code", 0),
		     sbx_json_get_string(error, "message", "")) < 0)
		return NULL;
	return sbx_run__traj_clip(t, s, strlen(s), t->content_max);
}

/* A call as requested; args (owned, already clipped) is taken. NULL when omitted. */
static call *add_call(traj *t, unsigned conn, const cJSON *id, const char *name, cJSON *args,
		      double ms)
{
	_cleanup_free_ char *a = args ? cJSON_PrintUnformatted(args) : NULL;
	call *c;

	if (t->spent >= t->budget || !a || t->n_calls == SIZE_MAX / sizeof(*c) / 2) {
		cJSON_Delete(args);
		t->omitted++;
		return NULL;
	}
	if (t->n_calls == t->cap_calls) {
		size_t cap = t->cap_calls ? t->cap_calls * 2 : 64;
		call *n = realloc(t->calls, cap * sizeof(*n));
		if (!n) {
			cJSON_Delete(args);
			t->omitted++;
			return NULL;
		}
		t->calls = n;
		t->cap_calls = cap;
	}
	c = &t->calls[t->n_calls];
	*c = (call){.conn = conn, .ms = ms, .args = args};
	c->id = id ? cJSON_Duplicate(id, 1) : NULL;
	c->name = sbx_run__traj_clip(t, name, strlen(name), 256);
	if (!c->name || (id && !c->id)) {
		cJSON_Delete(c->id);
		cJSON_Delete(c->args);
		free(c->name);
		t->omitted++;
		return NULL;
	}
	t->spent += strlen(c->name) + strlen(a) + 64;
	t->n_calls++;
	return c;
}

/*
 * The open call a response answers: the same id on the same connection, then
 * (JSON-RPC) on any, then the oldest call on that connection whose request the
 * transcript could not keep whole (no id known).
 */
static call *find_pending(traj *t, unsigned conn, const cJSON *id)
{
	size_t lo = t->n_calls > SEARCH_BACK ? t->n_calls - SEARCH_BACK : 0;

	for (int pass = 0; pass < 2 && (pass == 0 || id); pass++)
		for (size_t i = t->n_calls; i-- > lo;) {
			call *c = &t->calls[i];

			if (c->result || (pass == 0 && c->conn != conn))
				continue;
			if (id ? (c->id && cJSON_Compare(c->id, id, 1)) : (!c->id && !c->cut))
				return c;
		}
	for (size_t i = lo; i < t->n_calls; i++)
		if (!t->calls[i].result && t->calls[i].conn == conn && t->calls[i].cut)
			return &t->calls[i];
	return NULL;
}

static void answer(traj *t, call *c, char *content)
{
	if (!content)
		return;
	if (t->spent + strlen(content) > t->budget) {
		free(content);
		content = strdup("[sandboxctl: omitted, past the trajectory's size budget]");
		t->omitted++;
		if (!content)
			return;
	}
	t->spent += strlen(content) + 32;
	c->result = content;
}

static void count_method(traj *t, const char *method)
{
	cJSON *n;

	if (cJSON_GetArraySize(t->methods) >= 64 && !cJSON_GetObjectItem(t->methods, method))
		method = "(other)";
	n = cJSON_GetObjectItemCaseSensitive(t->methods, method);
	if (n)
		cJSON_SetNumberValue(n, n->valuedouble + 1);
	else
		cJSON_AddNumberToObject(t->methods, method, 1);
}

static void control_complete(traj *t, const char *path, double ms)
{
	cJSON *s = cJSON_CreateObject();
	char ts[64];

	if (!s)
		return;
	cJSON_AddStringToObject(s, "source", "system");
	cJSON_AddStringToObject(s, "message", "The task was completed through the control API.");
	sbx_run__traj_iso(ms, ts);
	if (ts[0])
		cJSON_AddStringToObject(s, "timestamp", ts);
	cJSON_AddItemToObject(s, "extra", cJSON_CreateObject());
	sbx_json_add_string(cJSON_GetObjectItem(s, "extra"), "path",
			    strncmp(path, "/control", 8) == 0 ? "/control/complete"
							      : "/task/complete");
	sbx_run__traj_add_step(t, ms, s);
}

/*
 * The agent's name and version, as its client says: initialize's clientInfo
 * (MCP up to 2025-11-25), or any request's _meta (2026-07-28). The first wins.
 */
static void client_info(traj *t, const char *method, const cJSON *params)
{
	const cJSON *ci = strcmp(method, "initialize") == 0
				  ? cJSON_GetObjectItemCaseSensitive(params, "clientInfo")
				  : NULL;
	const char *n, *v;

	if (t->client_name)
		return;
	if (!ci)
		ci = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(params, "_meta"),
			"io.modelcontextprotocol/clientInfo");
	n = sbx_json_get_string(ci, "name", NULL);
	v = sbx_json_get_string(ci, "version", NULL);
	if (!n || !*n)
		return;
	t->client_name = sbx_run__traj_clip(t, n, strlen(n), 128);
	t->client_version = v && *v ? sbx_run__traj_clip(t, v, strlen(v), 64) : NULL;
}

static void rpc_message(traj *t, unsigned conn, bool to_server, const cJSON *m, double ms)
{
	const char *method = sbx_json_get_string(m, "method", NULL);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(m, "params");

	if (to_server && method) {
		client_info(t, method, params);
		if (strcmp(method, "tools/call") == 0 && id) {
			add_call(t, conn, id, sbx_json_get_string(params, "name", ""),
				 sbx_run__traj_args(
					 t, cJSON_GetObjectItemCaseSensitive(params, "arguments")),
				 ms);
			return;
		}
		count_method(t, method);
		return;
	}
	if (!to_server && id && !method) {
		call *c = find_pending(t, conn, id);
		const cJSON *result = cJSON_GetObjectItemCaseSensitive(m, "result");
		const cJSON *error = cJSON_GetObjectItemCaseSensitive(m, "error");

		if (c && (result || error))
			answer(t, c, result ? result_text(t, result) : error_text(t, error));
	}
}

/* The reference's REST shape: {"tool_name", "arguments"} → {"success", "result", "error"}. */
static void rest_message(traj *t, unsigned conn, bool to_server, const cJSON *m, double ms)
{
	if (to_server) {
		add_call(t, conn, NULL, sbx_json_get_string(m, "tool_name", ""),
			 sbx_run__traj_args(t, cJSON_GetObjectItemCaseSensitive(m, "arguments")),
			 ms);
		return;
	}
	{
		call *c = find_pending(t, conn, NULL);
		const cJSON *error = cJSON_GetObjectItemCaseSensitive(m, "error");
		_cleanup_free_ char *text = NULL;

		if (!c)
			return;
		if (cJSON_IsString(error) && !sbx_json_get_bool(m, "success", true)) {
			answer(t, c,
			       sbx_run__traj_clip(t, error->valuestring, strlen(error->valuestring),
						  t->content_max));
			return;
		}
		text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(m, "result"));
		answer(t, c,
		       sbx_run__traj_clip(t, text ? text : "null", text ? strlen(text) : 4,
					  t->content_max));
	}
}

static call *oldest_open(traj *t, unsigned conn)
{
	for (size_t i = t->n_calls > SEARCH_BACK ? t->n_calls - SEARCH_BACK : 0; i < t->n_calls;
	     i++)
		if (!t->calls[i].result && t->calls[i].conn == conn)
			return &t->calls[i];
	return NULL;
}

/*
 * A message the transcript could not keep whole (over its 1 MiB per message):
 * a request is a call whose name and arguments are lost (its head is kept); a
 * reply's head answers the oldest open call on that connection.
 */
static void too_big(traj *t, unsigned conn, bool to_server, const cJSON *o, double ms)
{
	const char *body = cJSON_GetObjectItemCaseSensitive(o, "body")->valuestring;
	_cleanup_free_ char *s = NULL;
	call *c = NULL;

	if (asprintf(&s,
		     "[sandboxctl: a %s of %.0f bytes, over the transcript's cap; its head:]\n%.*s",
		     to_server ? "request" : "reply", sbx_json_get_number(o, "length", 0),
		     (int)t->content_max, body) < 0)
		return;
	if (to_server) {
		cJSON *args = cJSON_CreateObject();

		if (args) {
			cJSON_AddBoolToObject(args, "sandboxctl_truncated", 1);
			cJSON_AddItemToObject(args, "json_head",
					      sbx_run__traj_string(t, s, t->content_max));
		}
		c = add_call(t, conn, NULL, "unknown", args, ms);
		if (c)
			c->cut = true;
		return;
	}
	c = oldest_open(t, conn);
	if (c)
		answer(t, c, sbx_run__traj_clip(t, s, strlen(s), t->content_max));
}

void sbx_run__traj_transcript_line(traj *t, cJSON *o)
{
	const char *dir = sbx_json_get_string(o, "dir", "");
	const char *path = sbx_json_get_string(o, "path", "");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
	unsigned conn = (unsigned)sbx_json_get_number(o, "conn", 0);
	bool to_server = strcmp(dir, "agent->server") == 0;
	double ms = sbx_run__traj_in_run(t, parse_iso(sbx_json_get_string(o, "ts", NULL)));
	const char *rest = strstr(path, "/tools/call");
	const cJSON *e;

	if (!to_server && strcmp(dir, "server->agent") != 0)
		return;
	if (to_server &&
	    (strcmp(path, "/control/complete") == 0 || strcmp(path, "/task/complete") == 0 ||
	     strcmp(path, "/v1/task/complete") == 0)) {
		control_complete(t, path, ms);
		return;
	}
	if (!to_server && !m && !cJSON_GetObjectItemCaseSensitive(o, "body") &&
	    sbx_json_get_number(o, "status", 0) == 200) {
		/* The relay records no body for a reply past what it buffers. */
		call *c = oldest_open(t, conn);

		if (c)
			answer(t, c, strdup("[sandboxctl: a reply too large for the transcript]"));
		return;
	}
	if (!m && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "body"))) {
		if (to_server ? strcmp(path, "/mcp") == 0 || (rest && rest[11] == '\0') : true)
			too_big(t, conn, to_server, o, ms);
		return;
	}
	if (rest && rest[11] == '\0') {
		if (cJSON_IsObject(m))
			rest_message(t, conn, to_server, m, ms);
		return;
	}
	if (cJSON_IsObject(m)) {
		rpc_message(t, conn, to_server, m, ms);
		return;
	}
	cJSON_ArrayForEach (e, m) /* a JSON-RPC batch */
		if (cJSON_IsObject(e))
			rpc_message(t, conn, to_server, e, ms);
}
