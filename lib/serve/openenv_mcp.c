/* SPDX-License-Identifier: MIT */
/*
 * The OpenEnv adapter's MCP client: JSON-RPC over Streamable HTTP to the
 * episode's relay (its mcp_url, the token in the path), on loopback. One
 * keep-alive libcurl handle per session; the server answers JSON (it does
 * here: sandbox-mcp answers a plain POST with application/json). Answers
 * are capped at OPENENV_MCP_REPLY_MAX.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "openenv.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

#define MCP_TIMEOUT_S	120
#define MCP_PROTOCOL	"2025-06-18"
#define SESSION_HDR	"mcp-session-id:"
#define SESSION_HDR_LEN (sizeof(SESSION_HDR) - 1)

struct openenv_mcp {
	CURL *curl;
	char *url;
	char session[129];
	long next_id;
};

static size_t on_body(char *p, size_t size, size_t n, void *userdata)
{
	return sbx_buf_append(userdata, p, size * n) < 0 ? 0 : size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *userdata)
{
	openenv_mcp *m = userdata;
	size_t len = size * n, v;

	if (len > SESSION_HDR_LEN && strncasecmp(p, SESSION_HDR, SESSION_HDR_LEN) == 0) {
		p += SESSION_HDR_LEN;
		len -= SESSION_HDR_LEN;
		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		v = strcspn(p, "\r\n");
		if (v > len)
			v = len;
		/* A session id is visible ASCII; anything else is not sent back. */
		if (v < sizeof(m->session) && v > 0) {
			for (size_t i = 0; i < v; i++)
				if (p[i] < 0x21 || p[i] > 0x7e)
					return size * n;
			memcpy(m->session, p, v);
			m->session[v] = 0;
		}
	}
	return size * n;
}

/*
 * An SSE body (a server that streams anyway): the last "data:" event that is
 * a JSON-RPC answer (result or error); progress notifications are skipped.
 */
static int sse_answer(sbx_buf *body, cJSON **out)
{
	const char *p = sbx_buf_str(body), *end = p + body->len;
	cJSON *last = NULL;

	while (p < end) {
		size_t n = strcspn(p, "\n");
		cJSON *j = NULL;

		if (n > 5 && strncmp(p, "data:", 5) == 0 &&
		    sbx_json_parse(p + 5, n - 5, &j, NULL) == 0 &&
		    (cJSON_GetObjectItemCaseSensitive(j, "result") ||
		     cJSON_GetObjectItemCaseSensitive(j, "error"))) {
			cJSON_Delete(last);
			last = j;
		} else {
			cJSON_Delete(j);
		}
		p += n + (p[n] == '\n');
	}
	*out = last;
	return last ? 0 : -EIO;
}

/* One POST of body; *out is the JSON-RPC answer (NULL for a notification's 202). */
static int post(openenv_mcp *m, const char *body, cJSON **out, sbx_error *err)
{
	_cleanup_(sbx_buf_free) sbx_buf reply = SBX_BUF_INIT(OPENENV_MCP_REPLY_MAX);
	struct curl_slist *h = NULL;
	cJSON *j = NULL;
	char sid[sizeof(m->session) + 32];
	long status = 0;
	CURLcode rc;
	int r;

	h = curl_slist_append(h, "Content-Type: application/json");
	/* JSON only: sandbox-mcp streams tools/call as SSE to a client that accepts it. */
	h = curl_slist_append(h, "Accept: application/json");
	h = curl_slist_append(h, "MCP-Protocol-Version: " MCP_PROTOCOL);
	if (m->session[0]) {
		snprintf(sid, sizeof(sid), "Mcp-Session-Id: %s", m->session);
		h = curl_slist_append(h, sid);
	}
	curl_easy_setopt(m->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(m->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(m->curl, CURLOPT_WRITEDATA, &reply);
	rc = curl_easy_perform(m->curl);
	curl_slist_free_all(h);
	if (rc != CURLE_OK)
		return sbx_error_set(err, -EIO, "the episode's MCP endpoint: %s",
				     rc == CURLE_WRITE_ERROR ? "answer over the size cap"
							     : curl_easy_strerror(rc));
	curl_easy_getinfo(m->curl, CURLINFO_RESPONSE_CODE, &status);
	if (!out) /* a notification: any 2xx will do */
		return status / 100 == 2
			       ? 0
			       : sbx_error_set(err, -EIO, "the episode's MCP endpoint: HTTP %ld",
					       status);
	if (reply.len == 0)
		return sbx_error_set(err, -EIO, "the episode's MCP endpoint: HTTP %ld, no body",
				     status);
	if (reply.len > 5 && (strncmp(reply.data, "data:", 5) == 0 ||
			      strncmp(reply.data, "event:", 6) == 0 || reply.data[0] == ':'))
		r = sse_answer(&reply, &j);
	else
		r = sbx_json_parse(reply.data, reply.len, &j, NULL);
	if (r < 0 || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return sbx_error_set(err, -EIO, "the episode's MCP endpoint: HTTP %ld, not JSON",
				     status);
	}
	*out = j;
	return 0;
}

int sbx_serve__mcp_call(openenv_mcp *m, const char *method, cJSON *params, cJSON **out,
			sbx_error *err)
{
	_cleanup_json_ cJSON *req = cJSON_CreateObject(), *ans = NULL;
	_cleanup_free_ char *body = NULL;
	int r;

	if (!req) {
		cJSON_Delete(params);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	cJSON_AddStringToObject(req, "jsonrpc", "2.0");
	if (out)
		cJSON_AddNumberToObject(req, "id", (double)++m->next_id);
	cJSON_AddStringToObject(req, "method", method);
	if (params)
		cJSON_AddItemToObject(req, "params", params);
	body = cJSON_PrintUnformatted(req);
	if (!body)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = post(m, body, out ? &ans : NULL, err);
	if (r < 0)
		return r;
	if (out)
		*out = TAKE_PTR(ans);
	return 0;
}

int sbx_serve__mcp_open(openenv_mcp **out, const char *url, sbx_error *err)
{
	_cleanup_(sbx_serve__mcp_freep) openenv_mcp *m = calloc(1, sizeof(*m));
	_cleanup_json_ cJSON *init = NULL;
	cJSON *params, *ci;
	int r;

	if (!m || !(m->url = strdup(url)) || !(m->curl = curl_easy_init()))
		return sbx_error_set(err, -ENOMEM, "out of memory");
	curl_easy_setopt(m->curl, CURLOPT_URL, m->url);
	curl_easy_setopt(m->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(m->curl, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(m->curl, CURLOPT_TIMEOUT, (long)MCP_TIMEOUT_S);
	curl_easy_setopt(m->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(m->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(m->curl, CURLOPT_HEADERDATA, m);
	/* The relay listens on loopback; nothing may send this elsewhere. */
	curl_easy_setopt(m->curl, CURLOPT_NOPROXY, "*");

	params = cJSON_CreateObject();
	if (!params)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	cJSON_AddStringToObject(params, "protocolVersion", MCP_PROTOCOL);
	cJSON_AddObjectToObject(params, "capabilities");
	ci = cJSON_AddObjectToObject(params, "clientInfo");
	cJSON_AddStringToObject(ci, "name", "sandboxctl-openenv");
	cJSON_AddStringToObject(ci, "version", "1");
	r = sbx_serve__mcp_call(m, "initialize", params, &init, err);
	if (r < 0)
		return r;
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(init, "result")))
		return sbx_error_set(err, -EIO, "the episode's MCP endpoint refused initialize");
	r = sbx_serve__mcp_call(m, "notifications/initialized", NULL, NULL, err);
	if (r < 0)
		return r;
	*out = TAKE_PTR(m);
	return 0;
}

openenv_mcp *sbx_serve__mcp_free(openenv_mcp *m)
{
	if (!m)
		return NULL;
	if (m->curl)
		curl_easy_cleanup(m->curl);
	free(m->url);
	free(m);
	return NULL;
}

void sbx_serve__mcp_freep(openenv_mcp **m)
{
	sbx_serve__mcp_free(*m);
}
