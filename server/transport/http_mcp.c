/* SPDX-License-Identifier: MIT */
/*
 * MCP over HTTP: Streamable HTTP on /mcp (POST answers with JSON, or with an
 * SSE stream for tools/call when the client accepts one, so progress and log
 * notifications arrive before the result; DELETE ends a session) and the
 * legacy HTTP+SSE transport (GET /mcp/sse + POST /mcp/messages).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "http_server.h"

#define MAX_JOBS 32

typedef struct job {
	server *srv;
	http_session *session; /* referenced, or NULL: use temp */
	mcp_session temp;
	cJSON *msg;
	sse_stream *stream; /* referenced */
} job;

static void push_message(void *payload, const char *json)
{
	(void)sse_stream_push(payload, "message", json);
}

static void *job_main(void *arg)
{
	job *j = arg;
	rpc_sink sink = {push_message, j->stream};
	char *out = NULL;

	(void)mcp_handle(j->srv, j->session ? &j->session->mcp : &j->temp, j->msg, &sink, &out);
	if (out)
		push_message(j->stream, out);
	free(out);
	if (!j->session || !j->session->legacy)
		sse_stream_close(j->stream);
	sse_stream_unref(j->stream);
	http_session_unref(j->session);
	cJSON_Delete(j->msg);
	atomic_fetch_sub(&j->srv->http_workers, 1);
	free(j);
	return NULL;
}

/* Runs msg on a detached thread that writes to stream; takes msg on success.
 * Without a session the request runs in its own, set up as proto is. */
static int spawn_job(server *srv, http_session *session, const mcp_session *proto, cJSON *msg,
		     sse_stream *stream)
{
	job *j = calloc(1, sizeof(*j));
	pthread_attr_t attr;
	pthread_t t;
	int r;

	if (!j)
		return -ENOMEM;
	j->srv = srv;
	j->session = session;
	mcp_session_init(&j->temp);
	if (proto) {
		j->temp.modern = proto->modern;
		memcpy(j->temp.protocol_version, proto->protocol_version,
		       sizeof(j->temp.protocol_version));
		atomic_store(&j->temp.log_level, atomic_load(&proto->log_level));
	}
	j->msg = msg;
	j->stream = sse_stream_ref(stream);
	atomic_fetch_add(&srv->http_workers, 1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &attr, job_main, j);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		atomic_fetch_sub(&srv->http_workers, 1);
		sse_stream_unref(stream);
		free(j);
		return -r;
	}
	return 0;
}

void http_workers_wait(server *srv)
{
	for (int i = 0; i < 3000 && atomic_load(&srv->http_workers) > 0; i++)
		usleep(10000);
}

static enum MHD_Result rpc_error(http_request *req, unsigned status, const cJSON *id, int code,
				 const char *message)
{
	_cleanup_free_ char *text = mcp_error_response(id, code, message);

	return http_reply(req, status, "application/json", text, NULL);
}

static bool json_content_type(http_request *req)
{
	const char *ct = http_header(req, "Content-Type");

	return ct && strncasecmp(ct, "application/json", 16) == 0;
}

static bool accepts_sse(http_request *req)
{
	const char *accept = http_header(req, "Accept");

	return accept && strstr(accept, "text/event-stream");
}

/* A client that accepts only SSE gets every answer as an event. */
static bool sse_only(http_request *req)
{
	const char *accept = http_header(req, "Accept");

	return accepts_sse(req) && !strstr(accept, "application/json") && !strstr(accept, "*/*");
}

static enum MHD_Result reply_sse_event(http_request *req, const char *json,
				       const http_session *session)
{
	_cleanup_free_ char *body = NULL;

	if (asprintf(&body, "event: message\ndata: %s\n\n", json) < 0)
		return MHD_NO;
	return http_reply(req, 200, "text/event-stream", body, session);
}

/* Methods that only make sense inside a session; the rest may come without one. */
static bool needs_session(const char *method)
{
	static const char *const stateful[] = {"tools/list",
					       "tools/call",
					       "resources/list",
					       "resources/read",
					       "resources/templates/list",
					       "logging/setLevel"};

	for (size_t i = 0; i < SBX_ELEMENTSOF(stateful); i++)
		if (strcmp(method, stateful[i]) == 0)
			return true;
	return false;
}

static enum MHD_Result answer(http_request *req, http_session *session, mcp_session *ms, cJSON *msg,
			      bool *msg_taken)
{
	const char *method = sbx_json_get_string(msg, "method", "");
	_cleanup_free_ char *out = NULL;
	struct MHD_Response *r;
	enum MHD_Result ret;
	sse_stream *stream;
	unsigned status;
	char sid[sizeof(ms->id)];

	if (!mcp_is_request(msg)) {
		/* Notifications and responses: 202, never an error status. */
		(void)mcp_handle(req->srv, ms, msg, NULL, &out);
		return http_reply(req, 202, NULL, NULL, NULL);
	}
	/* 2026-07-28 answers an unknown tool with its HTTP status, so not on a stream. */
	if (strcmp(method, "tools/call") == 0 && accepts_sse(req) &&
	    (!ms->modern ||
	     server_find_tool(req->srv,
			      sbx_json_get_string(sbx_json_get(msg, "params"), "name", ""),
			      NULL))) {
		/* The job takes msg and the session reference; keep the id for the header. */
		memcpy(sid, ms->id, sizeof(sid));
		stream = sse_stream_new(req->srv->streams);
		if (!stream)
			return rpc_error(req, 500, NULL, -32603, "out of memory");
		r = sse_stream_response(stream);
		if (!r || spawn_job(req->srv, session, ms, msg, stream) < 0) {
			if (r)
				MHD_destroy_response(r);
			sse_stream_unref(stream);
			return rpc_error(req, 500, NULL, -32603, "cannot start the request");
		}
		*msg_taken = true;
		sse_stream_unref(stream);
		if (session)
			MHD_add_response_header(r, "Mcp-Session-Id", sid);
		ret = MHD_queue_response(req->conn, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	if (mcp_handle(req->srv, ms, msg, NULL, &out) < 0 || !out)
		return rpc_error(req, 500, NULL, -32603, "out of memory");
	status = ms->modern ? mcp_modern_http_status(out) : 200;
	if (sse_only(req) && status == 200)
		return reply_sse_event(req, out, session);
	return http_reply(req, status, "application/json", out, session);
}

struct routing_scan {
	bool seen[3];
	const char *duplicated;
};

static enum MHD_Result scan_routing_header(void *cls, enum MHD_ValueKind kind, const char *key,
					   const char *value)
{
	static const char *const routing[] = {"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"};
	struct routing_scan *scan = cls;

	(void)kind;
	(void)value;
	for (size_t i = 0; i < SBX_ELEMENTSOF(routing); i++)
		if (strcasecmp(key, routing[i]) == 0) {
			if (scan->seen[i])
				scan->duplicated = routing[i];
			scan->seen[i] = true;
		}
	return MHD_YES;
}

/*
 * A 2026-07-28 request: no session, its envelope and headers checked, served
 * in a session of its own, errors with the revision's HTTP statuses. The
 * revision has no client notifications: acknowledged (202, as every
 * notification here) and dropped, so no one cancels another's call by id.
 */
static enum MHD_Result modern_post(http_request *req, cJSON *msg)
{
	struct routing_scan scan = {0};
	mcp_route_headers h;
	_cleanup_free_ char *out = NULL;
	mcp_session one;
	bool taken = false;
	enum MHD_Result ret;

	if (!mcp_is_request(msg)) {
		cJSON_Delete(msg);
		return http_reply(req, 202, NULL, NULL, NULL);
	}
	(void)MHD_get_connection_values(req->conn, MHD_HEADER_KIND, scan_routing_header, &scan);
	h = (mcp_route_headers){http_header(req, "MCP-Protocol-Version"),
				http_header(req, "Mcp-Method"), http_header(req, "Mcp-Name"),
				scan.duplicated};
	mcp_session_init(&one);
	if (mcp_modern_accept(msg, &h, &one, &out) != 0) {
		ret = http_reply(req, mcp_modern_http_status(out), "application/json", out, NULL);
		cJSON_Delete(msg);
		return ret;
	}
	ret = answer(req, NULL, &one, msg, &taken);
	if (!taken)
		cJSON_Delete(msg);
	return ret;
}

enum MHD_Result http_mcp_post(http_request *req)
{
	sbx_error err = SBX_ERROR_INIT;
	cJSON *msg = NULL;
	const char *sid = http_header(req, "Mcp-Session-Id");
	const char *version = http_header(req, "MCP-Protocol-Version");
	http_session *session = NULL;
	mcp_session temp;
	const char *method;
	bool taken = false;
	enum MHD_Result ret;
	char text[SBX_ERROR_MAX + 32];

	if (!json_content_type(req))
		return rpc_error(req, 415, NULL, -32600,
				 "Unsupported Media Type: Content-Type must be application/json");
	if (sbx_json_parse(req->body, req->body_len, &msg, &err) < 0) {
		snprintf(text, sizeof(text), "Parse error: %s", sbx_error_message(&err));
		return rpc_error(req, 400, NULL, -32700, text);
	}
	/* 2026-07-28 by its envelope, or by a version header no older revision has. */
	if (mcp_has_envelope(msg) || (version && !sid && !mcp_version_supported(version)))
		return modern_post(req, msg);
	method = sbx_json_get_string(msg, "method", "");
	if (strcmp(method, "initialize") == 0 && mcp_is_request(msg)) {
		session = http_session_create(req->srv->sessions, false);
		if (!session) {
			ret = rpc_error(req, 503, sbx_json_get(msg, "id"), -32603,
					"Too many sessions");
			cJSON_Delete(msg);
			return ret;
		}
	} else if (sid) {
		session = http_session_find(req->srv->sessions, sid);
		if (!session || session->legacy) {
			http_session_unref(session);
			ret = rpc_error(req, 404, sbx_json_get(msg, "id"), -32001,
					"Session not found");
			cJSON_Delete(msg);
			return ret;
		}
		if (version && !mcp_version_supported(version)) {
			snprintf(text, sizeof(text),
				 "Bad Request: unsupported protocol version %.40s", version);
			ret = rpc_error(req, 400, sbx_json_get(msg, "id"), -32600, text);
			http_session_unref(session);
			cJSON_Delete(msg);
			return ret;
		}
	} else if (mcp_is_request(msg) && needs_session(method)) {
		ret = rpc_error(req, 400, sbx_json_get(msg, "id"), -32600,
				"Bad Request: Mcp-Session-Id header is required");
		cJSON_Delete(msg);
		return ret;
	}
	mcp_session_init(&temp);
	ret = answer(req, session, session ? &session->mcp : &temp, msg, &taken);
	if (!taken) {
		cJSON_Delete(msg);
		http_session_unref(session);
	}
	return ret;
}

enum MHD_Result http_mcp_delete(http_request *req)
{
	const char *sid = http_header(req, "Mcp-Session-Id");

	if (!sid)
		return http_reply_error(req, 400, "Bad Request: Mcp-Session-Id header is required");
	if (http_session_end(req->srv->sessions, sid) < 0)
		return http_reply_error(req, 404, "Session not found");
	return http_reply(req, 200, "application/json", "{}", NULL);
}

enum MHD_Result http_legacy_get(http_request *req, const char *messages_path)
{
	http_session *s = http_session_create(req->srv->sessions, true);
	struct MHD_Response *r;
	enum MHD_Result ret;
	char endpoint[256];

	if (!s)
		return http_reply_error(req, 503, "Too many sessions");
	/* The client's URLs may start with the run's token (stripped by the relay,
	 * or by the published listener): the endpoint must carry it back. */
	const char *prefix = req->prefix;
	size_t pl = prefix ? strlen(prefix) : 0;

	if (pl < 2 || pl > 65 || prefix[0] != '/' ||
	    strspn(prefix + 1,
		   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != pl - 1)
		prefix = "";
	snprintf(endpoint, sizeof(endpoint), "%s%s?session_id=%s", prefix, messages_path,
		 s->mcp.id);
	sse_stream_push(s->stream, "endpoint", endpoint);
	r = sse_stream_response(s->stream);
	http_session_unref(s);
	if (!r)
		return MHD_NO;
	ret = MHD_queue_response(req->conn, 200, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result http_legacy_post(http_request *req)
{
	const char *sid =
		MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "session_id");
	sbx_error err = SBX_ERROR_INIT;
	http_session *s;
	cJSON *msg = NULL;
	_cleanup_free_ char *out = NULL;
	char text[SBX_ERROR_MAX + 32];

	if (!sid)
		return http_reply_error(req, 400, "Bad Request: session_id is required");
	s = http_session_find(req->srv->sessions, sid);
	if (!s || !s->legacy || sse_stream_gone(s->stream)) {
		if (s && s->legacy)
			http_session_end(req->srv->sessions, sid);
		http_session_unref(s);
		return http_reply_error(req, 404, "Session not found");
	}
	if (sbx_json_parse(req->body, req->body_len, &msg, &err) < 0) {
		http_session_unref(s);
		snprintf(text, sizeof(text), "Parse error: %s", sbx_error_message(&err));
		return rpc_error(req, 400, NULL, -32700, text);
	}
	if (!mcp_is_request(msg)) {
		(void)mcp_handle(req->srv, &s->mcp, msg, NULL, &out);
		if (out) /* an invalid message still gets its error on the stream */
			sse_stream_push(s->stream, "message", out);
		cJSON_Delete(msg);
		http_session_unref(s);
		return http_reply(req, 202, "text/plain", "Accepted", NULL);
	}
	/* Past MAX_JOBS running requests, answer on this thread: the POST waits (backpressure). */
	if (atomic_load(&req->srv->http_workers) >= MAX_JOBS ||
	    spawn_job(req->srv, s, NULL, msg, s->stream) < 0) {
		rpc_sink sink = {push_message, s->stream};

		(void)mcp_handle(req->srv, &s->mcp, msg, &sink, &out);
		if (out)
			sse_stream_push(s->stream, "message", out);
		cJSON_Delete(msg);
		http_session_unref(s);
	}
	return http_reply(req, 202, "text/plain", "Accepted", NULL);
}
