/* SPDX-License-Identifier: MIT */
/*
 * The JSON-RPC 2.0 / MCP message handler every transport shares. It never
 * blocks on I/O of its own; a tools/call runs the tool on the caller's thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resources.h"
#include "sbx-config.h"
#include "server.h"

#define LATEST_VERSION "2025-11-25"

static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

static const char *const log_levels[] = {"emergency", "alert",	"critical", "error",
					 "warning",   "notice", "info",	    "debug"};

struct inflight {
	struct inflight *next;
	const mcp_session *session;
	char *id;
	atomic_bool cancelled;
};

bool mcp_version_supported(const char *version)
{
	for (size_t i = 0; i < SBX_ELEMENTSOF(versions); i++)
		if (version && strcmp(version, versions[i]) == 0)
			return true;
	return false;
}

void mcp_session_init(mcp_session *s)
{
	memset(s, 0, sizeof(*s));
	atomic_store(&s->log_level, -1); /* no log notifications until logging/setLevel */
	atomic_store(&s->initialized, false);
}

bool mcp_is_request(const cJSON *msg)
{
	return cJSON_IsString(sbx_json_get(msg, "method")) && sbx_json_get(msg, "id");
}

static char *print_and_free(cJSON *o)
{
	char *s = o ? sbx_json_print(o) : NULL;

	cJSON_Delete(o);
	return s;
}

char *mcp_error_response_data(const cJSON *id, int code, const char *message, cJSON *data)
{
	cJSON *o = cJSON_CreateObject(), *e;

	if (!o) {
		cJSON_Delete(data);
		return NULL;
	}
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", id ? cJSON_Duplicate(id, false) : cJSON_CreateNull());
	e = cJSON_AddObjectToObject(o, "error");
	if (e) {
		cJSON_AddNumberToObject(e, "code", code);
		cJSON_AddStringToObject(e, "message", message);
		if (data)
			cJSON_AddItemToObject(e, "data", TAKE_PTR(data));
	}
	cJSON_Delete(data);
	return print_and_free(o);
}

char *mcp_error_response(const cJSON *id, int code, const char *message)
{
	return mcp_error_response_data(id, code, message, NULL);
}

static char *result_response(const cJSON *id, cJSON *result)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !result) {
		cJSON_Delete(o);
		cJSON_Delete(result);
		return NULL;
	}
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, false));
	cJSON_AddItemToObject(o, "result", result);
	return print_and_free(o);
}

static void send_notification(const rpc_sink *sink, const char *method, cJSON *params)
{
	cJSON *o;
	char *text;

	if (!sink || !sink->send) {
		cJSON_Delete(params);
		return;
	}
	o = cJSON_CreateObject();
	if (!o) {
		cJSON_Delete(params);
		return;
	}
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddStringToObject(o, "method", method);
	cJSON_AddItemToObject(o, "params", params);
	text = print_and_free(o);
	if (text)
		sink->send(sink->payload, text);
	free(text);
}

static void log_to_client(mcp_session *s, const rpc_sink *sink, int level, const char *text)
{
	cJSON *p;

	if (level > atomic_load(&s->log_level))
		return;
	p = cJSON_CreateObject();
	if (!p)
		return;
	cJSON_AddStringToObject(p, "level", log_levels[level]);
	cJSON_AddStringToObject(p, "logger", SERVER_NAME);
	cJSON_AddStringToObject(p, "data", text);
	send_notification(sink, "notifications/message", p);
}

/* ---- initialize, server/discover, ping, logging ---- */

static void add_server_info(cJSON *parent, const char *key)
{
	cJSON *info = cJSON_AddObjectToObject(parent, key);

	cJSON_AddStringToObject(info, "name", SERVER_NAME);
	cJSON_AddStringToObject(info, "title", "sandboxctl sandbox MCP server");
	cJSON_AddStringToObject(info, "version", SBX_VERSION);
}

static void add_capabilities(cJSON *parent, bool modern)
{
	cJSON *caps = cJSON_AddObjectToObject(parent, "capabilities");
	cJSON *tools = cJSON_AddObjectToObject(caps, "tools");

	cJSON_AddBoolToObject(tools, "listChanged", false);
	cJSON_AddObjectToObject(caps, "resources");
	/* 2026-07-28 asks for log messages per request (_meta logLevel), no capability. */
	if (!modern)
		cJSON_AddObjectToObject(caps, "logging");
}

static void add_instructions(cJSON *r)
{
	cJSON_AddStringToObject(
		r, "instructions",
		"Spreadsheet task sandbox. Files live in the workspace; pass paths relative to it "
		"(list_files shows them). Read and write cells with "
		"read_cell/write_cell/read_range/"
		"write_range, run code with execute_python, and call complete_task when done.");
}

static cJSON *do_initialize(server *srv, mcp_session *s, const cJSON *params)
{
	const char *asked = sbx_json_get_string(params, "protocolVersion", NULL);
	const char *version = mcp_version_supported(asked) ? asked : LATEST_VERSION;
	cJSON *r = cJSON_CreateObject();

	(void)srv;
	if (!r)
		return NULL;
	snprintf(s->protocol_version, sizeof(s->protocol_version), "%s", version);
	cJSON_AddStringToObject(r, "protocolVersion", version);
	add_capabilities(r, false);
	add_server_info(r, "serverInfo");
	add_instructions(r);
	return r;
}

/* 2026-07-28 only; the serverInfo stamp and cache hints are added with every result's. */
static cJSON *do_discover(void)
{
	cJSON *r = cJSON_CreateObject(), *supported;

	if (!r)
		return NULL;
	supported = cJSON_AddArrayToObject(r, "supportedVersions");
	cJSON_AddItemToArray(supported, cJSON_CreateString(MCP_MODERN_VERSION));
	add_capabilities(r, true);
	add_instructions(r);
	return r;
}

/*
 * The fields 2026-07-28 adds to every result: resultType, the serverInfo
 * stamp in _meta and, on list and read results, how long a client may cache
 * them. The tool set is fixed for the server's life (listChanged false) but
 * depends on the sandbox's task (SANDBOX_TOOLSET, a display), so it is
 * private; workspace files change under any cached copy, so resources are
 * stale at once.
 */
static void add_modern_fields(cJSON *r, const char *method)
{
	static const struct {
		const char *method;
		int ttl_ms;
	} cacheable[] = {
		{"server/discover", 300000},
		{"tools/list", 300000},
		{"resources/templates/list", 300000},
		{"resources/list", 0},
		{"resources/read", 0},
	};
	cJSON *meta;

	cJSON_AddStringToObject(r, "resultType", "complete");
	for (size_t i = 0; i < SBX_ELEMENTSOF(cacheable); i++)
		if (strcmp(method, cacheable[i].method) == 0) {
			cJSON_AddNumberToObject(r, "ttlMs", cacheable[i].ttl_ms);
			cJSON_AddStringToObject(r, "cacheScope", "private");
		}
	meta = cJSON_GetObjectItemCaseSensitive(r, "_meta");
	if (!cJSON_IsObject(meta))
		meta = cJSON_AddObjectToObject(r, "_meta");
	add_server_info(meta, "io.modelcontextprotocol/serverInfo");
}

/* What 2026-07-28 removed; they stay in the older revisions. */
static bool removed_in_modern(const char *method)
{
	static const char *const removed[] = {"initialize", "ping", "logging/setLevel",
					      "resources/subscribe", "resources/unsubscribe"};

	for (size_t i = 0; i < SBX_ELEMENTSOF(removed); i++)
		if (strcmp(method, removed[i]) == 0)
			return true;
	return false;
}

int mcp_log_level(const char *name)
{
	for (size_t i = 0; name && i < SBX_ELEMENTSOF(log_levels); i++)
		if (strcmp(name, log_levels[i]) == 0)
			return (int)i;
	return -EINVAL;
}

static int set_level(mcp_session *s, const cJSON *params)
{
	int level = mcp_log_level(sbx_json_get_string(params, "level", NULL));

	if (level < 0)
		return level;
	atomic_store(&s->log_level, level);
	return 0;
}

/* ---- tools ---- */

static cJSON *do_tools_list(server *srv)
{
	cJSON *r = cJSON_CreateObject(), *arr;

	if (!r)
		return NULL;
	arr = cJSON_AddArrayToObject(r, "tools");
	for (size_t i = 0; i < srv->n_tools; i++)
		if (server_tool_listed(srv, i))
			cJSON_AddItemToArray(arr, server_tool_json(srv, i));
	return r;
}

struct progress_ctx {
	const rpc_sink *sink;
	const cJSON *token;
};

static void on_progress(void *payload, double progress, double total, const char *message)
{
	struct progress_ctx *p = payload;
	cJSON *params = cJSON_CreateObject();

	if (!params)
		return;
	cJSON_AddItemToObject(params, "progressToken", cJSON_Duplicate(p->token, false));
	cJSON_AddNumberToObject(params, "progress", progress);
	if (total > 0)
		cJSON_AddNumberToObject(params, "total", total);
	if (message)
		cJSON_AddStringToObject(params, "message", message);
	send_notification(p->sink, "notifications/progress", params);
}

static struct inflight *inflight_add(server *srv, const mcp_session *s, const cJSON *id)
{
	struct inflight *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->session = s->owner ? s->owner : s;
	f->id = sbx_json_print(id);
	atomic_store(&f->cancelled, false);
	pthread_mutex_lock(&srv->inflight_lock);
	f->next = srv->inflight;
	srv->inflight = f;
	pthread_mutex_unlock(&srv->inflight_lock);
	return f;
}

static void inflight_remove(server *srv, struct inflight *f)
{
	struct inflight **p;

	if (!f)
		return;
	pthread_mutex_lock(&srv->inflight_lock);
	for (p = &srv->inflight; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	pthread_mutex_unlock(&srv->inflight_lock);
	free(f->id);
	free(f);
}

static void cancel_request(server *srv, const mcp_session *s, const cJSON *params)
{
	_cleanup_free_ char *id = sbx_json_print(sbx_json_get(params, "requestId"));

	if (!id)
		return;
	pthread_mutex_lock(&srv->inflight_lock);
	for (struct inflight *f = srv->inflight; f; f = f->next)
		if (f->session == s && f->id && strcmp(f->id, id) == 0)
			atomic_store(&f->cancelled, true);
	pthread_mutex_unlock(&srv->inflight_lock);
}

void server_cancel_all(server *srv)
{
	pthread_mutex_lock(&srv->inflight_lock);
	for (struct inflight *f = srv->inflight; f; f = f->next)
		atomic_store(&f->cancelled, true);
	pthread_mutex_unlock(&srv->inflight_lock);
}

/* The CallToolResult for a finished call (consumes nothing; caller clears r). */
static cJSON *call_result_json(tool_result *r)
{
	cJSON *o = cJSON_CreateObject(), *content, *text;
	_cleanup_free_ char *printed = NULL;
	bool failed = r->error_kind != TOOL_OK;

	if (!o)
		return NULL;
	content = cJSON_AddArrayToObject(o, "content");
	text = cJSON_CreateObject();
	cJSON_AddItemToArray(content, text);
	cJSON_AddStringToObject(text, "type", "text");
	if (failed) {
		cJSON_AddStringToObject(text, "text", r->error);
	} else if (r->image_png_b64) {
		/* The image travels as image content; as text it would cost a model its context. */
		cJSON *brief = cJSON_Duplicate(r->structured, true), *it;

		cJSON_ArrayForEach (it, brief)
			if (cJSON_IsString(it) && strlen(it->valuestring) > 4096) {
				char note[96];
				snprintf(note, sizeof(note), "<%zu bytes, sent as image content>",
					 strlen(it->valuestring));
				cJSON_SetValuestring(it, note);
			}
		printed = sbx_json_print(brief);
		cJSON_Delete(brief);
		cJSON_AddStringToObject(text, "text", printed ? printed : "{}");
	} else {
		printed = sbx_json_print(r->structured);
		cJSON_AddStringToObject(text, "text", printed ? printed : "{}");
	}
	if (r->image_png_b64) {
		cJSON *img = cJSON_CreateObject();
		cJSON_AddItemToArray(content, img);
		cJSON_AddStringToObject(img, "type", "image");
		cJSON_AddStringToObject(img, "data", r->image_png_b64);
		cJSON_AddStringToObject(img, "mimeType", "image/png");
	}
	if (r->structured) {
		cJSON_AddItemToObject(o, "structuredContent", r->structured);
		r->structured = NULL;
	}
	cJSON_AddBoolToObject(o, "isError", failed);
	return o;
}

static char *do_tools_call(server *srv, mcp_session *s, const cJSON *id, const cJSON *params,
			   const rpc_sink *sink)
{
	const char *name = sbx_json_get_string(params, "name", NULL);
	const cJSON *args = sbx_json_get(params, "arguments");
	const cJSON *token = sbx_json_get(sbx_json_get(params, "_meta"), "progressToken");
	struct progress_ctx pc = {sink, token};
	tool_result r = {0};
	tool_context ctx = srv->base;
	struct inflight *f;
	cJSON *result;
	char *resp;
	int ret;

	if (!name)
		return mcp_error_response(id, -32602, "tools/call: missing tool name");
	if (args && cJSON_IsNull(args))
		args = NULL;
	if (!server_find_tool(srv, name, NULL)) {
		char msg[160];
		snprintf(msg, sizeof(msg), "Unknown tool: %.100s", name);
		return mcp_error_response(id, -32602, msg);
	}
	f = inflight_add(srv, s, id);
	if (f)
		ctx.cancelled = &f->cancelled;
	if (token && (cJSON_IsString(token) || cJSON_IsNumber(token))) {
		ctx.progress = on_progress;
		ctx.progress_payload = &pc;
	}
	ret = server_call_tool(srv, name, args, &ctx, &r);
	inflight_remove(srv, f);
	if (ret < 0) {
		tool_result_clear(&r);
		return mcp_error_response(id, -32603, "internal error");
	}
	if (r.error_kind != TOOL_OK) {
		char line[600];
		snprintf(line, sizeof(line), "tool '%s' failed: %.500s", name, r.error);
		log_to_client(s, sink, 3, line);
	}
	result = call_result_json(&r);
	if (result && s->modern)
		add_modern_fields(result, "tools/call");
	resp = result_response(id, result);
	tool_result_clear(&r);
	return resp;
}

/* ---- dispatch ---- */

static bool valid_id(const cJSON *id)
{
	return cJSON_IsString(id) || cJSON_IsNumber(id);
}

int mcp_handle(server *srv, mcp_session *s, const cJSON *msg, const rpc_sink *sink, char **out)
{
	const cJSON *id = sbx_json_get(msg, "id");
	const cJSON *method_item = sbx_json_get(msg, "method");
	const cJSON *params = sbx_json_get(msg, "params");
	const char *method;
	cJSON *result = NULL;
	char buf[200];

	*out = NULL;
	if (!cJSON_IsObject(msg)) {
		*out = mcp_error_response(NULL, -32600,
					  cJSON_IsArray(msg)
						  ? "Invalid Request: batches are not supported"
						  : "Invalid Request: not an object");
		return *out ? 0 : -ENOMEM;
	}
	if (!method_item) {
		/* A response to something we never send, or junk without a method. */
		if (sbx_json_get(msg, "result") || sbx_json_get(msg, "error"))
			return 0;
		*out = mcp_error_response(valid_id(id) ? id : NULL, -32600,
					  "Invalid Request: missing method");
		return *out ? 0 : -ENOMEM;
	}
	if (!cJSON_IsString(method_item) ||
	    strcmp(sbx_json_get_string(msg, "jsonrpc", ""), "2.0") != 0 || (id && !valid_id(id)) ||
	    (params && !cJSON_IsObject(params))) {
		if (!id)
			return 0; /* a malformed notification gets no answer */
		*out = mcp_error_response(
			valid_id(id) ? id : NULL, -32600,
			!valid_id(id) ? "Invalid Request: id must be a string or number"
			: params && !cJSON_IsObject(params)
				? "Invalid Request: params must be an object"
				: "Invalid Request: expected jsonrpc 2.0 and a method");
		return *out ? 0 : -ENOMEM;
	}
	method = method_item->valuestring;

	if (!id) {
		if (strcmp(method, "notifications/initialized") == 0)
			atomic_store(&s->initialized, true);
		else if (strcmp(method, "notifications/cancelled") == 0)
			cancel_request(srv, s, params);
		return 0; /* every other notification is ignored */
	}

	if (s->modern && removed_in_modern(method)) {
		snprintf(buf, sizeof(buf), "Method not found: %.100s (removed in %s)", method,
			 MCP_MODERN_VERSION);
		*out = mcp_error_response(id, -32601, buf);
		return *out ? 0 : -ENOMEM;
	}
	if (strcmp(method, "initialize") == 0)
		result = do_initialize(srv, s, params);
	else if (s->modern && strcmp(method, "server/discover") == 0)
		result = do_discover();
	else if (strcmp(method, "ping") == 0)
		result = cJSON_CreateObject();
	else if (strcmp(method, "tools/list") == 0)
		result = do_tools_list(srv);
	else if (strcmp(method, "tools/call") == 0) {
		*out = do_tools_call(srv, s, id, params, sink);
		return *out ? 0 : -ENOMEM;
	} else if (strcmp(method, "resources/list") == 0)
		result = resources_list(&srv->base);
	else if (strcmp(method, "resources/templates/list") == 0) {
		result = cJSON_CreateObject();
		cJSON_AddArrayToObject(result, "resourceTemplates");
	} else if (strcmp(method, "resources/read") == 0) {
		sbx_error err = SBX_ERROR_INIT;
		const char *uri = sbx_json_get_string(params, "uri", NULL);

		if (!uri)
			*out = mcp_error_response(id, -32602, "resources/read: missing uri");
		else if (resources_read(&srv->base, uri, &result, &err) < 0 &&
			 err.code != -ENOMEM && s->modern) {
			/* SEP-2164: invalid params naming the uri, never empty contents. */
			cJSON *data = cJSON_CreateObject();

			cJSON_AddStringToObject(data, "uri", uri);
			*out = mcp_error_response_data(id, -32602, sbx_error_message(&err), data);
		} else if (!result)
			*out = mcp_error_response(id, err.code == -ENOMEM ? -32603 : -32002,
						  sbx_error_message(&err));
		if (*out)
			return 0;
	} else if (strcmp(method, "logging/setLevel") == 0) {
		if (set_level(s, params) < 0) {
			*out = mcp_error_response(id, -32602, "logging/setLevel: unknown level");
			return *out ? 0 : -ENOMEM;
		}
		result = cJSON_CreateObject();
	} else {
		snprintf(buf, sizeof(buf), "Method not found: %.100s", method);
		*out = mcp_error_response(id, -32601, buf);
		return *out ? 0 : -ENOMEM;
	}
	if (!result) {
		*out = mcp_error_response(id, -32603, "internal error: out of memory");
		return *out ? 0 : -ENOMEM;
	}
	if (s->modern)
		add_modern_fields(result, method);
	*out = result_response(id, result);
	return *out ? 0 : -ENOMEM;
}

int mcp_handle_text(server *srv, mcp_session *s, const char *text, size_t len, const rpc_sink *sink,
		    char **out)
{
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_json_ cJSON *msg = NULL;
	char buf[SBX_ERROR_MAX + 32];

	*out = NULL;
	if (sbx_json_parse(text, len, &msg, &err) < 0) {
		snprintf(buf, sizeof(buf), "Parse error: %s", sbx_error_message(&err));
		*out = mcp_error_response(NULL, -32700, buf);
		return *out ? 0 : -ENOMEM;
	}
	return mcp_handle(srv, s, msg, sink, out);
}
