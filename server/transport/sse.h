/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * An SSE event queue read by a libmicrohttpd content-reader callback. Writers
 * (tool workers) push events; the connection thread blocks in the callback
 * until there is something to send, sending a comment every 15 s so a
 * vanished client is noticed. Reference-counted: the response holds one
 * reference, each writer its own.
 */

#include <stdbool.h>

struct MHD_Response;
typedef struct sse_stream sse_stream;

/* The open streams of one server, so shutdown can close them all. */
typedef struct sse_registry sse_registry;

/* An empty registry, or NULL on out-of-memory. */
sse_registry *sse_registry_new(void);

/* Frees reg; streams still referenced are detached from it, not freed. Accepts NULL. */
void sse_registry_free(sse_registry *reg);

/* A new stream in reg (one reference for the caller; closed at once after close_all), or NULL. */
sse_stream *sse_stream_new(sse_registry *reg);
sse_stream *sse_stream_ref(sse_stream *s);
void sse_stream_unref(sse_stream *s);

/* Queues "event: <event>\ndata: <data>\n\n"; -EPIPE once closed, -ENOBUFS when backed up. */
int sse_stream_push(sse_stream *s, const char *event, const char *data);

/* No more events: the response ends after what is queued. */
void sse_stream_close(sse_stream *s);

/* True once the client went away (the response was freed). */
bool sse_stream_gone(sse_stream *s);

/* A response that streams s (takes its own reference); NULL on OOM. */
struct MHD_Response *sse_stream_response(sse_stream *s);

/* Closes every open stream of reg (shutdown), so connection threads can finish. */
void sse_stream_close_all(sse_registry *reg);
