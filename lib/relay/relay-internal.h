/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the relay's files share. relay_core.c: the stream pool, one
 * exchange with the server, bodies into the transcript, the host's own
 * requests. relay.c: the listener, agent connections' threads, start and
 * stop. relay_client.c: an agent connection's requests.
 * relay_route.c: the paths an agent may not ask for.
 */

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "http_framing.h"
#include "sbx/clock.h"
#include "sbx/relay.h"
#include "transcript.h"

#define POOL_MAX 16
/*
 * An exec opened while an agent's request is in flight takes the CPU that
 * request needs (measured: a first initialize 5 -> 60 ms on 2 cores), so the
 * warmer waits for it, but no longer than this (an SSE stream stays open).
 */
#define WARM_DEFER_MS	  250
#define REQUEST_BODY_MAX  (64 * 1024 * 1024)
#define RESPONSE_BODY_MAX (64 * 1024 * 1024)
#define CLIENT_IDLE_MS	  (5 * 60 * 1000)
/* Request bodies up to this size are not counted against opts.max_buffered. */
#define BODY_FREE_BYTES (1024 * 1024)

/* One agent connection's place in the table; the relay evicts by it. */
typedef struct client_slot {
	int fd;	       /* -1 when free */
	unsigned conn; /* the connection holding the slot */
	int64_t since; /* CLOCK_MONOTONIC ms: when its current wait began */
	bool busy;     /* in an exchange with the server: never evicted */
	bool trusted;  /* it has presented the token: evicted last */
} client_slot;

struct sbx_relay {
	sbx_relay_opts o;
	char token[65]; /* o.token points here; "" when none */
	int listen_fd;
	char *unix_path; /* the socket sbx_relay_free removes; NULL on TCP */
	int wake[2];
	uint16_t port;
	sbx_transcript *transcript;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop; /* read atomically by readers */
	bool warming;
	sbx_stream *idle[POOL_MAX];
	size_t n_idle;
	unsigned opening;	  /* streams being opened by the warmer */
	unsigned agent_exchanges; /* agent requests waiting on the server now */
	int64_t defer_until;	  /* the warmer waits until then while one is in flight */
	client_slot *clients;	  /* o.max_clients of them */
	size_t buffered;	  /* request body bytes held past BODY_FREE_BYTES each */
	unsigned n_threads;
	unsigned next_conn;
	sbx_relay_stats stats;

	pthread_t accept_thread, warm_thread;
	bool accept_started, warm_started;
};

/* Consumes the response; returns 1 when the server stream stays usable, 0 if not, <0 on error. */
typedef int (*sbx_relay__response_fn)(http_reader *sr, http_head *resp, void *userdata,
				      sbx_error *err);

/*
 * Sends head and body over a pooled stream (a fresh one if a reused stream
 * turns out closed) and hands the response to fn.
 */
int sbx_relay__exchange(sbx_relay *r, const char *head, size_t head_len, const char *body,
			size_t body_len, const char *method, int timeout_ms, int64_t until,
			sbx_relay__response_fn fn, void *userdata, sbx_error *err);

/*
 * relay_route.c: true when an agent's request target reaches the server's
 * control API (a "control" segment, however spelt); the relay answers 403.
 */
bool sbx_relay__control_target(const char *target);
/* An agent's exchange begins or ends (the warmer defers to it). */
void sbx_relay__agent_exchange(sbx_relay *r, bool begins);

/* Keeps opts.warm idle streams open; the relay's warmer thread. */
void *sbx_relay__warm_main(void *arg);

/* An agent connection: its fd and the slot it holds (conn: the slot's generation). */
typedef struct client {
	sbx_relay *r;
	int fd;
	int slot;
	unsigned conn;
} client;

/* relay_client.c: serves c's requests on cs until it closes, is evicted or the relay stops. */
void sbx_relay__serve_client(client *c, sbx_stream *cs);

/* A body on its way: recorded to the transcript (SSE event by event) and/or kept. */
typedef struct capture {
	sbx_relay *r;
	unsigned conn;
	const char *method, *path;
	const char *version; /* the request's MCP-Protocol-Version, for the transcript */
	int status;
	bool sse;
	sbx_buf buf; /* whole body, or the pending part of an SSE stream */
	bool over;
	bool record; /* into the transcript */
	bool keep;   /* keep the whole body (host requests) */
	sbx_buf all;
} capture;

/* An http_body_fn feeding a capture. */
int sbx_relay__capture_fn(const char *data, size_t n, void *userdata);

/* Records what is left of the body. */
void sbx_relay__capture_finish(capture *c);

/* True when the response is an event stream. */
bool sbx_relay__is_sse(const http_head *h);
