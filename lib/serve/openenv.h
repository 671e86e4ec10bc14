/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The OpenEnv adapter (openenv-core 0.3.0's environment-server protocol):
 * openenv.c is the HTTP side (the routes under /<token>/openenv/<task>, the
 * WebSocket upgrade, the session threads, framing by wslay), openenv_session.c
 * one session's messages (reset, step, state, close) over the episode
 * service, openenv_mcp.c the MCP client to the episode's relay.
 */

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "service.h"
#include "sbx/buf.h"

#define OPENENV_SESSIONS_MAX  64		/* WebSocket sessions at once; more: 503 */
#define OPENENV_MSG_MAX	      (1024 * 1024)	/* one message, fragments included */
#define OPENENV_QUEUE_MAX     16		/* replies queued unsent: reading stops */
#define OPENENV_QUEUE_BYTES   (8 * 1024 * 1024) /* ... or this many bytes */
#define OPENENV_IDLE_S	      300		/* a session with no message this long ends */
#define OPENENV_MCP_REPLY_MAX (4 * 1024 * 1024)

/* ---- openenv_mcp.c ---- */

typedef struct openenv_mcp openenv_mcp;

/* Opens an MCP session on url (initialize, notifications/initialized). */
int sbx_serve__mcp_open(openenv_mcp **out, const char *url, sbx_error *err);

/*
 * One JSON-RPC call: method with params (owned by the call, may be NULL).
 * out NULL: a notification. *out is the whole JSON-RPC answer (result or
 * error), the caller's. -EIO with a message when the endpoint failed.
 */
int sbx_serve__mcp_call(openenv_mcp *m, const char *method, cJSON *params, cJSON **out,
			sbx_error *err);
openenv_mcp *sbx_serve__mcp_free(openenv_mcp *m);
void sbx_serve__mcp_freep(openenv_mcp **m);

/* ---- openenv_session.c ---- */

typedef struct openenv_session openenv_session;

openenv_session *sbx_serve__openenv_session_new(sbx_serve *s, const char *task);

/*
 * One text message from the client: *reply is the malloc'd frame to send
 * (NULL for close, which sets *close). Never fails: errors are error frames.
 */
void sbx_serve__openenv_message(openenv_session *os, const char *msg, size_t len, char **reply,
				bool *close);

/* Finishes the session's episode if one is live (graded) and frees it. Accepts NULL. */
void sbx_serve__openenv_session_free(openenv_session *os);

/* {"type":"error","data":{"message","code"}} as malloc'd text. */
char *sbx_serve__openenv_error(const char *code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- listen.c ---- */

/*
 * Answers c with text (malloc'd, taken even on failure; NULL: MHD_NO) as
 * type, never cached; a 401 also asks for the token and closes.
 */
enum MHD_Result sbx_serve__send_text(struct MHD_Connection *c, unsigned status, char *text,
				     const char *type);

/* ---- openenv.c ---- */

/*
 * A request under /openenv/ (path after the token): the task's /ws upgrade,
 * /health, /metadata, /schema. Answers it on c. For /ws, *task gets the
 * malloc'd task name, the caller's to free when the request ends; it must
 * be the first member of the request's con_cls (the upgrade reads it there).
 */
enum MHD_Result sbx_serve__openenv_request(sbx_serve *s, struct MHD_Connection *c,
					   const char *method, const char *path, const char **task);

/* Ends every session (their episodes were drained already) and waits for them. */
void sbx_serve__openenv_stop(sbx_serve *s);
