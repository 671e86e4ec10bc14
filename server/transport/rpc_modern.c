/* SPDX-License-Identifier: MIT */
/*
 * MCP 2026-07-28, the stateless revision: no initialize, no session; every
 * request carries its protocol version and the client's capabilities in
 * params._meta and, over HTTP, repeats its version, method and name in
 * headers. This file checks that envelope (the order of the checks is the
 * official SDK's, mcp/shared/inbound.py, so a client that disagrees with
 * itself is told so before it is told its version is unsupported) and picks a
 * stream connection's era; rpc.c serves the request itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/base64.h"
#include "server.h"

#define META_VERSION	  "io.modelcontextprotocol/protocolVersion"
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_LOG_LEVEL	  "io.modelcontextprotocol/logLevel"

/* JSON-RPC error codes of the revision. */
#define HEADER_MISMATCH	    -32020
#define UNSUPPORTED_VERSION -32022

static const cJSON *envelope(const cJSON *msg)
{
	const cJSON *meta = sbx_json_get(sbx_json_get(msg, "params"), "_meta");

	return cJSON_IsObject(meta) ? meta : NULL;
}

bool mcp_has_envelope(const cJSON *msg)
{
	return sbx_json_get(envelope(msg), META_VERSION) != NULL;
}

static int reject(const cJSON *msg, int code, const char *message, cJSON *data, char **out)
{
	*out = mcp_error_response_data(sbx_json_get(msg, "id"), code, message, data);
	return code;
}

static int reject_version(const cJSON *msg, const char *requested, char **out)
{
	cJSON *data = cJSON_CreateObject(), *supported;
	char text[160];

	supported = cJSON_AddArrayToObject(data, "supported");
	cJSON_AddItemToArray(supported, cJSON_CreateString(MCP_MODERN_VERSION));
	cJSON_AddStringToObject(data, "requested", requested);
	snprintf(text, sizeof(text), "Unsupported protocol version: %.40s (this server: %s)",
		 requested, MCP_MODERN_VERSION);
	return reject(msg, UNSUPPORTED_VERSION, text, data, out);
}

/* Mcp-Name: verbatim, or "=?base64?…?=" for a value that is not plain visible ASCII. */
static bool header_names(const char *header, const char *value)
{
	size_t len = header ? strlen(header) : 0;
	_cleanup_free_ char *decoded = NULL;
	ssize_t n;

	if (!header)
		return false;
	if (len < 12 || strncmp(header, "=?base64?", 9) != 0 || strcmp(header + len - 2, "?=") != 0)
		return strcmp(header, value) == 0;
	decoded = strndup(header + 9, len - 11);
	if (!decoded)
		return false;
	n = sbx_base64_decode(decoded);
	return n >= 0 && (size_t)n == strlen(value) && memcmp(decoded, value, (size_t)n) == 0;
}

static int check_headers(const cJSON *msg, const mcp_route_headers *h, const cJSON *version,
			 char **out)
{
	const char *method = sbx_json_get_string(msg, "method", "");
	const cJSON *params = sbx_json_get(msg, "params");
	const char *name_key = strcmp(method, "tools/call") == 0       ? "name"
			       : strcmp(method, "prompts/get") == 0    ? "name"
			       : strcmp(method, "resources/read") == 0 ? "uri"
								       : NULL;
	const cJSON *name = name_key ? sbx_json_get(params, name_key) : NULL;
	char text[160];

	if (h->duplicated) {
		snprintf(text, sizeof(text), "Header mismatch: %.40s appears more than once",
			 h->duplicated);
		return reject(msg, HEADER_MISMATCH, text, NULL, out);
	}
	if (!h->version || !cJSON_IsString(version) ||
	    strcmp(h->version, version->valuestring) != 0)
		return reject(msg, HEADER_MISMATCH,
			      "Header mismatch: MCP-Protocol-Version does not match "
			      "params._meta's protocol version",
			      NULL, out);
	if (!h->method || strcmp(h->method, method) != 0)
		return reject(msg, HEADER_MISMATCH,
			      "Header mismatch: Mcp-Method does not match the request's method",
			      NULL, out);
	if (name && cJSON_IsString(name) && !header_names(h->name, name->valuestring)) {
		snprintf(text, sizeof(text),
			 "Header mismatch: Mcp-Name does not match the request's params.%s",
			 name_key);
		return reject(msg, HEADER_MISMATCH, text, NULL, out);
	}
	return 0;
}

int mcp_modern_accept(const cJSON *msg, const mcp_route_headers *h, mcp_session *s, char **out)
{
	const cJSON *meta = envelope(msg), *version;
	int r, level;

	*out = NULL;
	if (!meta)
		return reject(msg, -32602,
			      "Invalid params: params._meta must be an object carrying "
			      "'" META_VERSION "' and '" META_CAPABILITIES "'",
			      NULL, out);
	version = sbx_json_get(meta, META_VERSION);
	if (!version || !sbx_json_get(meta, META_CAPABILITIES))
		return reject(
			msg, -32602,
			!version ? "Invalid params: params._meta is missing '" META_VERSION "'"
				 : "Invalid params: params._meta is missing '" META_CAPABILITIES
				   "'",
			NULL, out);
	if (h && (r = check_headers(msg, h, version, out)) != 0)
		return r;
	if (!cJSON_IsString(version))
		return reject(msg, -32602,
			      "Invalid params: params._meta's protocol version must be a string",
			      NULL, out);
	if (strcmp(version->valuestring, MCP_MODERN_VERSION) != 0)
		return reject_version(msg, version->valuestring, out);
	if (!cJSON_IsObject(sbx_json_get(meta, META_CAPABILITIES)))
		return reject(
			msg, -32602,
			"Invalid params: params._meta's client capabilities must be an object",
			NULL, out);
	s->modern = true;
	snprintf(s->protocol_version, sizeof(s->protocol_version), "%s", MCP_MODERN_VERSION);
	/* Log messages only for a request that opts in, at or above its level. */
	level = mcp_log_level(sbx_json_get_string(meta, META_LOG_LEVEL, NULL));
	if (level >= 0)
		atomic_store(&s->log_level, level);
	return 0;
}

/*
 * The code of an error response as rpc.c prints it: {"jsonrpc","id","error":
 * {"code":…}} or {"jsonrpc","id","result":…}. A quote inside a string is
 * escaped, so the first unescaped "result" or "error" key is the top level's.
 */
unsigned mcp_modern_http_status(const char *response)
{
	const char *e = response ? strstr(response, "\"error\":{\"code\":") : NULL;
	const char *r = response ? strstr(response, "\"result\":") : NULL;
	long code;

	if (!e || (r && r < e))
		return 200;
	code = strtol(e + 16, NULL, 10);
	switch (code) {
	case -32700:
	case -32600:
	case -32602:
	case HEADER_MISMATCH:
	case -32021:
	case UNSUPPORTED_VERSION:
		return 400;
	case -32601:
		return 404;
	default:
		return 200;
	}
}

void mcp_stream_decide(mcp_session *s, const cJSON *msg)
{
	if (atomic_load(&s->era) != MCP_ERA_UNDECIDED || !mcp_is_request(msg))
		return;
	atomic_store(&s->era, strcmp(sbx_json_get_string(msg, "method", ""), "initialize") != 0 &&
					      mcp_has_envelope(msg)
				      ? MCP_ERA_MODERN
				      : MCP_ERA_LEGACY);
}

int mcp_handle_stream(server *srv, mcp_session *s, const cJSON *msg, const rpc_sink *sink,
		      char **out)
{
	const char *method = sbx_json_get_string(msg, "method", "");
	mcp_session one;

	*out = NULL;
	if (!mcp_is_request(msg))
		return mcp_handle(srv, s, msg, sink, out);
	if (atomic_load(&s->era) != MCP_ERA_MODERN) {
		if (strcmp(method, "initialize") != 0 && mcp_has_envelope(msg)) {
			(void)reject(
				msg, -32600,
				"Invalid Request: this connection opened with initialize; "
				"requests carrying the 2026-07-28 envelope are not accepted on it",
				NULL, out);
			return *out ? 0 : -ENOMEM;
		}
		return mcp_handle(srv, s, msg, sink, out);
	}
	if (strcmp(method, "initialize") == 0) {
		(void)reject_version(
			msg,
			sbx_json_get_string(sbx_json_get(msg, "params"), "protocolVersion", ""),
			out);
		return *out ? 0 : -ENOMEM;
	}
	mcp_session_init(&one);
	one.owner = s;
	if (mcp_modern_accept(msg, NULL, &one, out) != 0)
		return *out ? 0 : -ENOMEM;
	return mcp_handle(srv, &one, msg, sink, out);
}
