/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sbx/base64.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/log.h"
#include "run-internal.h"
#include "sbx/run.h"

#define LINE_MAX_BYTES (64 * 1024 * 1024)

typedef struct stdio_state {
	sbx_run *run;
	int out_fd;
	char *session;
	char *version;
} stdio_state;

/* One message per line: raw newlines in JSON are only whitespace, so they become spaces. */
static int emit(stdio_state *st, const char *msg, size_t n)
{
	_cleanup_free_ char *copy = NULL;
	int r;

	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r' || msg[n - 1] == ' '))
		n--;
	if (n == 0)
		return 0;
	copy = malloc(n + 1);
	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		copy[i] = msg[i] == '\n' || msg[i] == '\r' ? ' ' : msg[i];
	copy[n] = '\n';
	r = sbx_write_all(st->out_fd, copy, n + 1);
	return r;
}

static void remember_version(stdio_state *st, const char *msg, size_t n)
{
	_cleanup_json_ cJSON *j = NULL;
	const char *v;

	if (st->version || sbx_json_parse(msg, n, &j, NULL) < 0)
		return;
	v = sbx_json_get_string(sbx_json_get(j, "result"), "protocolVersion", NULL);
	if (v && strlen(v) < 32)
		st->version = strdup(v);
}

static void emit_sse(stdio_state *st, const char *body, size_t len)
{
	_cleanup_(sbx_buf_free) sbx_buf data = SBX_BUF_INIT(LINE_MAX_BYTES);
	const char *p = body, *end = body + len;

	while (p <= end) {
		const char *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (ll && p[ll - 1] == '\r')
			ll--;
		if (ll == 0) { /* end of an event */
			if (data.len) {
				remember_version(st, data.data, data.len);
				emit(st, data.data, data.len);
			}
			sbx_buf_reset(&data);
		} else if (ll >= 5 && memcmp(p, "data:", 5) == 0) {
			const char *d = p + 5;
			size_t dl = ll - 5;

			if (dl && *d == ' ')
				d++, dl--;
			sbx_buf_append(&data, d, dl);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	if (data.len) {
		remember_version(st, data.data, data.len);
		emit(st, data.data, data.len);
	}
}

/* Printable ASCII without edge spaces: safe as a header value as it is. */
static bool header_plain(const char *v)
{
	size_t n = strlen(v);

	if (n == 0 || v[0] == ' ' || v[n - 1] == ' ' || strncmp(v, "=?base64?", 9) == 0)
		return false;
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || (unsigned char)*v > 0x7e)
			return false;
	return true;
}

/*
 * 2026-07-28: a request names its version in params._meta, and over HTTP the
 * headers must repeat it, its method and the name it acts on (the server
 * compares them). They come from the client's message, so nothing but plain
 * ASCII reaches the head: the name in the revision's "=?base64?…?=" form
 * otherwise, a version or method not at all (the server then refuses the
 * request with -32020, as it should). False when msg carries no envelope.
 */
static bool modern_headers(const cJSON *msg, sbx_buf *hdr)
{
	const cJSON *params = sbx_json_get(msg, "params");
	const char *v = sbx_json_get_string(sbx_json_get(params, "_meta"),
					    "io.modelcontextprotocol/protocolVersion", NULL);
	const char *method = sbx_json_get_string(msg, "method", "");
	const char *name = strcmp(method, "resources/read") == 0
				   ? sbx_json_get_string(params, "uri", NULL)
				   : sbx_json_get_string(params, "name", NULL);
	_cleanup_free_ char *b64 = NULL;

	if (!v)
		return false;
	if (header_plain(v))
		sbx_buf_printf(hdr, "MCP-Protocol-Version: %s\r\n", v);
	if (!sbx_json_get(msg, "id"))
		return true;
	if (header_plain(method))
		sbx_buf_printf(hdr, "Mcp-Method: %s\r\n", method);
	if (!name || !(strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0 ||
		       strcmp(method, "resources/read") == 0))
		return true;
	if (header_plain(name))
		sbx_buf_printf(hdr, "Mcp-Name: %s\r\n", name);
	else if ((b64 = sbx_base64_encode(name, strlen(name))))
		sbx_buf_printf(hdr, "Mcp-Name: =?base64?%s?=\r\n", b64);
	return true;
}

static void relay_error(stdio_state *st, const cJSON *id, const char *text)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	_cleanup_free_ char *s = NULL;
	cJSON *e;

	if (!o || !id)
		return;
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, 1));
	e = cJSON_AddObjectToObject(o, "error");
	cJSON_AddNumberToObject(e, "code", -32603);
	cJSON_AddStringToObject(e, "message", text);
	s = sbx_json_print(o);
	if (s)
		emit(st, s, strlen(s));
}

static void handle_line(stdio_state *st, const char *line, size_t n)
{
	_cleanup_json_ cJSON *msg = NULL;
	_cleanup_(sbx_buf_free) sbx_buf hdr = SBX_BUF_INIT(1024);
	sbx_relay_response resp = {0};
	sbx_error err = SBX_ERROR_INIT;
	const cJSON *id;
	int r;

	if (sbx_json_parse(line, n, &msg, &err) < 0) {
		static const char parse_error[] =
			"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
			"\"message\":\"Parse error\"}}";
		emit(st, parse_error, sizeof(parse_error) - 1);
		return;
	}
	id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	if (!modern_headers(msg, &hdr)) {
		if (st->session)
			sbx_buf_printf(&hdr, "Mcp-Session-Id: %s\r\n", st->session);
		if (st->version)
			sbx_buf_printf(&hdr, "MCP-Protocol-Version: %s\r\n", st->version);
	}
	r = sbx_relay_request(sbx_run_get_relay(st->run), "POST", "/mcp", hdr.data, line, n, true,
			      15 * 60 * 1000, &resp, &err);
	if (r < 0) {
		relay_error(st, id, sbx_error_message(&err));
		return;
	}
	if (resp.session_id && !st->session)
		st->session = strdup(resp.session_id);
	if (resp.status == 202 || resp.len == 0) {
		if (resp.status >= 400) {
			char text[64];
			snprintf(text, sizeof(text), "the sandbox answered HTTP %d", resp.status);
			relay_error(st, id, text);
		}
	} else if (resp.content_type &&
		   strncasecmp(resp.content_type, "text/event-stream", 17) == 0) {
		emit_sse(st, resp.body, resp.len);
	} else if (resp.body[0] == '{' || resp.body[0] == '[') {
		remember_version(st, resp.body, resp.len);
		emit(st, resp.body, resp.len);
	} else {
		char text[300];
		snprintf(text, sizeof(text), "the sandbox answered HTTP %d: %.200s", resp.status,
			 resp.body);
		relay_error(st, id, text);
	}
	sbx_relay_response_free(&resp);
}

sbx_run_end sbx_run_serve_stdio(sbx_run *run, int in_fd, int out_fd)
{
	_cleanup_(sbx_buf_free) sbx_buf pending = SBX_BUF_INIT(LINE_MAX_BYTES);
	stdio_state st = {.run = run, .out_fd = out_fd};
	sbx_run_end end = SBX_END_NONE;

	while ((end = sbx_run_poll(run)) == SBX_END_NONE) {
		struct pollfd p = {.fd = in_fd, .events = POLLIN};
		char buf[65536];
		ssize_t n;
		char *nl;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(in_fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			if (pending.len)
				handle_line(&st, pending.data, pending.len);
			/* A client that called complete_task and hung up at once ended the
			 * episode by completing it, whatever the next status poll would see. */
			end = sbx_run__task_state(run, 0) == 1 ? SBX_END_COMPLETE_TASK
							       : SBX_END_CLIENT_EOF;
			break;
		}
		if (sbx_buf_append(&pending, buf, (size_t)n) < 0) {
			sbx_log_error("mcp: a message longer than %d bytes; giving up",
				      LINE_MAX_BYTES);
			end = SBX_END_CLIENT_EOF;
			break;
		}
		while (pending.len && (nl = memchr(pending.data, '\n', pending.len))) {
			size_t ll = (size_t)(nl - pending.data);
			size_t rest = pending.len - ll - 1;

			if (ll > 0 && !(ll == 1 && pending.data[0] == '\r'))
				handle_line(&st, pending.data, ll);
			memmove(pending.data, nl + 1, rest);
			pending.len = rest;
			pending.data[rest] = '\0';
		}
	}
	free(st.session);
	free(st.version);
	return end;
}
