/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "view-internal.h"

#define CALL_IDS_MAX 4096 /* MCP request ids of tool calls remembered, to tell their replies */

typedef struct conv {
	double call_ids[CALL_IDS_MAX]; /* per connection: ids restart on each */
	double call_conns[CALL_IDS_MAX];
	size_t n_ids;
	unsigned calls, errors, entries;
} conv;

/* Text of a JSON value, pretty, capped: strings as they are, the rest printed. */
static int put_value(sbx_buf *out, const cJSON *v)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	if (!v)
		return sbx_buf_puts(out, "<pre></pre>");
	text = cJSON_IsString(v) ? strdup(v->valuestring) : cJSON_Print(v);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	r = sbx_buf_puts(out, "<pre>");
	r = r < 0 ? r
		  : sbx_html_escape_n(out, text, len > SBX_VIEW_TEXT_MAX ? SBX_VIEW_TEXT_MAX : len);
	if (r >= 0 && len > SBX_VIEW_TEXT_MAX)
		r = sbx_buf_printf(out, "<span class=\"dim\">… %zu bytes more (raw file)</span>",
				   len - SBX_VIEW_TEXT_MAX);
	return r < 0 ? r : sbx_buf_puts(out, "</pre>");
}

/* The MCP revision the relay recorded for the message ("MCP 2026-07-28"), if any. */
static int version_tag(sbx_buf *out, const cJSON *line)
{
	const char *v = sbx_json_get_string(line, "mcp_version", NULL);
	int r;

	if (!v)
		return 0;
	r = sbx_buf_puts(out, " <span class=\"dim\">MCP ");
	r = r < 0 ? r : sbx_html_escape(out, v);
	return r < 0 ? r : sbx_buf_puts(out, "</span>");
}

static int head(sbx_buf *out, const cJSON *line, const char *cls, const char *who, const char *name,
		double t_ms)
{
	int r = sbx_buf_printf(out, "<div class=\"turn %s\"><div class=\"who\">%s <b>", cls, who);

	r = r < 0 ? r : sbx_html_escape(out, name);
	r = r < 0 ? r : sbx_buf_printf(out, "</b> <span class=\"dim\">%.0f ms</span>", t_ms);
	r = r < 0 ? r : version_tag(out, line);
	return r < 0 ? r : sbx_buf_puts(out, "</div>");
}

static bool is_tool_path(const char *path)
{
	return path && (strcmp(path, "/tools/call") == 0 || strcmp(path, "/v1/tools/call") == 0);
}

static bool remember_call(conv *c, double conn, const cJSON *id)
{
	if (!cJSON_IsNumber(id) || c->n_ids >= CALL_IDS_MAX)
		return false;
	c->call_conns[c->n_ids] = conn;
	c->call_ids[c->n_ids++] = id->valuedouble;
	return true;
}

static bool was_call(const conv *c, double conn, const cJSON *id)
{
	for (size_t i = c->n_ids; cJSON_IsNumber(id) && i-- > 0;)
		if (c->call_ids[i] == id->valuedouble && c->call_conns[i] == conn)
			return true;
	return false;
}

static int protocol(sbx_buf *out, const cJSON *line, const char *what, const cJSON *msg,
		    double t_ms)
{
	int r = sbx_buf_puts(out, "<details class=\"proto\"><summary>");

	r = r < 0 ? r : sbx_html_escape(out, what);
	r = r < 0 ? r : sbx_buf_printf(out, " <span class=\"dim\">%.0f ms</span>", t_ms);
	r = r < 0 ? r : version_tag(out, line);
	r = r < 0 ? r : sbx_buf_puts(out, "</summary>");
	r = r < 0 ? r : put_value(out, msg);
	return r < 0 ? r : sbx_buf_puts(out, "</details>");
}

static int request(conv *c, sbx_buf *out, const cJSON *line, const cJSON *msg, double t_ms)
{
	const char *path = sbx_json_get_string(line, "path", "");
	const char *method = sbx_json_get_string(msg, "method", NULL);
	const cJSON *params = sbx_json_get(msg, "params");
	int r;

	if (is_tool_path(path)) {
		c->calls++;
		r = head(out, line, "call", "agent calls",
			 sbx_json_get_string(msg, "tool_name", "?"), t_ms);
		r = r < 0 ? r : put_value(out, sbx_json_get(msg, "arguments"));
		return r < 0 ? r : sbx_buf_puts(out, "</div>");
	}
	if (method && strcmp(method, "tools/call") == 0) {
		c->calls++;
		remember_call(c, sbx_json_get_number(line, "conn", 0), sbx_json_get(msg, "id"));
		r = head(out, line, "call", "agent calls", sbx_json_get_string(params, "name", "?"),
			 t_ms);
		r = r < 0 ? r : put_value(out, sbx_json_get(params, "arguments"));
		return r < 0 ? r : sbx_buf_puts(out, "</div>");
	}
	if (strstr(path, "/task/complete") || strcmp(path, "/control/complete") == 0) {
		r = head(out, line, "call", "agent", "complete_task", t_ms);
		return r < 0 ? r : sbx_buf_puts(out, "</div>");
	}
	return protocol(out, line, method ? method : path, msg, t_ms);
}

/* A content array holding one text item: the text, which reads better than its wrapper. */
static const cJSON *only_text(const cJSON *content)
{
	const cJSON *first = cJSON_GetArrayItem(content, 0);

	if (cJSON_GetArraySize(content) != 1 ||
	    strcmp(sbx_json_get_string(first, "type", ""), "text") != 0)
		return NULL;
	return sbx_json_get(first, "text");
}

static int reply(conv *c, sbx_buf *out, const cJSON *line, const cJSON *msg, double t_ms)
{
	const char *path = sbx_json_get_string(line, "path", "");
	const cJSON *result = sbx_json_get(msg, "result");
	const cJSON *shown;
	bool error;
	int r;

	if (is_tool_path(path)) {
		error = !sbx_json_get_bool(msg, "success", true);
		shown = error ? sbx_json_get(msg, "error") : sbx_json_get(msg, "result");
	} else if (was_call(c, sbx_json_get_number(line, "conn", 0), sbx_json_get(msg, "id"))) {
		error = sbx_json_get(msg, "error") || sbx_json_get_bool(result, "isError", false);
		shown = sbx_json_get(msg, "error");
		if (!shown)
			shown = sbx_json_get(result, "structuredContent");
		if (!shown)
			shown = only_text(sbx_json_get(result, "content"));
		if (!shown)
			shown = sbx_json_get(result, "content");
	} else {
		int status = (int)sbx_view__clamp(sbx_json_get_number(line, "status", 0), 0, 999);
		char what[48];

		snprintf(what, sizeof(what), "reply %d", status);
		if (!msg)
			return 0; /* 202 to a notification: nothing to show */
		return protocol(out, line, what, msg, t_ms);
	}
	c->errors += error;
	r = head(out, line, error ? "result error" : "result", error ? "error" : "result", "",
		 t_ms);
	r = r < 0 ? r : put_value(out, shown);
	return r < 0 ? r : sbx_buf_puts(out, "</div>");
}

int sbx_view__transcript(const sbx_view_ctx *ctx, int rootfd, const char *rel, sbx_buf *out)
{
	_cleanup_free_ char *path = sbx_view__join(rel, "transcript.jsonl"), *text = NULL;
	_cleanup_free_ conv *c = calloc(1, sizeof(*c));
	sbx_error err = SBX_ERROR_INIT;
	size_t len = 0, lines = 0;
	int r;

	if (!path || !c)
		return -ENOMEM;
	r = sbx_view_read(rootfd, path, SBX_VIEW_JSONL_MAX, &text, &len, &err);
	if (r < 0) {
		r = sbx_buf_puts(out, "<p class=\"dim\">no transcript: ");
		r = r < 0 ? r : sbx_html_escape(out, sbx_error_message(&err));
		return r < 0 ? r : sbx_buf_puts(out, "</p>");
	}
	r = sbx_buf_puts(out, "<div class=\"conv\" id=\"transcript\">");
	for (char *p = text, *nl; r >= 0 && p < text + len; p = nl + 1) {
		_cleanup_json_ cJSON *line = NULL;
		const cJSON *msg;
		const char *dir;
		double t_ms;

		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl)
			break; /* still being written */
		lines++;
		if (c->entries >= SBX_VIEW_TURNS_MAX)
			continue;
		if (sbx_json_parse(p, (size_t)(nl - p), &line, NULL) < 0)
			continue;
		msg = sbx_json_get(line, "message");
		dir = sbx_json_get_string(line, "dir", "");
		t_ms = sbx_json_get_number(line, "t_ms", 0);
		c->entries++;
		if (strcmp(dir, "agent->server") == 0)
			r = request(c, out, line, msg, t_ms);
		else
			r = reply(c, out, line, msg, t_ms);
	}
	r = r < 0 ? r : sbx_buf_puts(out, "</div>");
	r = r < 0 ? r
		  : sbx_buf_printf(
			    out,
			    "<p class=\"dim\" id=\"tstats\" data-lines=\"%zu\">%zu messages, %u "
			    "tool calls, <span class=\"%s\">%u errors</span>%s</p>",
			    lines, lines, c->calls, c->errors ? "errtext" : "", c->errors,
			    c->entries >= SBX_VIEW_TURNS_MAX ? "; only the first shown" : "");
	(void)ctx;
	return r;
}

/* The assistant's text of one reply and the tools it calls: Chat Completions or Messages. */
static int reply_text(const cJSON *body, sbx_buf *out)
{
	const cJSON *choice = cJSON_GetArrayItem(sbx_json_get(body, "choices"), 0), *part;
	const cJSON *msg = sbx_json_get(choice, "message");
	int r = 0;

	if (choice) {
		r = sbx_buf_puts(out, sbx_json_get_string(msg, "content", ""));
		cJSON_ArrayForEach (part, sbx_json_get(msg, "tool_calls")) {
			r = r < 0 ? r : sbx_buf_puts(out, " → ");
			r = r < 0 ? r
				  : sbx_buf_puts(out,
						 sbx_json_get_string(sbx_json_get(part, "function"),
								     "name", "?"));
		}
		return r;
	}
	cJSON_ArrayForEach (part, sbx_json_get(body, "content")) {
		const char *type = sbx_json_get_string(part, "type", "");

		if (strcmp(type, "text") == 0)
			r = r < 0 ? r : sbx_buf_puts(out, sbx_json_get_string(part, "text", ""));
		else if (strcmp(type, "tool_use") == 0) {
			r = r < 0 ? r : sbx_buf_puts(out, " → ");
			r = r < 0 ? r : sbx_buf_puts(out, sbx_json_get_string(part, "name", "?"));
		}
	}
	return r;
}

int sbx_view__model_turns(int rootfd, const char *rel, sbx_buf *out)
{
	_cleanup_free_ char *path = sbx_view__join(rel, "model.jsonl"), *text = NULL;
	size_t len = 0, rows = 0;
	int r;

	if (!path)
		return -ENOMEM;
	if (sbx_view_read(rootfd, path, SBX_VIEW_JSONL_MAX, &text, &len, NULL) < 0)
		return 0; /* not an llm run */
	r = sbx_buf_puts(out,
			 "<h2>Model turns</h2><table class=\"list\" id=\"turns\"><thead><tr>"
			 "<th>turn</th><th>status</th><th>time</th><th>usage</th><th>reply</th>"
			 "</tr></thead><tbody>");
	for (char *p = text, *nl; r >= 0 && p < text + len && rows < SBX_VIEW_TURNS_MAX;
	     p = nl + 1) {
		_cleanup_json_ cJSON *line = NULL;
		_cleanup_free_ char *usage = NULL;
		_cleanup_(sbx_buf_free) sbx_buf said = SBX_BUF_INIT(SBX_VIEW_TEXT_MAX);
		const cJSON *body;
		size_t n;

		nl = memchr(p, '\n', (size_t)(text + len - p));
		if (!nl)
			break;
		if (sbx_json_parse(p, (size_t)(nl - p), &line, NULL) < 0 ||
		    !(body = sbx_json_get(line, "reply")))
			continue;
		rows++;
		usage = sbx_json_get(body, "usage") ? sbx_json_print(sbx_json_get(body, "usage"))
						    : NULL;
		if (reply_text(body, &said) < 0)
			sbx_buf_reset(&said); /* over the cap: freed, shown empty */
		n = said.len;
		r = sbx_buf_printf(out,
				   "<tr><td class=\"num\">%.0f</td><td class=\"num%s\">%.0f</td>"
				   "<td class=\"num\">",
				   sbx_json_get_number(line, "turn", 0),
				   sbx_json_get_number(line, "status", 200) >= 400 ? " errtext"
										   : "",
				   sbx_json_get_number(line, "status", 0));
		r = r < 0 ? r : sbx_view__put_ms(out, sbx_json_get_number(line, "ms", NAN));
		r = r < 0 ? r : sbx_buf_puts(out, "</td><td><code>");
		r = r < 0 ? r : sbx_html_escape(out, usage ? usage : "");
		r = r < 0 ? r : sbx_buf_puts(out, "</code></td><td>");
		r = r < 0 ? r : sbx_html_escape_n(out, sbx_buf_str(&said), n > 500 ? 500 : n);
		r = r < 0 ? r : sbx_buf_puts(out, n > 500 ? "…</td></tr>" : "</td></tr>");
	}
	return r < 0 ? r : sbx_buf_puts(out, "</tbody></table>");
}
