/* SPDX-License-Identifier: MIT */
/*
 * The simulated engines (sim_backend.c) and the stand-in episode
 * (sim_episode.c): each failure mode does what it says, latencies are drawn
 * and slept as scaled, and the real scheduler over simulated engines finishes
 * every episode once, drains the engines that die and keeps the rest busy.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "sbx/clock.h"
#include "sbx/relay.h"
#include "sbx/path.h"
#include "sbx/sweep.h"
#include "sbx/warm.h"
#include "serve-internal.h"
#include "sim_backend.h"
#include "sim_episode.h"
#include "test_files.h"

/* A cluster of n engines like spec, with no sleeping unless scale says. */
static sim_cluster *cluster(const sim_engine_spec *spec, size_t n, double scale)
{
	sim_engine_spec *v = calloc(n, sizeof(*v));
	sim_cluster *c;

	ck_assert_ptr_nonnull(v);
	for (size_t i = 0; i < n; i++)
		v[i] = *spec;
	c = sim_cluster_new(v, n, scale, 42);
	free(v);
	ck_assert_ptr_nonnull(c);
	return c;
}

static sbx_backend *sandbox(sim_cluster *c, const char *engine)
{
	sbx_backend *b = NULL;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_msg(sim_backend_new(&b, engine, c, &err) == 0, "%s", err.msg);
	return b;
}

START_TEST(engine_urls)
{
	static const sim_engine_spec spec = SIM_ENGINE_SPEC_INIT;
	sim_cluster *c = cluster(&spec, 4, 0);
	sbx_error err = SBX_ERROR_INIT;
	sbx_backend *b = NULL;
	size_t i = 99;

	ck_assert_int_eq(sim_cluster_engine_index(c, "sim://3", &i), 0);
	ck_assert_uint_eq(i, 3);
	ck_assert_int_eq(sim_cluster_engine_index(c, NULL, &i), 0);
	ck_assert_uint_eq(i, 0);
	ck_assert_int_eq(sim_cluster_engine_index(c, "sim://4", &i), -EINVAL);
	ck_assert_int_eq(sim_cluster_engine_index(c, "sim://", &i), -EINVAL);
	ck_assert_int_eq(sim_cluster_engine_index(c, "sim://1x", &i), -EINVAL);
	ck_assert_int_eq(sim_cluster_engine_index(c, "sim://-1", &i), -EINVAL);
	ck_assert_int_eq(sim_cluster_engine_index(c, "unix:///var/run/docker.sock", &i), -EINVAL);
	ck_assert_int_eq(sim_backend_new(&b, "tcp://127.0.0.1:2375", c, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "not a simulated engine"));
	sim_cluster_free(c);
}
END_TEST

START_TEST(a_sandbox_lives_and_goes)
{
	static const sim_engine_spec spec = SIM_ENGINE_SPEC_INIT;
	sim_cluster *c = cluster(&spec, 2, 0);
	sbx_sandbox_spec ss = {.image = "img"};
	sbx_error err = SBX_ERROR_INIT;
	sbx_sandbox_status st;
	sim_engine_stats es;
	sbx_backend *b = sandbox(c, "sim://1");
	sbx_stream *s = NULL;
	int status = 0;

	ck_assert_int_eq(b->ops->create(b, &ss, &err), 0);
	ck_assert_ptr_nonnull(strstr(b->id, "sim-1-"));
	ck_assert_str_eq(b->image_id, "img");
	ck_assert_int_eq(b->ops->start(b, &err), 0);
	ck_assert_int_eq(b->ops->copy_in(b, "/workspace", NULL, 0, &err), 0);
	ck_assert_int_eq(b->ops->open_stream(b, &s, &err), 0);
	/* A healthy server's answer waits on the stream, whatever was asked. */
	ck_assert_int_ge(sbx_relay_stream_get(s, "/health", 1000, &status, NULL), 0);
	ck_assert_int_eq(status, 200);
	sbx_stream_close(s);
	ck_assert_int_eq(b->ops->status(b, &st, &err), 0);
	ck_assert(st.running);
	sim_cluster_stats(c, 1, &es);
	ck_assert_uint_eq(es.live, 1);
	ck_assert_int_eq(b->ops->destroy(b, &err), 0);
	ck_assert_int_eq(b->ops->destroy(b, &err), 0); /* idempotent */
	sim_cluster_stats(c, 1, &es);
	ck_assert_uint_eq(es.live, 0);
	ck_assert_uint_eq(es.removed, 1);
	ck_assert_uint_eq(es.ops, 6); /* create, start, copy, exec, inspect, remove */
	sim_cluster_stats(c, 0, &es);
	ck_assert_uint_eq(es.ops, 0); /* the other engine saw nothing */
	b->ops->free(b);
	sim_cluster_free(c);
}
END_TEST

START_TEST(capacity_refuses_then_frees)
{
	sim_engine_spec spec = SIM_ENGINE_SPEC_INIT;
	sim_cluster *c;
	sbx_error err = SBX_ERROR_INIT;
	sbx_backend *a, *b;

	spec.capacity = 1;
	c = cluster(&spec, 1, 0);
	a = sandbox(c, "sim://0");
	b = sandbox(c, "sim://0");
	ck_assert_int_eq(a->ops->create(a, NULL, &err), 0);
	ck_assert_int_eq(b->ops->create(b, NULL, &err), -EBUSY);
	ck_assert_ptr_nonnull(strstr(err.msg, "at capacity"));
	ck_assert_int_eq(a->ops->destroy(a, &err), 0);
	ck_assert_int_eq(b->ops->create(b, NULL, &err), 0);
	ck_assert_int_eq(b->ops->destroy(b, &err), 0);
	a->ops->free(a);
	b->ops->free(b);
	sim_cluster_free(c);
}
END_TEST

START_TEST(refused_dead_and_dying)
{
	sim_engine_spec refusing = SIM_ENGINE_SPEC_INIT, dead = SIM_ENGINE_SPEC_INIT,
			dying = SIM_ENGINE_SPEC_INIT;
	sim_engine_spec specs[3];
	sim_cluster *c;
	sbx_error err = SBX_ERROR_INIT;
	sbx_sandbox_status st;
	sim_engine_stats es;
	sbx_backend *b;

	refusing.p_refuse = 1;
	dead.fail_after = 2;
	dying.p_die = 1;
	specs[0] = refusing, specs[1] = dead, specs[2] = dying;
	c = sim_cluster_new(specs, 3, 0, 1);

	b = sandbox(c, "sim://0");
	ck_assert_int_eq(b->ops->create(b, NULL, &err), -EAGAIN);
	b->ops->free(b);

	b = sandbox(c, "sim://1"); /* two operations answer, then nothing does */
	ck_assert_int_eq(b->ops->create(b, NULL, &err), 0);
	ck_assert_int_eq(b->ops->start(b, &err), 0);
	ck_assert_int_eq(b->ops->copy_in(b, "/w", NULL, 0, &err), -ECONNREFUSED);
	ck_assert_int_eq(b->ops->destroy(b, &err), -ECONNREFUSED);
	sim_cluster_stats(c, 1, &es);
	ck_assert_uint_eq(es.live, 1); /* left behind on the dead engine, as a real one is */
	ck_assert_uint_eq(es.failed, 2);
	b->ops->free(b);

	b = sandbox(c, "sim://2");
	ck_assert_int_eq(b->ops->create(b, NULL, &err), 0);
	ck_assert_int_eq(b->ops->start(b, &err), 0);
	ck_assert_int_eq(b->ops->status(b, &st, &err), 0);
	ck_assert(!st.running);
	ck_assert_int_eq(st.exit_code, 137);
	ck_assert_int_eq(b->ops->status(b, &st, &err), 0);
	sim_cluster_stats(c, 2, &es);
	ck_assert_uint_eq(es.died, 1); /* counted once */
	ck_assert_int_eq(b->ops->destroy(b, &err), 0);
	b->ops->free(b);
	sim_cluster_free(c);
}
END_TEST

START_TEST(hung_engine_times_out_and_latency_is_scaled)
{
	sim_engine_spec hung = SIM_ENGINE_SPEC_INIT, slow = SIM_ENGINE_SPEC_INIT;
	sim_engine_spec specs[2];
	sim_cluster *c;
	sbx_error err = SBX_ERROR_INIT;
	sbx_backend *b;
	int64_t t0;

	hung.hang_after = 0;
	hung.op_timeout_ms = 4000; /* 40 ms at the scale below */
	slow.speed = 0.5;
	slow.create = (sim_latency){100, 0}; /* 200 simulated ms at half speed: 2 ms here */
	specs[0] = hung, specs[1] = slow;
	c = sim_cluster_new(specs, 2, 0.01, 1);

	b = sandbox(c, "sim://0");
	t0 = sbx_now_ms();
	ck_assert_int_eq(b->ops->create(b, NULL, &err), -ETIMEDOUT);
	ck_assert_int_ge(sbx_now_ms() - t0, 39);
	ck_assert_ptr_nonnull(strstr(err.msg, "no answer"));
	b->ops->free(b);

	b = sandbox(c, "sim://1");
	t0 = sbx_now_ms();
	ck_assert_int_eq(b->ops->create(b, NULL, &err), 0);
	ck_assert_int_ge(sbx_now_ms() - t0, 2);
	ck_assert_int_lt(sbx_now_ms() - t0, 30);
	ck_assert_int_eq(b->ops->destroy(b, &err), 0);
	b->ops->free(b);
	sim_cluster_free(c);
}
END_TEST

START_TEST(draws_repeat_and_follow_the_median)
{
	static const sim_engine_spec spec = SIM_ENGINE_SPEC_INIT;
	sim_latency l = {50, 0.5};
	double a[64], below = 0;
	sim_cluster *c = cluster(&spec, 1, 0);

	for (int i = 0; i < 64; i++)
		a[i] = sim_draw_ms(c, &l);
	sim_cluster_free(c);
	/* A new cluster with the same seed, drawn on a fresh thread state: the same numbers. */
	c = cluster(&spec, 1, 0);
	for (int i = 0; i < 64; i++)
		ck_assert_double_eq(sim_draw_ms(c, &l), a[i]);
	for (int i = 0; i < 20000; i++)
		below += sim_draw_ms(c, &l) < 50;
	ck_assert_double_ge(below / 20000, 0.47); /* half of a log-normal lies below its median */
	ck_assert_double_le(below / 20000, 0.53);
	sim_cluster_free(c);
}
END_TEST

/* A sweep of the real scheduler over simulated engines in the scratch directory. */
static void sweep(const sbx_sweep_plan *p, sim_cluster *c, sim_episode_config *cfg,
		  const sbx_sweep_engine *engines, size_t n, sbx_sweep_outcome *out,
		  sbx_sweep_results **results)
{
	sbx_sweep_opts o = SBX_SWEEP_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;

	cfg->cluster = c;
	o.dir = sbx_test_scratch;
	o.engines = engines;
	o.n_engines = n;
	o.backoff_ms = 1;
	o.infra_window = 1000;
	o.attempt = sim_episode_attempt;
	o.attempt_userdata = cfg;
	ck_assert_msg(sbx_sweep_results_open(sbx_test_scratch, p, results, NULL, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(sbx_sweep_execute(p, *results, &o, out, &err) == 0, "%s", err.msg);
}

START_TEST(scheduler_over_simulated_engines)
{
	enum { ENGINES = 16, TASKS = 5, EPOCHS = 40 };
	sbx_sweep_plan *p = sim_plan_new(TASKS, 2, EPOCHS, 3);
	sim_engine_spec specs[ENGINES];
	sbx_sweep_engine engines[ENGINES];
	char urls[ENGINES][16];
	atomic_uint_fast64_t on[ENGINES] = {0};
	sim_episode_config cfg = {.agent = {20, 0.3}, .p_pass = 0.5, .results_on = on};
	sbx_sweep_results *r = NULL;
	sbx_sweep_outcome out;
	const sbx_sweep_record *recs;
	bool *seen;
	size_t n, size = sbx_sweep_plan_size(p), dupes = 0, results = 0;
	sim_cluster *c;

	for (size_t i = 0; i < ENGINES; i++) {
		specs[i] = (sim_engine_spec)SIM_ENGINE_SPEC_INIT;
		specs[i].speed = i % 2 ? 2 : 1;
		snprintf(urls[i], sizeof(urls[i]), "sim://%zu", i);
		engines[i] = (sbx_sweep_engine){.url = urls[i], .jobs = 2};
	}
	specs[3].fail_after = 10; /* dies after a couple of episodes */
	specs[7].hang_after = 0;  /* never answers */
	specs[7].op_timeout_ms = 50;
	c = sim_cluster_new(specs, ENGINES, 0.01, 7);

	sweep(p, c, &cfg, engines, ENGINES, &out, &r);
	ck_assert_msg(out.stop == SBX_SWEEP_COMPLETE, "stopped: %s", out.reason);
	ck_assert_uint_eq(out.remaining, 0);
	/* Every episode has exactly one result; infra attempts only on the two bad engines. */
	seen = calloc(size, sizeof(*seen));
	recs = sbx_sweep_results_records(r, &n);
	for (size_t i = 0; i < n; i++) {
		if (!sbx_sweep_record_done(&recs[i])) {
			ck_assert(strcmp(recs[i].engine, "sim://3") == 0 ||
				  strcmp(recs[i].engine, "sim://7") == 0);
			continue;
		}
		/* Loaded and appended lines of one episode fold into its first result. */
		dupes += seen[recs[i].episode] + (recs[i].lines > 1);
		seen[recs[i].episode] = true;
		results++;
	}
	ck_assert_uint_eq(dupes, 0);
	ck_assert_uint_eq(results, size);
	/* The bad engines were drained early; every good engine did a share of the work. */
	ck_assert_uint_le(on[3] + on[7], 4);
	for (size_t i = 0; i < ENGINES; i++)
		if (i != 3 && i != 7)
			ck_assert_uint_gt(on[i], 0);
	sbx_sweep_results_free(r);
	sim_cluster_free(c);
	sbx_sweep_plan_free(p);
	free(seen);
}
END_TEST

START_TEST(scheduler_resumes_a_simulated_sweep)
{
	static volatile sig_atomic_t stop = 0;
	sbx_sweep_plan *p = sim_plan_new(3, 1, 30, 0);
	sim_engine_spec spec = SIM_ENGINE_SPEC_INIT;
	sbx_sweep_engine e = {.url = "sim://0", .jobs = 4};
	sim_episode_config cfg = {.agent = {10, 0}, .p_pass = 1};
	sbx_sweep_results *r = NULL;
	sbx_sweep_outcome out;
	sbx_sweep_opts o = SBX_SWEEP_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_sweep_record *recs;
	size_t n, first;
	sim_cluster *c = sim_cluster_new(&spec, 1, 0.01, 3);

	/* The first run stops at once: at most what had started is recorded. */
	stop = 2;
	cfg.cluster = c;
	o.dir = sbx_test_scratch;
	o.engines = &e;
	o.n_engines = 1;
	o.stop = &stop;
	o.attempt = sim_episode_attempt;
	o.attempt_userdata = &cfg;
	ck_assert_int_eq(sbx_sweep_results_open(sbx_test_scratch, p, &r, NULL, &err), 0);
	ck_assert_int_eq(sbx_sweep_execute(p, r, &o, &out, &err), 0);
	ck_assert_int_eq(out.stop, SBX_SWEEP_INTERRUPTED);
	sbx_sweep_results_records(r, &first);
	sbx_sweep_results_free(r);

	/* The resume finishes the rest, and only the rest. */
	stop = 0;
	ck_assert_int_eq(sbx_sweep_results_open(sbx_test_scratch, p, &r, NULL, &err), 0);
	ck_assert_int_eq(sbx_sweep_execute(p, r, &o, &out, &err), 0);
	ck_assert_int_eq(out.stop, SBX_SWEEP_COMPLETE);
	recs = sbx_sweep_results_records(r, &n);
	ck_assert_uint_eq(n, 90);
	ck_assert_uint_le(first, 4);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(recs[i].status, SBX_RUN_PASS);
		ck_assert_uint_le(recs[i].lines, 1); /* no episode ran twice */
	}
	sbx_sweep_results_free(r);
	sim_cluster_free(c);
	sbx_sweep_plan_free(p);
}
END_TEST

/*
 * serve's warm pool over simulated engines: when claims come faster than the
 * fillers, every engine is refilled in turn, not the first few only (ties
 * used to go to the lowest index, so the other engines sat idle).
 */
/* A pool of ps over the simulated engines urls (sim://i of cluster c). */
static void pool_opts(serve_pool_opts *po, sbx_serve_pool_spec *ps, const char **urls,
		      size_t n_engines, serve_metrics *m, pthread_mutex_t *lock, sim_cluster *c)
{
	*po = (serve_pool_opts){.pools = ps,
				.n_pools = 1,
				.idle_ttl_s = 3600,
				.max_timeout_s = 600,
				.engines = urls,
				.n_engines = n_engines,
				.service_id = "t",
				.metrics = m,
				.lock = lock,
				.backend = sim_backend_new,
				.backend_userdata = c};
}

START_TEST(serve_pool_refills_every_engine)
{
	enum { ENGINES = 20, CLAIMS = 400 };
	sim_engine_spec spec = SIM_ENGINE_SPEC_INIT;
	sim_cluster *c = cluster(&spec, ENGINES, 0.002);
	const char *urls[ENGINES];
	char names[ENGINES][16];
	sbx_serve_pool_spec ps = {.image = "sim-image", .target = 1};
	serve_metrics m = {0};
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	serve_pool_opts po = {0};
	serve_pool *pool = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_run *run = NULL;
	unsigned per[ENGINES] = {0};
	int64_t until;

	for (size_t i = 0; i < ENGINES; i++) {
		snprintf(names[i], sizeof(names[i]), "sim://%zu", i);
		urls[i] = names[i];
	}
	ck_assert_msg(sim_fit_run(&run, sbx_test_scratch, "fit", &err) == 0, "%s", err.msg);
	pool_opts(&po, &ps, urls, ENGINES, &m, &lock, c);
	po.concurrency = 2;
	ck_assert_msg(sbx_serve__pool_new(&pool, &po, &err) == 0, "%s", err.msg);
	until = sbx_now_ms() + 20000;
	for (unsigned n = 0; n < CLAIMS && sbx_now_ms() < until;) {
		size_t e = 0;
		sbx_warm *w = sbx_serve__pool_take(pool, run, &e);

		if (!w) {
			usleep(200);
			continue;
		}
		per[e]++;
		n++;
		sbx_warm_free(w);
		sbx_serve__pool_end(pool, e, false, NULL);
	}
	/* A fair share is 20 each; the lowest-index preference left most at 1. */
	for (size_t i = 0; i < ENGINES; i++)
		ck_assert_msg(per[i] >= 5, "engine %zu: %u of %d claims", i, per[i], CLAIMS);
	sbx_serve__pool_free(pool);
	sbx_run_free(run);
	sim_cluster_free(c);
}
END_TEST

static bool any_fits(const sbx_warm *w, const void *arg)
{
	(void)w;
	(void)arg;
	return true;
}

static unsigned pool_size(serve_pool *pool)
{
	serve_pool_gauge *g = NULL;
	size_t n = sbx_serve__pool_gauges(pool, &g);
	unsigned size = n ? g[0].size + g[0].filling : 0;

	free(g);
	return size;
}

static void wait_full(serve_pool *pool)
{
	int64_t until = sbx_now_ms() + 10000;

	while (!sbx_serve__pool_full(pool) && sbx_now_ms() < until)
		usleep(2000);
	ck_assert(sbx_serve__pool_full(pool));
}

/*
 * --reuse for /v1/sandboxes: a sandbox taken from the pool is replaced by a
 * filler; its reset brings it back past the target, up to the caller's
 * bound (a create meanwhile is told to wait for it), so the pool grows to
 * what its clients use at once.
 */
START_TEST(serve_pool_sandbox_comes_back)
{
	sim_engine_spec spec = SIM_ENGINE_SPEC_INIT;
	sim_cluster *c = cluster(&spec, 1, 0.002);
	const char *urls[1] = {"sim://0"};
	sbx_serve_pool_spec ps = {.image = "sim-image", .target = 1};
	serve_metrics m = {0};
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	serve_pool_opts po = {0};
	serve_pool *pool = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_warm *w, *x, *y;
	size_t e = 9;

	pool_opts(&po, &ps, urls, 1, &m, &lock, c);
	po.concurrency = 1;
	po.reuse = 2;
	ck_assert_msg(sbx_serve__pool_new(&pool, &po, &err) == 0, "%s", err.msg);
	wait_full(pool);
	w = sbx_serve__pool_take_fit(pool, any_fits, NULL, &e);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(e, 0);
	wait_full(pool); /* a filler replaced it */
	/* Bound 1: the pool already holds one. */
	ck_assert(!sbx_serve__pool_reset_begin(pool, 0, w, 1));
	ck_assert(sbx_serve__pool_reset_begin(pool, 0, w, 4));
	ck_assert(sbx_serve__pool_wait_back(pool, "sim-image", sbx_now_ms() + 20));
	ck_assert(!sbx_serve__pool_wait_back(pool, "other-image", sbx_now_ms() + 1000));
	sbx_serve__pool_end_sandbox(pool, 0, false, "sim-image", true, w);
	ck_assert_uint_eq(pool_size(pool), 2); /* past the target */
	ck_assert(!sbx_serve__pool_wait_back(pool, "sim-image", sbx_now_ms() + 1000));
	x = sbx_serve__pool_take_fit(pool, any_fits, NULL, &e);
	y = sbx_serve__pool_take_fit(pool, any_fits, NULL, &e);
	ck_assert(x && y && (x == w || y == w));
	sbx_warm_free(x);
	sbx_warm_free(y);
	sbx_serve__pool_end_sandbox(pool, 0, false, "sim-image", false, NULL);
	sbx_serve__pool_end_sandbox(pool, 0, false, "sim-image", false, NULL);
	wait_full(pool);
	sbx_serve__pool_free(pool);
	sim_cluster_free(c);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "backend", NULL, NULL, 0, engine_urls, a_sandbox_lives_and_goes,
		      capacity_refuses_then_frees, refused_dead_and_dying,
		      hung_engine_times_out_and_latency_is_scaled,
		      draws_repeat_and_follow_the_median);
	SBX_TEST_CASE(s, "sweep", sbx_test_scratch_setup, sbx_test_scratch_teardown, 60,
		      scheduler_over_simulated_engines, scheduler_resumes_a_simulated_sweep,
		      serve_pool_refills_every_engine, serve_pool_sandbox_comes_back);
}

SBX_TEST_MAIN("sim", add_cases)
