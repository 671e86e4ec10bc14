/* SPDX-License-Identifier: MIT */
/*
 * The scheduler: a fixed pool of worker threads, each bound to one engine's
 * job slot, taking episodes from one queue in plan order (epoch-major, so a
 * partial sweep is a fair sample). Each episode is sbx_run_execute, the same
 * lifecycle as `sandboxctl run`; lib/run keeps all of an episode's state in
 * its sbx_run, so episodes run side by side in one process.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/log.h"
#include "sbx/sweep.h"
#include "sbx/warm.h"

#define DEFAULT_BACKOFF_MS 1000
#define DEFAULT_WINDOW	   20
#define DEFAULT_THRESHOLD  0.2
#define DEFAULT_FAIL_AFTER 3
#define MAX_WORKERS	   1024

typedef struct engine_state {
	const char *url;
	unsigned jobs;
	unsigned failures; /* infra errors in a row */
	bool drained;
} engine_state;

typedef struct sched sched;

typedef struct worker {
	sched *s;
	size_t engine;
	pthread_t thread;
	bool started;
	sbx_warm *reused; /* --reuse: its sandbox between two episodes */
} worker;

struct sched {
	const sbx_sweep_plan *plan;
	sbx_sweep_results *results;
	const sbx_sweep_opts *o;
	_Alignas(64) pthread_mutex_t lock;
	pthread_cond_t cond; /* the main thread's: a worker ended, or stop */
	pthread_cond_t work; /* idle workers': something was queued, or the end */
	engine_state *engines;
	size_t n_engines;
	size_t *queue; /* episode indices, a ring */
	size_t q_head, q_len, q_cap;
	unsigned *attempts;	 /* per episode: lines recorded */
	unsigned *retries_used;	 /* per episode, this run */
	int64_t *not_before;	 /* per episode: backoff, monotonic ms */
	size_t *gave_up_on;	 /* per episode: 1 + the engine its last retry failed on, or 0 */
	bool *window;		 /* last attempts: infra or not */
	size_t win_pos, win_len; /* ring */
	volatile sig_atomic_t interrupt; /* what every run watches */
	bool stopping;
	sbx_sweep_stop stop;
	char reason[256];
	size_t live, running;
	sbx_sweep_progress prog;
	int64_t t0;
	unsigned backoff_ms, window_size, fail_after;
	double threshold;
	sbx_provenance_cache *provenance; /* each task folder read once (NULL: per episode) */
};

static void q_push(sched *s, size_t ep)
{
	s->queue[(s->q_head + s->q_len) % s->q_cap] = ep;
	s->q_len++;
}

/*
 * How long an idle worker sleeps: until the first queued episode's backoff is
 * over, at most a second (pushes and the end wake it sooner). A fixed short
 * poll was most of the scheduler's CPU at a thousand engines: in a sweep's
 * tail every idle worker woke ten times a second and fought for the lock.
 */
static long q_idle_ms(const sched *s, int64_t now)
{
	int64_t next = INT64_MAX;

	for (size_t i = 0; i < s->q_len; i++) {
		int64_t nb = s->not_before[s->queue[(s->q_head + i) % s->q_cap]];

		next = nb < next ? nb : next;
	}
	if (next == INT64_MAX || next - now >= 1000)
		return 1000;
	return next > now ? (long)(next - now) : 1;
}

/* The first queued episode whose backoff is over, taken out; false when none is ready. */
static bool q_take(sched *s, int64_t now, size_t *out)
{
	for (size_t i = 0; i < s->q_len; i++) {
		size_t at = (s->q_head + i) % s->q_cap, ep = s->queue[at];

		if (s->not_before[ep] > now)
			continue;
		/* Close the gap: shift the earlier entries up by one. */
		for (size_t j = i; j > 0; j--)
			s->queue[(s->q_head + j) % s->q_cap] =
				s->queue[(s->q_head + j - 1) % s->q_cap];
		s->q_head = (s->q_head + 1) % s->q_cap;
		s->q_len--;
		*out = ep;
		return true;
	}
	return false;
}

static void stop_locked(sched *s, sbx_sweep_stop why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void stop_locked(sched *s, sbx_sweep_stop why, const char *fmt, ...)
{
	va_list ap;

	if (s->stopping)
		return;
	s->stopping = true;
	s->stop = why;
	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
	pthread_cond_broadcast(&s->cond);
	pthread_cond_broadcast(&s->work);
}

/* Counts an attempt into the window; stops the sweep when infra errors pass the threshold. */
static void window_add(sched *s, bool infra)
{
	unsigned n = 0;

	s->window[s->win_pos] = infra;
	s->win_pos = (s->win_pos + 1) % s->window_size;
	if (s->win_len < s->window_size)
		s->win_len++;
	for (size_t i = 0; i < s->win_len; i++)
		n += s->window[i];
	if (n > s->threshold * s->window_size)
		stop_locked(s, SBX_SWEEP_INFRA_TOO_MANY,
			    "%u infrastructure errors in the last %zu attempts (more than %.0f%% "
			    "of %u): the engine or the image is failing",
			    n, s->win_len, s->threshold * 100, s->window_size);
}

static bool path_exists(const char *dir, const char *id)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;

	return asprintf(&p, "%s/runs/%s", dir, id) >= 0 && lstat(p, &st) == 0;
}

/* One attempt through the lifecycle, exactly as `sandboxctl run` makes it. */
static int lifecycle_attempt(sched *s, const sbx_sweep_attempt *a, sbx_sweep_record *rec,
			     sbx_error *err)
{
	const sbx_sweep_plan *p = a->plan;
	sbx_run_opts ro = SBX_RUN_OPTS_INIT;
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	_cleanup_free_ char *runs_dir = NULL;
	int r;

	if (asprintf(&runs_dir, "%s/runs", s->o->dir) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	ro.task = p->tasks[a->episode->task];
	ro.tasks_dir = p->tasks_dir;
	ro.image = p->image;
	ro.agent = p->agents[a->episode->agent];
	ro.demo_agent_path = s->o->demo_agent_path;
	ro.runs_dir = runs_dir;
	ro.run_id = a->run_id;
	ro.limits = p->limits;
	ro.published = p->published;
	ro.quiet_agent = true; /* episodes side by side: output only into each agent.log */
	ro.test = s->o->test_label;
	ro.grader = s->o->grader;
	ro.interrupted = a->interrupted;
	ro.seeded = a->episode->seeded;
	ro.seed = a->episode->seed;
	ro.engine = a->engine;
	ro.provenance_cache = s->provenance;
	ro.reuse = s->o->reuse;
	ro.reuse_slot = a->reuse_slot;

	r = sbx_run_execute(&ro, &run, err);
	if (r < 0)
		return r;
	r = sbx_sweep_record_from_run(sbx_run_get_result(run), p, a->episode, a->attempt, a->engine,
				      rec);
	return r < 0 ? sbx_error_set(err, -ENOMEM, "out of memory") : 0;
}

/*
 * Runs one attempt of episode idx on engine e; returns the record (caller
 * clears it). -EINVAL with cfg_error when nothing ran: the task, the agent or
 * the run directory is wrong, and would be for every episode like it, so the
 * sweep stops and says why; -ENOMEM when out of memory.
 */
static int run_attempt(sched *s, worker *w, size_t idx, unsigned attempt, sbx_sweep_record *rec,
		       char *cfg_error, size_t cfg_size)
{
	size_t e = w->engine;
	const sbx_sweep_plan *p = s->plan;
	sbx_error err = SBX_ERROR_INIT;
	sbx_sweep_episode ep;
	sbx_sweep_attempt a;
	char run_id[160];
	int r;

	sbx_sweep_plan_episode(p, idx, &ep);
	/* A run directory left by a killed sweep keeps its name: draw the next attempt's. */
	for (;; attempt++) {
		sbx_sweep_plan_run_id(p, &ep, attempt, run_id, sizeof(run_id));
		if (!path_exists(s->o->dir, run_id))
			break;
	}
	a = (sbx_sweep_attempt){.plan = p,
				.episode = &ep,
				.attempt = attempt,
				.run_id = run_id,
				.engine = s->engines[e].url,
				.interrupted = &s->interrupt,
				.reuse_slot = &w->reused};
	r = s->o->attempt ? s->o->attempt(&a, rec, s->o->attempt_userdata, &err)
			  : lifecycle_attempt(s, &a, rec, &err);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		snprintf(cfg_error, cfg_size, "episode %zu (task '%s', agent '%s'): %s", idx,
			 p->tasks[ep.task], p->agents[ep.agent], sbx_error_message(&err));
		return -EINVAL;
	}
	return 0;
}

static void update_progress(sched *s, const sbx_sweep_record *rec)
{
	double min = (double)(sbx_now_ms() - s->t0) / 60000.0;

	s->prog.running = s->running;
	s->prog.per_min = min > 0 ? (double)s->prog.finished / min : 0;
	s->prog.eta_s = s->prog.per_min > 0
				? (double)(s->prog.planned - s->prog.done) / s->prog.per_min * 60
				: -1;
	s->prog.last = rec;
	if (s->o->progress)
		s->o->progress(&s->prog, s->o->progress_userdata);
	s->prog.last = NULL;
}

/* Records an attempt's outcome and decides what happens to the episode next. */
static void settle(sched *s, size_t e, size_t idx, sbx_sweep_record *rec)
{
	engine_state *en = &s->engines[e];
	bool infra = rec->status == SBX_RUN_INFRA_ERROR;

	s->attempts[idx] = rec->attempt;
	if (rec->status == SBX_RUN_INTERRUPTED)
		return; /* not done; resume redoes it */
	window_add(s, infra);
	if (!infra) {
		en->failures = 0;
		s->prog.done++;
		s->prog.finished++;
		s->prog.passed += rec->status == SBX_RUN_PASS;
		return;
	}
	s->prog.infra++;
	en->failures++;
	if (!en->drained && en->failures >= s->fail_after) {
		size_t left = 0;

		for (size_t i = 0; i < s->n_engines; i++)
			left += !s->engines[i].drained && i != e;
		/* The last engine is never drained: the infra threshold stops the sweep instead. */
		if (left > 0) {
			en->drained = true;
			sbx_log_warning("sweep: engine '%s' failed %u times in a row: drained, its "
					"episodes go to the other engines",
					en->url ? en->url : "default", en->failures);
			/* Episodes it failed before the streak was long enough get another chance.
			 */
			for (size_t i = 0; i < s->q_cap; i++)
				if (s->gave_up_on[i] == e + 1) {
					s->gave_up_on[i] = 0;
					q_push(s, i);
				}
		}
	}
	if (en->drained) {
		/* The engine's fault, not the episode's: another engine takes it, no retry used. */
		q_push(s, idx);
		return;
	}
	if (s->retries_used[idx] < s->plan->retries && !s->stopping) {
		s->not_before[idx] =
			sbx_now_ms() +
			(int64_t)s->backoff_ms *
				(1LL << (s->retries_used[idx] < 10 ? s->retries_used[idx] : 10));
		s->retries_used[idx]++;
		s->prog.retried++;
		q_push(s, idx);
	} else {
		s->gave_up_on[idx] = e + 1;
	}
}

static void *worker_main(void *arg)
{
	worker *w = arg;
	sched *s = w->s;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		size_t idx;
		sbx_sweep_record rec = {0};
		sbx_error append_err = SBX_ERROR_INIT;
		char cfg_error[SBX_ERROR_MAX + 256];
		int r, appended = 0;

		if (s->stopping || s->engines[w->engine].drained)
			break;
		int64_t now = sbx_now_ms();
		size_t queued;
		bool drained;

		if (!q_take(s, now, &idx)) {
			if (s->q_len == 0 && s->running == 0)
				break; /* nothing left and nothing that could come back */
			sbx_cond_wait_ms(&s->work, &s->lock, q_idle_ms(s, now));
			continue;
		}
		s->running++;
		pthread_mutex_unlock(&s->lock);
		r = run_attempt(s, w, idx, s->attempts[idx] + 1, &rec, cfg_error,
				sizeof(cfg_error));
		/*
		 * The attempt's line is on disk before the episode is settled. It is
		 * appended outside the scheduler's lock: with a thousand engines an
		 * fsync under it (a few ms on a disk) held every worker, while
		 * concurrent fsyncs of one file share the journal's commits.
		 */
		if (r == 0)
			appended = sbx_sweep_results_append(s->results, &rec, &append_err);
		pthread_mutex_lock(&s->lock);
		s->running--;
		queued = s->q_len;
		drained = s->engines[w->engine].drained;
		if (r == -EINVAL) {
			stop_locked(s, SBX_SWEEP_CONFIG, "%s", cfg_error);
		} else if (r < 0) {
			stop_locked(s, SBX_SWEEP_UNFINISHED, "out of memory");
		} else if (appended < 0) {
			stop_locked(s, SBX_SWEEP_UNFINISHED, "%s", sbx_error_message(&append_err));
		} else {
			settle(s, w->engine, idx, &rec);
			update_progress(s, &rec);
		}
		sbx_sweep_record_clear(&rec);
		/*
		 * Wake idle workers only for what concerns them: one per episode
		 * queued (it may be this worker's own next), all when an engine was
		 * drained (its workers leave) or nothing is left (they all do).
		 */
		if (drained != s->engines[w->engine].drained || (s->q_len == 0 && s->running == 0))
			pthread_cond_broadcast(&s->work);
		else
			for (size_t k = queued; k < s->q_len; k++)
				pthread_cond_signal(&s->work);
	}
	s->live--;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	sbx_warm_free(TAKE_PTR(w->reused)); /* --reuse: its sandbox goes with the worker */
	return NULL;
}

static void sched_free(sched *s)
{
	sbx_free_all(s->engines, s->queue, s->attempts, s->retries_used, s->not_before,
		     s->gave_up_on, s->window);
	sbx_provenance_cache_free(s->provenance);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	pthread_cond_destroy(&s->work);
}

/*
 * The scheduler's state for a run of plan: options, engines, and the queue
 * of what is left (every episode without a result, in plan order), with
 * done[] (allocated) saying which have one. Frees what it made on failure.
 */
static int sched_init(sched *s, const sbx_sweep_plan *plan, sbx_sweep_results *results,
		      const sbx_sweep_opts *o, bool **done, size_t *n_workers, sbx_error *err)
{
	static const sbx_sweep_engine default_engine = {.url = NULL, .jobs = 1};
	size_t size = sbx_sweep_plan_size(plan), n_recs;
	const sbx_sweep_record *recs;

	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	pthread_cond_init(&s->work, NULL);
	s->plan = plan;
	s->results = results;
	s->provenance = sbx_provenance_cache_new();
	s->o = o;
	s->backoff_ms = o->backoff_ms ? o->backoff_ms : DEFAULT_BACKOFF_MS;
	s->window_size = o->infra_window ? o->infra_window : DEFAULT_WINDOW;
	s->threshold = o->infra_threshold > 0 ? o->infra_threshold : DEFAULT_THRESHOLD;
	s->fail_after = o->engine_fail_after ? o->engine_fail_after : DEFAULT_FAIL_AFTER;
	s->n_engines = o->n_engines ? o->n_engines : 1;
	s->engines = calloc(s->n_engines, sizeof(*s->engines));
	s->q_cap = size ? size : 1;
	s->queue = calloc(s->q_cap, sizeof(*s->queue));
	s->attempts = calloc(s->q_cap, sizeof(*s->attempts));
	s->retries_used = calloc(s->q_cap, sizeof(*s->retries_used));
	s->not_before = calloc(s->q_cap, sizeof(*s->not_before));
	s->gave_up_on = calloc(s->q_cap, sizeof(*s->gave_up_on));
	s->window = calloc(s->window_size, sizeof(*s->window));
	*done = calloc(s->q_cap, sizeof(**done));
	if (!s->engines || !s->queue || !s->attempts || !s->retries_used || !s->not_before ||
	    !s->gave_up_on || !s->window || !*done) {
		sched_free(s);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	*n_workers = 0;
	for (size_t i = 0; i < s->n_engines; i++) {
		const sbx_sweep_engine *e = o->n_engines ? &o->engines[i] : &default_engine;

		s->engines[i].url = e->url;
		s->engines[i].jobs = e->jobs ? e->jobs : 1;
		*n_workers += s->engines[i].jobs;
	}
	if (*n_workers > MAX_WORKERS) {
		sched_free(s);
		return sbx_error_set(err, -EINVAL, "%zu job slots: at most %d", *n_workers,
				     MAX_WORKERS);
	}

	/* What is left: every episode without a result, in plan order. */
	recs = sbx_sweep_results_records(results, &n_recs);
	sbx_sweep_done_map(plan, recs, n_recs, *done, s->attempts);
	s->prog.planned = size;
	for (size_t i = 0; i < size; i++) {
		if ((*done)[i])
			s->prog.done++;
		else
			q_push(s, i);
	}
	for (size_t i = 0; i < n_recs; i++)
		if (sbx_sweep_record_done(&recs[i]) && recs[i].status == SBX_RUN_PASS &&
		    recs[i].episode < size)
			s->prog.passed++;
	s->prog.eta_s = -1;
	s->t0 = sbx_now_ms();
	return 0;
}

/* Starts the workers, watches for signals and the end while they work, joins them. */
static void run_workers(sched *s, worker *workers, size_t n_workers)
{
	const sbx_sweep_opts *o = s->o;
	int64_t stop_at = -1;

	pthread_mutex_lock(&s->lock);
	for (size_t e = 0, k = 0; e < s->n_engines; e++)
		for (unsigned j = 0; j < s->engines[e].jobs; j++, k++) {
			workers[k] = (worker){.s = s, .engine = e};
			/* Every slot, even with less work than slots: if one engine is
			 * drained, the others' idle workers take its episodes. */
			if (s->q_len == 0)
				continue;
			if (pthread_create(&workers[k].thread, NULL, worker_main, &workers[k]) != 0)
				break;
			workers[k].started = true;
			s->live++;
		}
	while (s->live > 0) {
		sig_atomic_t sigs = o->stop ? *o->stop : 0;

		if (sigs >= 1 && !s->stopping)
			stop_locked(s, SBX_SWEEP_INTERRUPTED, "interrupted");
		if (sigs >= 1 && stop_at < 0)
			stop_at = sbx_now_ms() + (int64_t)o->stop_grace_s * 1000;
		/* A second signal, or the grace is over: interrupt what still runs. */
		if ((sigs >= 2 || (stop_at >= 0 && sbx_now_ms() >= stop_at)) && !s->interrupt)
			s->interrupt = 1;
		sbx_cond_wait_ms(&s->cond, &s->lock, 50);
	}
	pthread_mutex_unlock(&s->lock);
	for (size_t k = 0; k < n_workers; k++)
		if (workers[k].started)
			pthread_join(workers[k].thread, NULL);
}

/* How the run ended: what is still without a result, and why. */
static void sched_outcome(sched *s, bool *done, sbx_sweep_outcome *out)
{
	size_t size = sbx_sweep_plan_size(s->plan), n_recs;
	const sbx_sweep_record *recs = sbx_sweep_results_records(s->results, &n_recs);

	sbx_sweep_done_map(s->plan, recs, n_recs, done, NULL);
	for (size_t i = 0; i < size; i++)
		out->remaining += !done[i];
	out->ran = s->prog.finished;
	out->elapsed_s = (double)(sbx_now_ms() - s->t0) / 1000.0;
	if (s->stopping) {
		out->stop = s->stop;
	} else if (out->remaining) {
		bool any_engine = false;

		for (size_t i = 0; i < s->n_engines; i++)
			any_engine = any_engine || !s->engines[i].drained;
		out->stop = any_engine ? SBX_SWEEP_UNFINISHED : SBX_SWEEP_NO_ENGINE;
		snprintf(s->reason, sizeof(s->reason),
			 "%zu episodes still have no result (infrastructure errors after %u "
			 "retries)",
			 out->remaining, s->plan->retries);
	}
	snprintf(out->reason, sizeof(out->reason), "%s", s->reason);
}

int sbx_sweep_execute(const sbx_sweep_plan *plan, sbx_sweep_results *results,
		      const sbx_sweep_opts *o, sbx_sweep_outcome *out, sbx_error *err)
{
	_cleanup_free_ bool *done = NULL;
	_cleanup_free_ worker *workers = NULL;
	size_t n_workers = 0;
	sched s = {0};
	int r;

	if (!o || o->version != SBX_SWEEP_OPTS_VERSION || !o->dir)
		return sbx_error_set(err, -EINVAL, "sweep: bad options");
	*out = (sbx_sweep_outcome){0};
	r = sched_init(&s, plan, results, o, &done, &n_workers, err);
	if (r < 0)
		return r;
	workers = calloc(n_workers ? n_workers : 1, sizeof(*workers));
	if (!workers) {
		sched_free(&s);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	run_workers(&s, workers, n_workers);
	sched_outcome(&s, done, out);
	sched_free(&s);
	return 0;
}
