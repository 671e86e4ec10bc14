/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The host-side relay: the agent-facing endpoint on host loopback. It accepts
 * HTTP/1.1 on 127.0.0.1:<port> and forwards each request over a stream to the
 * in-container server (a docker-exec'd `sandbox-bridge` in production), so the
 * sandbox itself needs no network. Streams are pooled and kept warm, so a
 * request costs one round trip, not one exec. Streaming responses (SSE for
 * /mcp and /mcp/sse) are passed through as they arrive. Every message in
 * either direction can be recorded to a transcript.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/buf.h"
#include "sbx/error.h"
#include "sbx/stream.h"

typedef struct sbx_relay sbx_relay;

/* Opens a new stream to the server. Called from several threads. */
typedef int (*sbx_relay_open_fn)(sbx_stream **out, void *userdata, sbx_error *err);

#define SBX_RELAY_OPTS_VERSION 1

typedef struct sbx_relay_opts {
	unsigned version;
	const char *bind_addr; /* default "127.0.0.1"; only loopback addresses are accepted */
	uint16_t port;	       /* 0: the kernel picks one */
	sbx_relay_open_fn open;
	void *open_userdata;
	const char *transcript_path; /* NULL: record nothing */
	unsigned warm;		     /* streams kept open and idle ahead of need (default 2) */
	unsigned max_clients;	     /* concurrent agent connections (default 64) */
	int io_timeout_ms;	     /* longest silence inside one exchange (default 15 min) */
	/*
	 * When set (1-64 URL-safe bytes), every request must carry it: as the
	 * first path segment (/<token>/mcp, stripped before forwarding) or as
	 * `Authorization: Bearer <token>`; anything else gets 401. Other local
	 * users and other runs' agents can reach 127.0.0.1, not this secret.
	 */
	const char *token;
	/*
	 * Bounds on what agent connections may hold. Past max_clients, a new
	 * connection evicts the one idle longest (tokenless ones first;
	 * never one waiting on the server). A head must arrive within
	 * head_timeout_ms of its first byte (and a connection's first head
	 * within head_timeout_ms of the connect), a request body within
	 * body_timeout_ms. Request bodies are buffered; past 1 MiB each they
	 * share max_buffered bytes, and a request that would go past it gets
	 * 503. 0 selects the default (10 s, 30 s, 128 MiB).
	 */
	int head_timeout_ms;
	int body_timeout_ms;
	size_t max_buffered;
	/*
	 * When set, listen on this unix socket instead of TCP: created 0600
	 * (bound in a private directory, then renamed into place), an existing
	 * socket there replaced, anything else refused; removed by
	 * sbx_relay_free. Host and Origin are not checked (no browser reaches
	 * a unix socket); the token still is.
	 */
	const char *unix_path;
	/*
	 * When set, sbx_relay_free hands its idle pooled streams (usable, no
	 * exchange in flight) to give_back instead of closing them: a sandbox
	 * reused for another episode keeps its bridges (an exec each).
	 */
	void (*give_back)(sbx_stream *s, void *userdata);
} sbx_relay_opts;

#define SBX_RELAY_OPTS_INIT                                                                        \
	{                                                                                          \
		.version = SBX_RELAY_OPTS_VERSION, .bind_addr = "127.0.0.1", .warm = 2,            \
		.max_clients = 64, .io_timeout_ms = 15 * 60 * 1000                                 \
	}

/*
 * Binds the listener and starts serving. Warming starts only with
 * sbx_relay_warm (the server may not be up yet). *out is freed with
 * sbx_relay_free.
 */
int sbx_relay_start(sbx_relay **out, const sbx_relay_opts *opts, sbx_error *err);

/* The bound port (0 on a unix socket). */
uint16_t sbx_relay_port(const sbx_relay *r);

/* Starts keeping opts.warm idle streams ready. */
void sbx_relay_warm(sbx_relay *r);

/* Stops accepting new agent connections (existing exchanges finish). */
void sbx_relay_close_listener(sbx_relay *r);

typedef struct sbx_relay_response {
	int status;
	char *content_type; /* may be NULL */
	char *session_id;   /* Mcp-Session-Id, may be NULL */
	bool reloaded;	    /* X-Reloaded: true (GET /control/screenshot?show_saved=1) */
	bool window_shown;  /* X-Window-Shown: true (GET /control/screenshot?window=…) */
	char *body;	    /* NUL-terminated; for SSE, the raw event stream */
	size_t len;
} sbx_relay_response;

void sbx_relay_response_free(sbx_relay_response *resp);

/*
 * One bodyless GET of path on s, outside any relay (a warm sandbox's
 * readiness check, before it has one), its body read and dropped.
 * *status is the answer's. Returns 1 when s is left usable for another
 * request (keep-alive, framed body), 0 when not, <0 on error.
 */
int sbx_relay_stream_get(sbx_stream *s, const char *path, int timeout_ms, int *status,
			 sbx_error *err);

/*
 * As sbx_relay_stream_get, any method: body (len bytes, NULL: none) sent
 * with its Content-Length, the answer's body appended to answer (NULL:
 * dropped; past answer's max: -EFBIG). *status is the answer's. 1 when s
 * is left usable for another request, 0 when not, <0 on error.
 */
int sbx_relay_stream_request(sbx_stream *s, const char *method, const char *path, const void *body,
			     size_t len, int timeout_ms, int *status, sbx_buf *answer,
			     sbx_error *err);

/*
 * Sends one request from the host itself (readiness and status probes, the
 * oracle's complete, `sandboxctl mcp`) through the pool and reads the whole
 * response (at most 64 MiB). extra_headers holds complete "Name: value\r\n"
 * lines or is NULL. record puts both messages in the transcript.
 * timeout_ms bounds the whole exchange, from the first byte sent to the
 * last read (-ETIMEDOUT past it), however the server paces its answer; <= 0:
 * no bound. On success *out is filled; free it with sbx_relay_response_free.
 */
int sbx_relay_request(sbx_relay *r, const char *method, const char *path, const char *extra_headers,
		      const char *body, size_t len, bool record, int timeout_ms,
		      sbx_relay_response *out, sbx_error *err);

typedef struct sbx_relay_stats {
	unsigned long requests;	      /* exchanges completed */
	unsigned long streams_opened; /* new streams (each one a docker exec) */
	unsigned long reused;	      /* exchanges served on a pooled stream */
	unsigned long transcript_lines;
	unsigned long unauthorized; /* requests refused for want of the token (401) */
	unsigned long forbidden;    /* agent requests for the host's /control API (403) */
	unsigned long evicted;	    /* connections closed to make room for a new one */
	unsigned long timed_out;    /* connections closed: a head or body too slow */
	unsigned long over_budget;  /* requests refused: max_buffered reached (503) */
	size_t buffered_peak;	    /* most request body bytes held past the free 1 MiB each */
} sbx_relay_stats;

void sbx_relay_get_stats(sbx_relay *r, sbx_relay_stats *out);

/*
 * Stops everything: the listener, the warmer, open agent connections (closed),
 * waiting exchanges (cancelled), pooled streams; flushes the transcript.
 * Waits for the connection threads to end. Accepts NULL.
 */
void sbx_relay_free(sbx_relay *r);
