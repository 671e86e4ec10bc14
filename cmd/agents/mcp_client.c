/* SPDX-License-Identifier: MIT */
#include "mcp_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_BODY       (64L * 1024 * 1024)
#define MODERN_VERSION "2026-07-28"

typedef struct body {
	agent_body b; /* first: the write callback's view */
	bool sse;
	char session[256];
} body;

size_t agent_body_write(char *p, size_t size, size_t n, void *ud)
{
	agent_body *b = ud;
	size_t add = size * n;
	char *d;

	if (b->len + add > b->max)
		return 0;
	d = realloc(b->data, b->len + add + 1);
	if (!d)
		return 0;
	memcpy(d + b->len, p, add);
	b->data = d;
	b->len += add;
	b->data[b->len] = '\0';
	return add;
}

/* memmem, spelled out: gcc's UBSan build sees a null haystack in memmem here (a false alarm). */
static bool contains(const char *p, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(p + i, needle, n) == 0)
			return true;
	return false;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	body *b = ud;
	size_t len = size * n;

	if (len > 13 && strncasecmp(p, "Content-Type:", 13) == 0)
		b->sse = contains(p, len, "text/event-stream");
	if (len > 15 && strncasecmp(p, "Mcp-Session-Id:", 15) == 0) {
		const char *v = p + 15;
		size_t vl;

		while (*v == ' ')
			v++;
		vl = strcspn(v, "\r\n");
		if (vl < sizeof(b->session)) {
			memcpy(b->session, v, vl);
			b->session[vl] = '\0';
		}
	}
	return len;
}

/* Finds the JSON-RPC response with this id in a JSON or SSE body. */
static cJSON *pick_response(const body *b, int id)
{
	if (!b->sse)
		return cJSON_ParseWithLength(b->b.data, b->b.len);
	for (char *line = b->b.data; line && *line;) {
		char *next = strchr(line, '\n');

		if (next)
			*next++ = '\0';
		if (strncmp(line, "data:", 5) == 0) {
			cJSON *m = cJSON_Parse(line + 5);
			const cJSON *mid = cJSON_GetObjectItemCaseSensitive(m, "id");

			if (cJSON_IsNumber(mid) && mid->valueint == id)
				return m;
			cJSON_Delete(m);
		}
		line = next;
	}
	return NULL;
}

/* At 2026-07-28 a request repeats its method and the name it acts on in headers. */
static struct curl_slist *routing_headers(struct curl_slist *h, const cJSON *msg)
{
	const char *method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "method"));
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
	const char *name = NULL;
	char hdr[320];

	if (!method || !cJSON_GetObjectItemCaseSensitive(msg, "id"))
		return h;
	snprintf(hdr, sizeof(hdr), "Mcp-Method: %s", method);
	h = curl_slist_append(h, hdr);
	if (strcmp(method, "tools/call") == 0)
		name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "name"));
	/* Tool names are [A-Za-z0-9_./-]{1,64}: safe in a header as they are. */
	if (name && strlen(name) <= 64 &&
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-") ==
		    strlen(name)) {
		snprintf(hdr, sizeof(hdr), "Mcp-Name: %s", name);
		h = curl_slist_append(h, hdr);
	}
	return h;
}

/* POSTs one message; returns the HTTP status, or -1. *out gets the body. */
static long post(mcp_client *c, cJSON *msg, body *out)
{
	struct curl_slist *h = NULL;
	char hdr[320];
	char *text = cJSON_PrintUnformatted(msg);
	long status = -1;
	CURLcode rc;

	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json, text/event-stream");
	h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip for large calls */
	if (c->session[0]) {
		snprintf(hdr, sizeof(hdr), "Mcp-Session-Id: %s", c->session);
		h = curl_slist_append(h, hdr);
	}
	if (c->version[0]) {
		snprintf(hdr, sizeof(hdr), "MCP-Protocol-Version: %s", c->version);
		h = curl_slist_append(h, hdr);
	}
	if (c->modern)
		h = routing_headers(h, msg);
	curl_easy_setopt(c->curl, CURLOPT_URL, c->url);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, text);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, agent_body_write);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, out);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, c->timeout_s > 0 ? c->timeout_s : 120L);
	rc = curl_easy_perform(c->curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	else
		snprintf(c->error, sizeof(c->error), "%s", curl_easy_strerror(rc));
	curl_slist_free_all(h);
	free(text);
	return status;
}

/* 2026-07-28's per-request envelope: the version, our capabilities (none) and who we are. */
static void add_envelope(const mcp_client *c, cJSON *msg)
{
	cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params"), *meta, *info;

	if (!params)
		params = cJSON_AddObjectToObject(msg, "params");
	meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
	if (!meta)
		meta = cJSON_AddObjectToObject(params, "_meta");
	cJSON_AddStringToObject(meta, "io.modelcontextprotocol/protocolVersion", c->version);
	cJSON_AddObjectToObject(meta, "io.modelcontextprotocol/clientCapabilities");
	info = cJSON_AddObjectToObject(meta, "io.modelcontextprotocol/clientInfo");
	cJSON_AddStringToObject(info, "name", c->name ? c->name : "sandboxctl");
	cJSON_AddStringToObject(info, "version", c->client_version ? c->client_version : "0");
}

static cJSON *message(const mcp_client *c, const char *method, int id, cJSON *params)
{
	cJSON *msg = cJSON_CreateObject();

	cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
	if (id > 0)
		cJSON_AddNumberToObject(msg, "id", id);
	cJSON_AddStringToObject(msg, "method", method);
	if (params)
		cJSON_AddItemToObject(msg, "params", params);
	if (c->modern && id > 0)
		add_envelope(c, msg);
	return msg;
}

const cJSON *mcp_client_rpc(mcp_client *c, const char *method, cJSON *params, cJSON **resp_out)
{
	int id = ++c->next_id;
	cJSON *msg = message(c, method, id, params), *resp;
	body b = {.b.max = MAX_BODY};
	long status;
	const cJSON *err;

	c->error[0] = '\0';
	status = post(c, msg, &b);
	cJSON_Delete(msg);
	if (b.session[0] && !c->session[0])
		snprintf(c->session, sizeof(c->session), "%s", b.session);
	/* 2026-07-28 sends its errors with 400 or 404 and the JSON-RPC error in the body. */
	resp = (status == 200 || (c->modern && (status == 400 || status == 404))) && b.b.data
		       ? pick_response(&b, id)
		       : NULL;
	free(b.b.data);
	if (!resp) {
		if (!c->error[0])
			snprintf(c->error, sizeof(c->error), "%s: no response (HTTP %ld)", method,
				 status);
		return NULL;
	}
	err = cJSON_GetObjectItemCaseSensitive(resp, "error");
	if (err) {
		const char *m =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "message"));
		snprintf(c->error, sizeof(c->error), "%s: error: %s", method, m ? m : "?");
		cJSON_Delete(resp);
		return NULL;
	}
	*resp_out = resp;
	return cJSON_GetObjectItemCaseSensitive(resp, "result");
}

static bool notify(mcp_client *c, const char *method)
{
	cJSON *msg = message(c, method, 0, NULL);
	body b = {.b.max = MAX_BODY};
	long status = post(c, msg, &b);

	cJSON_Delete(msg);
	free(b.b.data);
	return status == 202 || status == 200;
}

/*
 * server/discover at 2026-07-28, as the official SDK's Client probes: 0 when
 * the server offers that revision (then every request carries it), -1 when
 * the server could not be reached, 1 for anything else (an older server:
 * -32601, a 4xx, a result without the version), which falls back.
 */
static int discover(mcp_client *c)
{
	cJSON *resp = NULL;
	const cJSON *res, *v;

	c->modern = true;
	snprintf(c->version, sizeof(c->version), "%s", MODERN_VERSION);
	res = mcp_client_rpc(c, "server/discover", NULL, &resp);
	cJSON_ArrayForEach (v, cJSON_GetObjectItemCaseSensitive(res, "supportedVersions"))
		if (cJSON_IsString(v) && strcmp(v->valuestring, MODERN_VERSION) == 0) {
			cJSON_Delete(resp);
			return 0;
		}
	cJSON_Delete(resp);
	c->modern = false;
	c->version[0] = '\0';
	/* A transport failure keeps libcurl's words; an answer of any kind names the method. */
	if (!res && strncmp(c->error, "server/discover:", 16) != 0)
		return -1;
	c->error[0] = '\0';
	return 1;
}

int mcp_client_open(mcp_client *c, const char *url, const char *name, const char *version)
{
	cJSON *params = cJSON_CreateObject(), *ci, *resp = NULL;
	const cJSON *res;
	const char *v;

	memset(c, 0, sizeof(*c));
	c->url = url;
	c->name = name;
	c->client_version = version;
	c->curl = curl_easy_init();
	if (!c->curl) {
		cJSON_Delete(params);
		snprintf(c->error, sizeof(c->error), "cannot start libcurl");
		return -1;
	}
	switch (discover(c)) {
	case 0:
		cJSON_Delete(params);
		return 0;
	case -1: /* the server is not there: no point in a handshake */
		cJSON_Delete(params);
		return -1;
	default: /* an older server: the initialize handshake */
		break;
	}
	cJSON_AddStringToObject(params, "protocolVersion", "2025-06-18");
	cJSON_AddItemToObject(params, "capabilities", cJSON_CreateObject());
	ci = cJSON_AddObjectToObject(params, "clientInfo");
	cJSON_AddStringToObject(ci, "name", name);
	cJSON_AddStringToObject(ci, "version", version);
	res = mcp_client_rpc(c, "initialize", params, &resp);
	if (!res)
		return -1;
	v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "protocolVersion"));
	snprintf(c->version, sizeof(c->version), "%s", v ? v : "2025-06-18");
	cJSON_Delete(resp);
	if (!notify(c, "notifications/initialized")) {
		snprintf(c->error, sizeof(c->error), "notifications/initialized was refused");
		return -1;
	}
	return 0;
}

void mcp_client_close(mcp_client *c)
{
	if (c->curl)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
}

cJSON *mcp_client_call(mcp_client *c, const char *name, cJSON *args)
{
	cJSON *params = cJSON_CreateObject(), *resp = NULL, *res;

	cJSON_AddStringToObject(params, "name", name);
	cJSON_AddItemToObject(params, "arguments", args ? args : cJSON_CreateObject());
	if (!mcp_client_rpc(c, "tools/call", params, &resp))
		return NULL;
	res = cJSON_DetachItemFromObjectCaseSensitive(resp, "result");
	cJSON_Delete(resp);
	return res;
}

cJSON *mcp_client_call_structured(mcp_client *c, const char *name, cJSON *args)
{
	cJSON *res = mcp_client_call(c, name, args), *out = NULL;
	const cJSON *sc, *text;

	if (!res)
		return NULL;
	text = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(res, "content"), 0), "text");
	sc = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "isError")))
		snprintf(c->error, sizeof(c->error), "%s: tool error: %s", name,
			 cJSON_IsString(text) ? text->valuestring : "?");
	else if (cJSON_IsObject(sc))
		out = cJSON_Duplicate(sc, 1);
	else if (cJSON_IsString(text))
		out = cJSON_Parse(text->valuestring);
	cJSON_Delete(res);
	return out;
}
