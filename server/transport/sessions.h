/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * HTTP sessions: Streamable HTTP sessions (Mcp-Session-Id, issued at
 * initialize) and legacy SSE sessions (one per GET /mcp/sse stream). Ids are
 * 32 random hex digits. The table is capped; when full, the least recently
 * used Streamable HTTP session is dropped.
 */

#include <stdbool.h>

#include "server.h"
#include "sse.h"

/* One server's session table (server_init makes it). */
typedef struct http_sessions http_sessions;

/* An empty table whose legacy sessions open their streams in streams; NULL on OOM. */
http_sessions *http_sessions_new(sse_registry *streams);

/* Ends every session and frees the table. Accepts NULL. */
void http_sessions_free(http_sessions *t);

typedef struct http_session {
	mcp_session mcp;
	sse_stream *stream; /* legacy SSE only */
	bool legacy;
	/* private */
	http_sessions *owner;
	int refs;
	bool ended;
	long long last_used;
	struct http_session *next;
} http_session;

/* A new session (one reference for the caller), or NULL when out of memory. */
http_session *http_session_create(http_sessions *t, bool legacy);

/* The live session with that id, with a reference; NULL when unknown or ended. */
http_session *http_session_find(http_sessions *t, const char *id);

void http_session_unref(http_session *s);

/* Ends a session; returns 0, or -ENOENT when unknown. */
int http_session_end(http_sessions *t, const char *id);

/* Ends every session (shutdown). */
void http_session_end_all(http_sessions *t);
