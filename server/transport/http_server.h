/* SPDX-License-Identifier: MIT */
#pragma once

/* Internals shared by the HTTP transport files (http_server.c, http_mcp.c, rest.c, control.c). */

#include <microhttpd.h>

#include "server.h"
#include "sessions.h"

typedef struct http_request {
	server *srv;
	struct MHD_Connection *conn;
	const char *url;
	const char *method;
	const char *body; /* NUL-terminated */
	size_t body_len;
	/* On the published TCP listener (a token required, no /control), not the host's socket. */
	bool published;
	/* The path prefix the client's URLs carry (the token), for links the server makes. */
	const char *prefix;
	/*
	 * A message for PID 1 (SANDBOX_INIT_FD), sent once the reply is out
	 * (MHD's completion): a reset order kills this server, so not before.
	 */
	void *after_reply;
	size_t after_reply_len;
} http_request;

/* Sends body (copied) with status and content type; session adds Mcp-Session-Id. */
enum MHD_Result http_reply(http_request *req, unsigned status, const char *content_type,
			   const char *body, const http_session *session);

/*
 * Sends len bytes of data (malloc'd; freed here, whatever happens) with
 * Content-Length, plus headers: name, value, name, value, …, NULL (or NULL).
 */
enum MHD_Result http_reply_bytes(http_request *req, unsigned status, const char *content_type,
				 char *data, size_t len, const char *const *headers);

/* Sends o as JSON (consumes o). */
enum MHD_Result http_reply_json(http_request *req, unsigned status, cJSON *o);

/* Sends {"success":false,"result":null,"error":message}. */
enum MHD_Result http_reply_error(http_request *req, unsigned status, const char *message);

const char *http_header(http_request *req, const char *name);

/* Streamable HTTP (/mcp) and legacy SSE (/mcp/sse, /mcp/messages). */
enum MHD_Result http_mcp_post(http_request *req);
enum MHD_Result http_mcp_delete(http_request *req);
enum MHD_Result http_legacy_get(http_request *req, const char *messages_path);
enum MHD_Result http_legacy_post(http_request *req);

/* Waits (up to 30 s) for request threads started by the MCP transports. */
void http_workers_wait(server *srv);

/* POST /task/complete (REST, /v1, /control/complete): recalculates, completes, answers the status.
 */
enum MHD_Result http_task_complete(http_request *req);

/* The host's control API (/control/...): false when the path is not under /control. */
bool http_control_route(http_request *req, enum MHD_Result *result);

/*
 * The host's API for a sandbox without a task (sandbox_api.c), under
 * /control/sandbox/ (url: the path after /control): false when not there.
 */
#define SANDBOX_OUTPUT_MAX	(10u << 20)  /* bytes of stdout, and of stderr, per exec */
#define SANDBOX_FILE_MAX	(100u << 20) /* bytes of one file, read or written */
#define SANDBOX_EXEC_TIMEOUT_RC 124	     /* the returncode of an exec past its timeout */
#define SANDBOX_BODY_MAX	(144u << 20) /* a request's body: 100 MiB of stdin in base64 */
bool http_sandbox_route(http_request *req, const char *url, enum MHD_Result *result);

/* REST: returns MHD_NO-equivalent false when the path is not a REST route. */
bool http_rest_route(http_request *req, enum MHD_Result *result);
