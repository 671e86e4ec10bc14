/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What lib/serve's files share. api.c and metrics.c are pure (no engine, no
 * sockets) so the unit test covers routing, validation and the metrics text;
 * warm_pool.c keeps the warm sandboxes; service.c owns episodes,
 * episode_answer.c writes their JSON; listen.c is the HTTP side
 * (libmicrohttpd).
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/error.h"
#include "sbx/run.h"
#include "sbx/warm.h"
#include "sbx/serve.h"

/* ---- api.c: routing, the token, request validation ---- */

typedef enum serve_route {
	SERVE_ROUTE_HEALTH = 1,
	SERVE_ROUTE_METRICS,
	SERVE_ROUTE_CREATE, /* POST /v1/episodes */
	SERVE_ROUTE_LIST,   /* GET /v1/episodes */
	SERVE_ROUTE_GET,    /* GET /v1/episodes/{id} */
	SERVE_ROUTE_FINISH, /* POST /v1/episodes/{id}/finish */
	SERVE_ROUTE_ABORT,  /* DELETE /v1/episodes/{id} */
	/* sandboxes.c: sandboxes without a task */
	SERVE_ROUTE_SBX_CREATE, /* POST /v1/sandboxes */
	SERVE_ROUTE_SBX_LIST,	/* GET /v1/sandboxes */
	SERVE_ROUTE_SBX_GET,	/* GET /v1/sandboxes/{id} */
	SERVE_ROUTE_SBX_DELETE, /* DELETE /v1/sandboxes/{id} */
	SERVE_ROUTE_SBX_EXEC,	/* POST /v1/sandboxes/{id}/exec */
	SERVE_ROUTE_SBX_FILES,	/* GET or PUT /v1/sandboxes/{id}/files?path= */
} serve_route;

#define SERVE_ID_MAX 128

/*
 * Maps method and path (token already stripped, query ignored) to a route;
 * id gets the episode id for the routes that name one. Returns the route,
 * or -404 (no such path) or -405 (the path exists, not with this method).
 */
int sbx_serve__route(const char *method, const char *path, char id[SERVE_ID_MAX + 1]);

/*
 * The token check: a path starting "/<token>/" (stripped: *rest points
 * after it, at the '/') or "Authorization: Bearer <token>" (*rest = path).
 * Compared in constant time. False when neither matches.
 */
bool sbx_serve__authorized(const char *token, const char *path, const char *authorization,
			   const char **rest);

/* Constant-time equality of two NUL-terminated strings (time depends on b's length only). */
bool sbx_serve__token_equal(const char *a, const char *b);

typedef struct serve_create_req {
	char *task;
	bool seeded;
	uint64_t seed;
	uint32_t timeout_s; /* 0: the task's */
	char *tags_json;    /* a JSON object's text, or NULL */
} serve_create_req;

#define SERVE_BODY_MAX (64 * 1024)
#define SERVE_TAGS_MAX 32

/*
 * Parses POST /v1/episodes's body: {"task": name (required), "seed":
 * integer >= 0, "timeout": 1..max_timeout_s seconds, "tags": {string:
 * string|number|bool}, at most SERVE_TAGS_MAX}. Unknown keys are refused
 * (a typo should not silently mean a default). -EINVAL with a message on
 * a bad body. Free with sbx_serve__create_req_clear.
 */
int sbx_serve__parse_create(const char *body, size_t len, uint32_t max_timeout_s,
			    serve_create_req *out, sbx_error *err);
void sbx_serve__create_req_clear(serve_create_req *r);

/*
 * The body cap for a request to path (after the token): SERVE_BODY_MAX, but
 * 100 MiB for /v1/sandboxes/{id}/files and 144 MiB for .../exec (sandbox_io.c).
 */
size_t sbx_serve__body_max(const char *path);

/* {"error": msg} as malloc'd text. */
char *sbx_serve__error_json(const char *msg);

/* ---- metrics.c ---- */

/* Claim latency buckets, seconds (le=...), then +Inf. */
#define SERVE_LATENCY_BUCKETS 12
extern const double sbx_serve__latency_le[SERVE_LATENCY_BUCKETS];

typedef struct serve_pool_gauge {
	const char *image;
	unsigned size, target, filling;
} serve_pool_gauge;

typedef struct serve_engine_gauge {
	const char *url; /* NULL: the default */
	unsigned live, warm;
	bool drained;
	unsigned failures; /* in a row: its last warm start or launch failed when > 0 */
} serve_engine_gauge;

typedef struct serve_metrics {
	uint64_t claims_warm, claims_cold;
	uint64_t cold_starts;
	uint64_t claim_failures;
	uint64_t latency_counts[SERVE_LATENCY_BUCKETS + 1]; /* per bucket, not cumulative */
	double latency_sum_s;
	uint64_t finished[SBX_RUN_SANDBOX_FAILED + 1]; /* by sbx_run_status */
	unsigned live;				       /* claiming or running */
	uint64_t engine_errors;			       /* warm starts and launches that failed */
	uint64_t warm_started, warm_retired;
	uint64_t resets, reset_retired; /* --reuse: clean resets; sandboxes a reset retired */
	uint64_t unauthorized;
	uint64_t conn_evicted, conn_timed_out; /* the listener's guard (sbx/connguard.h) */
	/* sandboxes.c: sandboxes without a task */
	unsigned sandboxes;	       /* creating or live */
	uint64_t sandboxes_created[2]; /* [0] cold, [1] warm */
	uint64_t sandboxes_removed[3]; /* by enum serve_sbx_end */
	uint64_t sandbox_execs, sandbox_exec_timeouts;
	uint64_t sandbox_reads, sandbox_writes;
	uint64_t sandboxes_refused; /* creates over --max-sandboxes (429) */
} serve_metrics;

/* Why a sandbox without a task was removed (serve_metrics.sandboxes_removed). */
enum serve_sbx_end { SERVE_SBX_DELETED, SERVE_SBX_EXPIRED, SERVE_SBX_SHUTDOWN };

void sbx_serve__metrics_observe_claim(serve_metrics *m, double seconds, bool warm);

/* The Prometheus text format (version 0.0.4). malloc'd, NULL on OOM. */
char *sbx_serve__metrics_text(const serve_metrics *m, const serve_pool_gauge *pools, size_t n_pools,
			      const serve_engine_gauge *engines, size_t n_engines);

/* ---- pool.c ---- */

typedef struct serve_pool serve_pool;

typedef struct serve_pool_opts {
	const sbx_serve_pool_spec *pools;
	size_t n_pools;
	unsigned concurrency;
	uint32_t idle_ttl_s, max_timeout_s;
	const char *const *engines; /* NULL entries: the default engine */
	size_t n_engines;	    /* at least 1 */
	const char *service_id;	    /* prefix of the sandboxes' run-id labels */
	const char *runtime;	    /* NULL: the engine's default */
	bool test;
	uint32_t reuse;		/* episodes per warm sandbox (--reuse; 0, 1: one) */
	serve_metrics *metrics; /* counters, updated under lock */
	pthread_mutex_t *lock;	/* guards metrics */
	/* Tests and benchmarks only: the warm sandboxes' backend (NULL: Docker). */
	sbx_run_backend_fn backend;
	void *backend_userdata;
} serve_pool_opts;

int sbx_serve__pool_new(serve_pool **out, const serve_pool_opts *o, sbx_error *err);

/*
 * A warm sandbox that fits run (sbx_run_warm_fits), removed from the pool
 * (the fillers start a replacement), or NULL when none. On one, *engine is
 * its engine, counted as running an episode until sbx_serve__pool_end.
 */
sbx_warm *sbx_serve__pool_take(serve_pool *p, const sbx_run *run, size_t *engine);

/* As sbx_serve__pool_take, for any test of fitness (a sandbox without a task). */
typedef bool (*serve_fit_fn)(const sbx_warm *w, const void *arg);
sbx_warm *sbx_serve__pool_take_fit(serve_pool *p, serve_fit_fn fits, const void *arg,
				   size_t *engine);

/*
 * After a /v1/sandboxes sandbox's DELETE: whether the pool takes w back
 * once reset (reuse left, its image pooled on engine, not stopping or
 * drained, a PID 1 deadline as long as a filler's, fewer than max (at
 * least the target) of its image ready or coming back). True: reset it, then end with resetting
 * true; creates meanwhile wait for it (sbx_serve__pool_wait_back).
 */
bool sbx_serve__pool_reset_begin(serve_pool *p, size_t engine, const sbx_warm *w, unsigned max);

/*
 * A /v1/sandboxes sandbox on engine ended: w (reset clean) into its
 * image's pool, past the target too, or NULL when it was removed (taken
 * here either way); resetting as sbx_serve__pool_reset_begin said.
 */
void sbx_serve__pool_end_sandbox(serve_pool *p, size_t engine, bool engine_failed,
				 const char *image, bool resetting, sbx_warm *w);

/*
 * Waits (until until_ms, monotonic) for a change while a sandbox of image
 * is being reset to come back: true when one was (take again), false when
 * none is or the time is up (start cold).
 */
bool sbx_serve__pool_wait_back(serve_pool *p, const char *image, int64_t until_ms);

/* The life a warm sandbox's PID 1 is given (idle TTL + the longest use + a grace), seconds. */
uint32_t sbx_serve__pool_ttl_s(const serve_pool *p);

/* The engine for a cold start: the least busy not drained. */
size_t sbx_serve__pool_cold_engine(serve_pool *p);
/* Its URL (NULL: the default), owned by the pool. */
const char *sbx_serve__pool_engine_url(serve_pool *p, size_t engine);

/*
 * An episode starts (cold) on engine / ended there; engine_failed counts
 * toward draining it. run (finished, or NULL): with --reuse, its sandbox,
 * reset clean (sbx_run_take_warm), goes back to the pool for its next
 * episode; a retired one is counted.
 */
void sbx_serve__pool_begin(serve_pool *p, size_t engine);
void sbx_serve__pool_end(serve_pool *p, size_t engine, bool engine_failed, sbx_run *run);

/* Per-image gauges for /metrics, summed over the engines; *out is malloc'd, images owned by the
 * pool. */
size_t sbx_serve__pool_gauges(serve_pool *p, serve_pool_gauge **out);
/* Per-engine gauges; *out is malloc'd, URLs owned by the pool. */
size_t sbx_serve__pool_engine_gauges(serve_pool *p, serve_engine_gauge **out);

bool sbx_serve__pool_full(serve_pool *p);

/* Stops the fillers and removes every warm sandbox. Accepts NULL. */
void sbx_serve__pool_free(serve_pool *p);
