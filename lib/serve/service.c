/* SPDX-License-Identifier: MIT */
/*
 * The episodes: each is one sbx_run, claimed on a warm sandbox when one
 * fits (sbx_run_launch_warm) or launched cold (sbx_run_launch), finished by
 * its client, by the deadline (here) or aborted, always by sbx_run_finish.
 * One lock guards the table and the counters; the slow steps (launch,
 * finish) run outside it, an episode's state saying who owns it meanwhile.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "serve-internal.h"
#include "sandboxes.h"
#include "service.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/json.h"
#include "sbx/log.h"

#define DEFAULT_MAX_EPISODES 64
#define DEFAULT_IDLE_TTL_S   600
#define DEFAULT_MAX_TIMEOUT  3600
#define DONE_KEPT	     64 /* finished episodes whose answer a late finish can still read */
#define REAPER_TICK_MS	     50

static const char *state_name(episode_state s)
{
	switch (s) {
	case EP_RUNNING:
		return "running";
	case EP_FINISHING:
		return "finishing";
	case EP_DONE:
		return "done";
	}
	return "?";
}

/* ---- the table (under s->lock) ---- */

static episode *find(sbx_serve *s, const char *id)
{
	for (size_t i = 0; i < s->n_eps; i++)
		if (strcmp(s->eps[i]->id, id) == 0)
			return s->eps[i];
	return NULL;
}

static void episode_free(episode *e)
{
	if (!e)
		return;
	sbx_run_free(e->run);
	sbx_free_all(e->claim_json, e->result_json, e->tags_json, e->task, e->engine_url);
	free(e);
}

/* Drops the oldest finished episodes nobody waits on, past DONE_KEPT. */
static void evict(sbx_serve *s)
{
	size_t done = 0;

	for (size_t i = 0; i < s->n_eps; i++)
		done += s->eps[i]->state == EP_DONE;
	for (size_t i = 0; i < s->n_eps && done > DONE_KEPT;) {
		episode *e = s->eps[i];

		if (e->state != EP_DONE || e->refs > 0) {
			i++;
			continue;
		}
		memmove(&s->eps[i], &s->eps[i + 1], (s->n_eps - i - 1) * sizeof(*s->eps));
		s->n_eps--;
		done--;
		episode_free(e);
	}
}

static int add(sbx_serve *s, episode *e)
{
	if (s->n_eps == s->cap_eps) {
		size_t cap = s->cap_eps ? s->cap_eps * 2 : 64;
		episode **n = realloc(s->eps, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->eps = n;
		s->cap_eps = cap;
	}
	s->eps[s->n_eps++] = e;
	return 0;
}

static int reply(char **out, int status, const char *msg)
{
	*out = sbx_serve__error_json(msg);
	return status;
}

/* A claim that failed: no longer live, counted, and the error answered. */
static int claim_failed(sbx_serve *s, char **out, int status, const sbx_error *err)
{
	pthread_mutex_lock(&s->lock);
	s->m.live--;
	s->m.claim_failures++;
	pthread_mutex_unlock(&s->lock);
	return reply(out, status, sbx_error_message(err));
}

/* ---- claim ---- */

/*
 * A launch on engine that failed: finish records it (result.json) and
 * removes the sandbox; an infra error counts toward draining the engine.
 */
static void fail_launch(sbx_serve *s, sbx_run *run, size_t engine)
{
	sbx_error fe = SBX_ERROR_INIT;
	const sbx_run_result *res;

	sbx_run_finish(run, s->stop ? SBX_END_INTERRUPTED : SBX_END_NONE, &fe);
	res = sbx_run_get_result(run);
	pthread_mutex_lock(&s->lock);
	if (res->status == SBX_RUN_INFRA_ERROR)
		s->m.engine_errors++;
	s->m.finished[res->status]++;
	pthread_mutex_unlock(&s->lock);
	sbx_serve__pool_end(s->pool, engine, res->status == SBX_RUN_INFRA_ERROR && !s->stop, run);
}

/* Counts a new episode as live: 0, or the refusal's status (draining, full) with *out. */
static int admit(sbx_serve *s, char **out)
{
	bool draining, full;

	pthread_mutex_lock(&s->lock);
	draining = s->draining;
	full = !draining && s->m.live >= s->max_episodes;
	if (!draining && !full)
		s->m.live++;
	pthread_mutex_unlock(&s->lock);
	if (draining)
		return reply(out, 503, "the service is shutting down");
	if (full)
		return reply(out, 429, "--max-episodes episodes are live; finish one first");
	return 0;
}

static int create(sbx_serve *s, const char *body, size_t len, char **out)
{
	_cleanup_(sbx_serve__create_req_clear) serve_create_req req = {0};
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	sbx_run_opts ro = SBX_RUN_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	episode *e;
	sbx_warm *w;
	size_t engine;
	int64_t t0 = sbx_now_ms();
	double claim_s;
	int r;

	r = sbx_serve__parse_create(body, len, s->max_timeout_s, &req, &err);
	if (r < 0)
		return reply(out, 400, sbx_error_message(&err));
	r = admit(s, out);
	if (r)
		return r;

	ro.task = req.task;
	ro.tasks_dir = s->o.tasks_dir;
	ro.runs_dir = s->o.runs_dir;
	ro.image = s->o.image;
	ro.limits.timeout_s = req.timeout_s;
	ro.seeded = req.seeded;
	ro.seed = req.seed;
	ro.grader = s->o.grader;
	ro.test = s->o.test;
	/* As the pools', so a warm sandbox fits. */
	sbx_limits_set_runtime(&ro.limits, s->o.runtime);
	ro.image = s->o.image;
	/* The engine a cold start would use; a warm sandbox brings its own. */
	engine = sbx_serve__pool_cold_engine(s->pool);
	ro.engine = sbx_serve__pool_engine_url(s->pool, engine);
	ro.interrupted = &s->stop;
	r = sbx_run_prepare(&run, &ro, &err);
	if (r < 0) {
		return claim_failed(s, out, r == -ENOENT || r == -EINVAL ? 400 : 500, &err);
	}
	w = sbx_serve__pool_take(s->pool, run, &engine);
	if (w) {
		r = sbx_run_launch_warm(run, w, &err);
		if (r < 0 && !s->stop) {
			/*
			 * A warm sandbox can die while it waits (its engine restarted, the
			 * host ran out of memory): that attempt is recorded and the
			 * episode starts cold on a fresh run, so the client sees no error.
			 */
			sbx_log_warning("serve: warm claim failed: %s; starting cold",
					sbx_error_message(&err));
			fail_launch(s, run, engine);
			sbx_run_free(TAKE_PTR(run));
			sbx_error_clear(&err);
			engine = sbx_serve__pool_cold_engine(s->pool);
			ro.engine = sbx_serve__pool_engine_url(s->pool, engine);
			r = sbx_run_prepare(&run, &ro, &err);
			if (r < 0) {
				return claim_failed(s, out, 500, &err);
			}
			w = NULL;
		}
	}
	if (!w) {
		pthread_mutex_lock(&s->lock);
		s->m.cold_starts++;
		pthread_mutex_unlock(&s->lock);
		sbx_serve__pool_begin(s->pool, engine);
		r = sbx_run_launch(run, &err);
	}
	if (r < 0) {
		fail_launch(s, run, engine);
		return claim_failed(s, out, s->stop ? 503 : 502, &err);
	}
	claim_s = (double)(sbx_now_ms() - t0) / 1000.0;

	e = calloc(1, sizeof(*e));
	if (!e)
		goto oom;
	snprintf(e->id, sizeof(e->id), "%s", sbx_run_get_result(run)->run_id);
	e->task = strdup(sbx_run_get_task(run)->id);
	e->engine = engine;
	e->engine_url = strdup(sbx_serve__pool_engine_url(s->pool, engine)
				       ? sbx_serve__pool_engine_url(s->pool, engine)
				       : "default");
	e->tags_json = TAKE_PTR(req.tags_json);
	e->claim_ms = claim_s * 1000.0;
	e->deadline_ms =
		sbx_now_ms() + (int64_t)sbx_run_get_result(run)->limits.resolved.timeout_s * 1000;
	e->state = EP_RUNNING;
	e->claim_json = e->engine_url ? sbx_serve__claim_answer(e, run) : NULL;
	if (!e->task || !e->engine_url || !e->claim_json) {
		episode_free(e);
		goto oom;
	}
	e->run = TAKE_PTR(run);
	*out = strdup(e->claim_json);
	pthread_mutex_lock(&s->lock);
	sbx_serve__metrics_observe_claim(&s->m, claim_s, sbx_run_get_result(e->run)->warm);
	evict(s);
	if (!*out || add(s, e) < 0) {
		pthread_mutex_unlock(&s->lock);
		run = TAKE_PTR(e->run);
		episode_free(e);
		free(*out);
		goto oom;
	}
	pthread_mutex_unlock(&s->lock);
	return 201;
oom:
	if (run)
		sbx_run_finish(run, SBX_END_INTERRUPTED, NULL);
	sbx_serve__pool_end(s->pool, engine, false, run);
	pthread_mutex_lock(&s->lock);
	s->m.live--;
	pthread_mutex_unlock(&s->lock);
	return reply(out, 500, "out of memory");
}

/* ---- finish ---- */

/*
 * Ends e (which the caller moved to EP_FINISHING) with end, or with what the
 * server says when end is NONE: complete_task, else the client's finish.
 * Runs unlocked; leaves e EP_DONE with its answer.
 */
static void finish_episode(sbx_serve *s, episode *e, sbx_run_end end)
{
	sbx_error err = SBX_ERROR_INIT;
	const sbx_run_result *r;
	sbx_run *run;
	char *answer;

	if (end == SBX_END_NONE) {
		end = sbx_run_poll(e->run);
		if (end == SBX_END_NONE)
			end = SBX_END_CLIENT_EOF; /* the client ended it: graded as it stands */
	}
	if (sbx_run_finish(e->run, end, &err) < 0)
		sbx_log_warning("serve: episode '%s': %s", e->id, sbx_error_message(&err));
	r = sbx_run_get_result(e->run);
	answer = sbx_serve__result_answer(e, r);
	pthread_mutex_lock(&s->lock);
	e->result_json = answer;
	e->status = r->status;
	s->m.finished[r->status]++;
	if (r->status == SBX_RUN_INFRA_ERROR)
		s->m.engine_errors++;
	s->m.live--;
	run = TAKE_PTR(e->run);
	e->state = EP_DONE;
	pthread_cond_broadcast(&s->done);
	pthread_mutex_unlock(&s->lock);
	sbx_serve__pool_end(s->pool, e->engine,
			    r->status == SBX_RUN_INFRA_ERROR && end != SBX_END_INTERRUPTED, run);
	sbx_run_free(run); /* the sandbox is gone already; this frees the rest */
	/*
	 * An episode's buffers are allocated on the threads that claimed,
	 * filled and finished it, so the free memory is spread over glibc's
	 * per-thread arenas and a long-lived service's RSS creeps up with
	 * nothing leaked (the soak saw +10% over 250 episodes under load).
	 * Give it back: a few hundred microseconds against a ~300 ms episode.
	 */
	malloc_trim(0);
}

/* The episode id with s->lock held, or NULL (and the lock not held). */
static episode *lock_find(sbx_serve *s, const char *id)
{
	episode *e;

	pthread_mutex_lock(&s->lock);
	e = find(s, id);
	if (!e)
		pthread_mutex_unlock(&s->lock);
	return e;
}

/* finish or abort by a client: 200 with the result (the kept one when already done). */
static int end_by_client(sbx_serve *s, const char *id, bool abort, char **out)
{
	episode *e;

	e = lock_find(s, id);
	if (!e)
		return reply(out, 404, "no such episode");
	if (e->state == EP_RUNNING) {
		e->state = EP_FINISHING;
		e->refs++;
		pthread_mutex_unlock(&s->lock);
		finish_episode(s, e, abort ? SBX_END_INTERRUPTED : SBX_END_NONE);
		pthread_mutex_lock(&s->lock);
		e->refs--;
	} else {
		e->refs++;
		while (e->state != EP_DONE)
			pthread_cond_wait(&s->done, &s->lock);
		e->refs--;
	}
	*out = e->result_json ? strdup(e->result_json) : NULL;
	pthread_mutex_unlock(&s->lock);
	return *out ? 200 : reply(out, 500, "out of memory");
}

static int show(sbx_serve *s, const char *id, char **out)
{
	_cleanup_json_ cJSON *o = NULL;
	episode *e;

	e = lock_find(s, id);
	if (!e)
		return reply(out, 404, "no such episode");
	o = cJSON_Parse(e->claim_json);
	if (o) {
		cJSON_AddStringToObject(o, "state", state_name(e->state));
		if (e->state == EP_DONE && e->result_json)
			cJSON_AddItemToObject(o, "result", cJSON_Parse(e->result_json));
	}
	pthread_mutex_unlock(&s->lock);
	*out = o ? cJSON_PrintUnformatted(o) : NULL;
	return *out ? 200 : reply(out, 500, "out of memory");
}

static int list(sbx_serve *s, char **out)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	cJSON *a = o ? cJSON_AddArrayToObject(o, "episodes") : NULL;

	if (!a)
		return reply(out, 500, "out of memory");
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_eps; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddItemToArray(a, x);
		cJSON_AddStringToObject(x, "id", s->eps[i]->id);
		cJSON_AddStringToObject(x, "task", s->eps[i]->task);
		cJSON_AddStringToObject(x, "state", state_name(s->eps[i]->state));
		if (s->eps[i]->state == EP_DONE)
			cJSON_AddStringToObject(x, "status",
						sbx_run_status_name(s->eps[i]->status));
	}
	pthread_mutex_unlock(&s->lock);
	*out = cJSON_PrintUnformatted(o);
	return *out ? 200 : reply(out, 500, "out of memory");
}

/*
 * "ok"; "degraded" while an engine is down (its last warm start or launch
 * failed, or it is drained): still serving, on what is left; "draining" (503)
 * once stopping. engines_down lists the engines down ("default": the default).
 */
static int health(sbx_serve *s, char **out)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	_cleanup_free_ serve_engine_gauge *eg = NULL;
	size_t n_eg = s->pool ? sbx_serve__pool_engine_gauges(s->pool, &eg) : 0;
	cJSON *down = cJSON_CreateArray();
	unsigned live, sandboxes;
	bool draining;

	cJSON_AddItemToObject(o, "engines_down", down);
	for (size_t i = 0; i < n_eg; i++)
		if (eg[i].drained || eg[i].failures > 0)
			cJSON_AddItemToArray(down,
					     cJSON_CreateString(eg[i].url ? eg[i].url : "default"));
	pthread_mutex_lock(&s->lock);
	live = s->m.live;
	sandboxes = s->m.sandboxes;
	draining = s->draining;
	pthread_mutex_unlock(&s->lock);
	cJSON_AddStringToObject(o, "status",
				draining		       ? "draining"
				: cJSON_GetArraySize(down) > 0 ? "degraded"
							       : "ok");
	cJSON_AddNumberToObject(o, "live_episodes", live);
	cJSON_AddNumberToObject(o, "max_episodes", s->max_episodes);
	cJSON_AddNumberToObject(o, "live_sandboxes", sandboxes);
	cJSON_AddNumberToObject(o, "max_sandboxes", s->max_sandboxes);
	cJSON_AddBoolToObject(o, "pools_full", !s->pool || sbx_serve__pool_full(s->pool));
	*out = cJSON_PrintUnformatted(o);
	return *out ? (draining ? 503 : 200) : reply(out, 500, "out of memory");
}

static int metrics(sbx_serve *s, char **out)
{
	_cleanup_free_ serve_pool_gauge *g = NULL;
	_cleanup_free_ serve_engine_gauge *eg = NULL;
	size_t n = s->pool ? sbx_serve__pool_gauges(s->pool, &g) : 0;
	size_t n_eg = s->pool ? sbx_serve__pool_engine_gauges(s->pool, &eg) : 0;
	serve_metrics m;

	pthread_mutex_lock(&s->lock);
	m = s->m;
	pthread_mutex_unlock(&s->lock);
	if (s->guard) {
		sbx_connguard_stats cs = sbx_connguard_get_stats(s->guard);

		m.conn_evicted = cs.evicted;
		m.conn_timed_out = cs.timed_out;
	}
	*out = sbx_serve__metrics_text(&m, g, n, eg, n_eg);
	return *out ? 200 : reply(out, 500, "out of memory");
}

int sbx_serve__handle(sbx_serve *s, int route, const char *id, const char *body, size_t len,
		      char **out)
{
	switch (route) {
	case SERVE_ROUTE_HEALTH:
		return health(s, out);
	case SERVE_ROUTE_METRICS:
		return metrics(s, out);
	case SERVE_ROUTE_CREATE:
		return create(s, body ? body : "", len, out);
	case SERVE_ROUTE_LIST:
		return list(s, out);
	case SERVE_ROUTE_GET:
		return show(s, id, out);
	case SERVE_ROUTE_FINISH:
		return end_by_client(s, id, false, out);
	case SERVE_ROUTE_ABORT:
		return end_by_client(s, id, true, out);
	}
	return reply(out, 404, "no such route");
}

bool sbx_serve__episode_running(sbx_serve *s, const char *id)
{
	episode *e = lock_find(s, id);
	bool running;

	if (!e)
		return false;
	running = e->state == EP_RUNNING;
	pthread_mutex_unlock(&s->lock);
	return running;
}

void sbx_serve__unauthorized(sbx_serve *s)
{
	pthread_mutex_lock(&s->lock);
	s->m.unauthorized++;
	pthread_mutex_unlock(&s->lock);
}

/* ---- the deadline ---- */

/* Episodes past their deadline are the service's to finish (timeout, graded). */
static void *reaper_main(void *arg)
{
	sbx_serve *s = arg;

	pthread_mutex_lock(&s->lock);
	while (!s->reaper_stop) {
		episode *due = NULL;
		int64_t now = sbx_now_ms();

		for (size_t i = 0; i < s->n_eps && !due; i++)
			if (s->eps[i]->state == EP_RUNNING && now >= s->eps[i]->deadline_ms)
				due = s->eps[i];
		if (!due) {
			pthread_mutex_unlock(&s->lock);
			sbx_serve__sandboxes_expire(s);
			sbx_sleep_ms(REAPER_TICK_MS);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		due->state = EP_FINISHING;
		due->refs++;
		pthread_mutex_unlock(&s->lock);
		/* An agent that completed before the deadline did not time out, whoever
		 * forgot to call finish. */
		finish_episode(s, due,
			       sbx_run_completed(due->run) ? SBX_END_COMPLETE_TASK
							   : SBX_END_DEADLINE);
		pthread_mutex_lock(&s->lock);
		due->refs--;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ---- the service ---- */

static int random_hex(char *out, size_t nbytes, sbx_error *err)
{
	unsigned char b[32];

	if (nbytes > sizeof(b) || getrandom(b, nbytes, 0) != (ssize_t)nbytes)
		return sbx_error_set(err, -EIO, "getrandom failed");
	for (size_t i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

int sbx_serve_start(sbx_serve **out, const sbx_serve_opts *opts, sbx_error *err)
{
	_cleanup_(sbx_serve_freep) sbx_serve *s = NULL;
	serve_pool_opts po = {0};
	char hex[9];
	int r;

	if (!opts || opts->version != SBX_SERVE_OPTS_VERSION)
		return sbx_error_set(err, -EINVAL, "serve: bad options");
	s = calloc(1, sizeof(*s));
	if (!s)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	s->o = *opts;
	s->listen_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->done, NULL);
	pthread_cond_init(&s->ws_gone, NULL);
	pthread_cond_init(&s->sbx_gone, NULL);
	pthread_cond_init(&s->transfer_done, NULL);
	s->max_sandboxes = sbx_serve__sandboxes_max(opts);
	s->max_episodes = opts->max_episodes ? opts->max_episodes : DEFAULT_MAX_EPISODES;
	s->max_timeout_s = opts->max_timeout_s ? opts->max_timeout_s : DEFAULT_MAX_TIMEOUT;
	if (opts->token) {
		/* It goes in URLs: letters, digits, '-' and '_' only. */
		if (strlen(opts->token) < 16 || strlen(opts->token) >= sizeof(s->token) ||
		    strspn(opts->token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789-_") != strlen(opts->token))
			return sbx_error_set(err, -EINVAL, "--token: 16..64 of [A-Za-z0-9_-]");
		snprintf(s->token, sizeof(s->token), "%s", opts->token);
	} else if ((r = random_hex(s->token, 16, err)) < 0) {
		return r;
	}
	r = random_hex(hex, 4, err);
	if (r < 0)
		return r;
	snprintf(s->id, sizeof(s->id), "serve-%s", hex);

	r = sbx_serve__listen(s, opts->listen ? opts->listen : "127.0.0.1:0", err);
	if (r < 0)
		return r;
	po.pools = opts->pools;
	po.n_pools = opts->n_pools;
	po.concurrency = opts->fill_concurrency;
	po.idle_ttl_s = opts->idle_ttl_s ? opts->idle_ttl_s : DEFAULT_IDLE_TTL_S;
	po.max_timeout_s = s->max_timeout_s;
	po.engines = opts->n_engines ? opts->engines : (const char *const[]){opts->engine};
	po.n_engines = opts->n_engines ? opts->n_engines : 1;
	po.service_id = s->id;
	po.runtime = opts->runtime;
	po.test = opts->test;
	po.reuse = opts->reuse;
	po.metrics = &s->m;
	po.lock = &s->lock;
	r = sbx_serve__pool_new(&s->pool, &po, err);
	if (r < 0)
		return r;
	if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0)
		return sbx_error_set(err, -EAGAIN, "serve: cannot start a thread");
	s->reaper_started = true;
	*out = TAKE_PTR(s);
	return 0;
}

const char *sbx_serve_url(const sbx_serve *s)
{
	return s->url;
}

const char *sbx_serve_token(const sbx_serve *s)
{
	return s->token;
}

const char *sbx_serve_id(const sbx_serve *s)
{
	return s->id;
}

bool sbx_serve_pools_full(sbx_serve *s)
{
	return !s->pool || sbx_serve__pool_full(s->pool);
}

unsigned sbx_serve_drain(sbx_serve *s, uint32_t grace_s)
{
	int64_t until = sbx_now_ms() + (int64_t)grace_s * 1000;
	unsigned aborted = 0;

	pthread_mutex_lock(&s->lock);
	s->draining = true;
	while (s->m.live > 0 && sbx_now_ms() < until && !(s->o.hurry && *s->o.hurry)) {
		pthread_mutex_unlock(&s->lock);
		sbx_sleep_ms(100);
		pthread_mutex_lock(&s->lock);
	}
	/*
	 * Claims in progress stop at their next check; running episodes are
	 * aborted, and so is one a claim finished launching meanwhile.
	 */
	s->stop = 1;
	for (;;) {
		episode *e = NULL;

		for (size_t i = 0; i < s->n_eps && !e; i++)
			if (s->eps[i]->state == EP_RUNNING)
				e = s->eps[i];
		if (!e && s->m.live == 0)
			break;
		if (!e) {
			/* Claiming or finishing on another thread: it ends on its own. */
			pthread_mutex_unlock(&s->lock);
			sbx_sleep_ms(50);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		e->state = EP_FINISHING;
		e->refs++;
		pthread_mutex_unlock(&s->lock);
		finish_episode(s, e, SBX_END_INTERRUPTED);
		aborted++;
		pthread_mutex_lock(&s->lock);
		e->refs--;
	}
	s->drained = true;
	pthread_mutex_unlock(&s->lock);
	sbx_serve__sandboxes_stop(s);
	sbx_serve__pool_free(s->pool);
	s->pool = NULL;
	return aborted;
}

void sbx_serve_free(sbx_serve *s)
{
	if (!s)
		return;
	if (!s->drained && (s->reaper_started || s->pool))
		sbx_serve_drain(s, 0);
	sbx_serve__unlisten(s);
	if (s->reaper_started) {
		pthread_mutex_lock(&s->lock);
		s->reaper_stop = true;
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->reaper, NULL);
	}
	sbx_serve__pool_free(s->pool);
	for (size_t i = 0; i < s->n_eps; i++)
		episode_free(s->eps[i]);
	free(s->eps);
	free(s->url);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->done);
	pthread_cond_destroy(&s->ws_gone);
	pthread_cond_destroy(&s->sbx_gone);
	pthread_cond_destroy(&s->transfer_done);
	free(s->sbs);
	free(s);
}
