/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * `sandboxctl serve`: an episode service for RL training loops. A JSON API
 * on 127.0.0.1 (or a 0600 unix socket), guarded by a per-service token,
 * hands out episodes; each is one sbx_run through the usual lifecycle
 * (prepare → launch, or launch on a warm sandbox → finish). A warm pool
 * keeps sandboxes started ahead of demand, so a claim only copies the
 * task's files in. See docs/serve.md for the API.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/cleanup.h"
#include "sbx/error.h"

typedef struct sbx_serve sbx_serve;

/* One warm pool: image and how many started sandboxes to keep ready. */
typedef struct sbx_serve_pool_spec {
	const char *image;
	unsigned target;
} sbx_serve_pool_spec;

#define SBX_SERVE_OPTS_VERSION 1

/* Consecutive failures (warm starts, launches) that drain an engine, when others are left. */
#define SBX_SERVE_ENGINE_FAILS 3

typedef struct sbx_serve_opts {
	unsigned version;
	/* "127.0.0.1:PORT" (PORT 0: any free one; the host must be loopback) or "unix:PATH". */
	const char *listen;
	const sbx_serve_pool_spec *pools;
	size_t n_pools;
	unsigned max_episodes;	   /* live at once; 0: 64 */
	unsigned max_sandboxes;	   /* sandboxes without a task (/v1/sandboxes) at once; 0: 64 */
	uint32_t idle_ttl_s;	   /* a warm sandbox unclaimed this long is replaced; 0: 600 */
	uint32_t max_timeout_s;	   /* the longest episode timeout accepted; 0: 3600 */
	unsigned fill_concurrency; /* warm sandboxes started at once; 0: 2 */
	const char *engine;	   /* as sbx_run_opts.engine; when n_engines is 0 */
	/* Several engines (NULL entries: the default): a warm pool on each, claims
	 * from whichever has a fitting sandbox ready, cold starts on the least busy;
	 * one that fails SBX_SERVE_ENGINE_FAILS times in a row is drained. */
	const char *const *engines;
	size_t n_engines;
	const char *runs_dir;  /* NULL: "runs" */
	const char *tasks_dir; /* NULL: the default */
	bool test;	       /* label every sandbox as a test object */
	const char *grader;    /* sbx_run_opts.grader: grade each episode in a child */
	const char *token;     /* NULL: 128 random bits, hex */
	/* The OCI runtime of every sandbox, warm or cold (e.g. "runsc"); NULL: the engine's. */
	const char *runtime;
	/* --reuse N: episodes per warm sandbox, reset in place between them (0, 1: one). */
	uint32_t reuse;
	/* Every episode's image (any linux/amd64 image: see sbx_image_prepare_foreign);
	 * NULL: each task's (slim, or full for GUI tasks). */
	const char *image;
	/* Set (by a second signal) to cut sbx_serve_drain's grace short; may be NULL. */
	const volatile sig_atomic_t *hurry;
} sbx_serve_opts;

#define SBX_SERVE_OPTS_INIT                                                                        \
	{                                                                                          \
		.version = SBX_SERVE_OPTS_VERSION                                                  \
	}

/*
 * Starts listening and filling the pools (in the background). Returns at
 * once; the service runs on its own threads. Free with sbx_serve_free.
 */
int sbx_serve_start(sbx_serve **out, const sbx_serve_opts *opts, sbx_error *err);

/* "http://127.0.0.1:PORT/<token>" or "unix:PATH"; owned by s. */
const char *sbx_serve_url(const sbx_serve *s);
const char *sbx_serve_token(const sbx_serve *s);
/* "serve-<8 hex>": the prefix of the warm sandboxes' sandboxctl.run-id labels. */
const char *sbx_serve_id(const sbx_serve *s);

/* True once the pools hold their targets (or gave up trying for now). */
bool sbx_serve_pools_full(sbx_serve *s);

/*
 * Drains: refuses new episodes, gives the live ones grace_s to be finished
 * by their clients, then aborts the rest and removes every sandbox, warm
 * ones included. Returns the number of episodes aborted.
 */
unsigned sbx_serve_drain(sbx_serve *s, uint32_t grace_s);

/* Stops listening, drains with no grace when not drained yet, frees. Accepts NULL. */
void sbx_serve_free(sbx_serve *s);
SBX_DEFINE_CLEANUP(sbx_serve, sbx_serve_free)
