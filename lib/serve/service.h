/* SPDX-License-Identifier: MIT */
#pragma once

/* The service object, shared by service.c (episodes) and listen.c (HTTP). */

#include <microhttpd.h>
#include <signal.h>

#include "sbx/connguard.h"
#include "serve-internal.h"

typedef enum episode_state {
	EP_RUNNING = 1, /* claimed, the agent works */
	EP_FINISHING,	/* someone (client, deadline, drain) is finishing it */
	EP_DONE,	/* result_json holds the answer */
} episode_state;

typedef struct episode {
	char id[SERVE_ID_MAX + 1]; /* the run id */
	char *task;
	size_t engine;	  /* index in the pool's engines */
	char *engine_url; /* its URL, "default" for the default */
	sbx_run *run;	  /* until done */
	episode_state state;
	sbx_run_status status; /* once done */
	unsigned refs;	       /* threads waiting on it: not evicted meanwhile */
	int64_t deadline_ms;   /* monotonic */
	double claim_ms;
	char *claim_json, *result_json, *tags_json;
} episode;

/* A sandbox without a task (sandboxes.c). */
typedef struct serve_sandbox serve_sandbox;

struct sbx_serve {
	sbx_serve_opts o;
	char id[32];	/* "serve-<8 hex>": the warm sandboxes' label prefix */
	char token[65]; /* hex */
	char *url;
	unsigned max_episodes;
	uint32_t max_timeout_s;
	pthread_mutex_t lock;
	pthread_cond_t done; /* an episode became EP_DONE */
	serve_metrics m;
	serve_pool *pool;
	episode **eps;
	size_t n_eps, cap_eps;
	bool draining, drained;
	volatile sig_atomic_t stop; /* the runs' interrupted flag */
	pthread_t reaper;
	bool reaper_started, reaper_stop;
	struct MHD_Daemon *mhd;
	sbx_connguard *guard; /* slots and the head deadline of mhd's connections */
	int listen_fd;
	char *unix_path;
	/* openenv.c's WebSocket sessions, under lock; ws_gone signals one ended */
	struct openenv_conn *ws;
	unsigned n_ws;
	bool ws_stop;
	pthread_cond_t ws_gone;
	/* sandboxes.c's sandboxes without a task, under lock; sbx_gone signals a release */
	serve_sandbox **sbs;
	size_t n_sbs, cap_sbs;
	unsigned max_sandboxes;
	uint64_t sbx_seq;
	unsigned sbx_ending;	 /* deleted, expired or shut down, not yet reset or removed */
	pthread_cond_t sbx_gone; /* a request let go of a sandbox, or one ended */
	unsigned transfers;	 /* large sandbox requests under way (sandbox_io.c) */
	pthread_cond_t transfer_done;
};

/* answer.c: malloc'd JSON text, NULL on OOM. */
char *sbx_serve__claim_answer(const episode *e, sbx_run *run);
char *sbx_serve__result_answer(const episode *e, const sbx_run_result *r);

/* listen.c */
int sbx_serve__listen(sbx_serve *s, const char *spec, sbx_error *err);
void sbx_serve__unlisten(sbx_serve *s);

/* service.c: one authorized request; *out is the malloc'd JSON (or text) answer. */
int sbx_serve__handle(sbx_serve *s, int route, const char *id, const char *body, size_t len,
		      char **out);
void sbx_serve__unauthorized(sbx_serve *s);

/*
 * sandboxes.c: one /v1/sandboxes request (route SERVE_ROUTE_SBX_*), its
 * answer queued on c (files answer raw bytes).
 */
enum MHD_Result sbx_serve__sandbox_request(sbx_serve *s, struct MHD_Connection *c, int route,
					   const char *id, const char *method, const char *body,
					   size_t len);
/*
 * A large /v1/sandboxes request (any files request, an exec whose body is
 * over 1 MiB) takes one of SERVE_TRANSFERS_MAX slots at its head, before its
 * body is read, waiting up to 30 s for one: what the service buffers is
 * bounded whatever the clients send. False for a request that needs none
 * (*taken false) and when taken; true when none came free (answer 503).
 */
#define SERVE_TRANSFERS_MAX 4
bool sbx_serve__transfer_busy(sbx_serve *s, const char *method, const char *path,
			      unsigned long long declared, bool *taken);
void sbx_serve__transfer_end(sbx_serve *s);

/* Removes the sandboxes past their expiry (the reaper, every tick). */
void sbx_serve__sandboxes_expire(sbx_serve *s);
/* Removes every sandbox (drain), waiting for their requests to end. */
void sbx_serve__sandboxes_stop(sbx_serve *s);

/* True while episode id is claimed and not yet being finished. */
bool sbx_serve__episode_running(sbx_serve *s, const char *id);
