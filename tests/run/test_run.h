/* SPDX-License-Identifier: MIT */
/*
 * What the test-run files share: their includes, the fake in-container
 * server and raw client (test_run.c), and each file's cases.
 */
#pragma once

#include "check_main.h"
#include "test_files.h"
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "http_framing.h"
#include "rundir.h"
#include "sbx/json.h"
#include "sbx/relay.h"
#include "sbx/run.h"
#include "sbx/stream.h"
#include "transcript.h"

/* An http_relay_body sink appending to the sbx_buf ud. */
int append_fn(const char *d, size_t n, void *ud);

/* ---- a fake in-container server ---- */

typedef struct fake {
	char path[300];
	int lfd;
	pthread_t t;
	int conns;	 /* connections accepted */
	int close_after; /* close a connection after this many exchanges (0: never) */
	volatile int running;
} fake;

/* Listens on mcp.sock in the scratch directory, answering on its own threads. */
void fake_start(fake *f);
void fake_stop(fake *f);
/* A relay's open callback: a new connection to the fake f (ud). */
int fake_open(sbx_stream **out, void *ud, sbx_error *err);

/* A raw HTTP client: connects to the loopback port, sends req, reads one response. */
int client_connect(uint16_t port);
int exchange_raw(sbx_stream *s, http_reader *r, const char *req, sbx_buf *body, http_head *h);

/* A warmed relay to the fake f, recording to transcript (NULL: none). */
sbx_relay *relay_on(fake *f, const char *transcript);

/* Each file's cases, added to the suite in this order. */
void run_http_cases(Suite *s);	 /* test_run_http.c */
void run_relay_cases(Suite *s);	 /* test_run_relay.c */
void run_files_cases(Suite *s);	 /* test_run_files.c */
void run_agents_cases(Suite *s); /* test_run_agents.c */
