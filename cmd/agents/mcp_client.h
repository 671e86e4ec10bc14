/* SPDX-License-Identifier: MIT */
/*
 * A small MCP Streamable HTTP client for the host-side agents (the demo and
 * the model agent): initialize, requests with JSON or SSE answers, tools.
 * It talks to the run's relay URL exactly as any outside client would.
 */
#pragma once

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdbool.h>

/* A capped response body for libcurl's CURLOPT_WRITEFUNCTION (agent_body_write). */
typedef struct agent_body {
	char *data; /* NUL-terminated */
	size_t len, max;
} agent_body;

size_t agent_body_write(char *p, size_t size, size_t n, void *body);

typedef struct mcp_client {
	CURL *curl;
	const char *url;
	char session[256];
	char version[32];
	/* 2026-07-28: each request carries the envelope and the routing headers, no session. */
	bool modern;
	const char *name, *client_version; /* clientInfo */
	int next_id;
	long timeout_s;	 /* per request */
	char error[512]; /* why the last call failed */
} mcp_client;

/* Connects as client name/version: server/discover at 2026-07-28 when the
 * server offers it, else initialize + notifications/initialized.
 * Returns 0, or -1 with c->error set. curl_global_init is the caller's. */
int mcp_client_open(mcp_client *c, const char *url, const char *name, const char *version);

void mcp_client_close(mcp_client *c);

/* A request: its "result" (inside *resp_out, which the caller frees), or NULL
 * with c->error set (no answer, an HTTP error, or a JSON-RPC error). */
const cJSON *mcp_client_rpc(mcp_client *c, const char *method, cJSON *params, cJSON **resp_out);

/* tools/call: the whole result ({content, structuredContent?, isError?}),
 * which the caller frees, or NULL (a protocol failure; c->error says why). */
cJSON *mcp_client_call(mcp_client *c, const char *name, cJSON *args);

/* tools/call for scripted use: the tool's structured result (structuredContent,
 * or the first text block parsed as JSON), or NULL on any failure or tool error. */
cJSON *mcp_client_call_structured(mcp_client *c, const char *name, cJSON *args);
