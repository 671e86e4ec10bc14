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
