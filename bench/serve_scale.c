/* SPDX-License-Identifier: MIT */
/*
 * bench-serve-scale: `serve`'s warm pool over a thousand simulated engines
 * (tests/sim), driven through its own code (lib/serve/warm_pool.c and
 * lib/run/warm.c: the fillers, the readiness check, draining), with client
 * threads claiming warm sandboxes as fast as they come. Prints the time to
 * fill every engine's pool, claims per second, the claim's own latency (the
 * pool's lock and scan, p50/p99), the process's CPU per claim, peak RSS, how
 * claims spread over engines of each speed, and which engines were drained.
 *
 *   bench-serve-scale [--engines N] [--target N] [--fillers N] [--clients N]
 *                     [--claims N] [--scale X] [--fail-frac X] [--seed N]
 *
 * A claim here ends at once (the warm sandbox is removed, the engine told the
 * episode ended): the episode itself is the lifecycle's, which
 * bench-sweep-scale and the real-engine benchmarks measure.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sbx/clock.h"
#include "sbx/path.h"
#include "sbx/run.h"
#include "sbx/warm.h"
#include "sbx/sweep.h"
#include "serve-internal.h"
#include "sim_backend.h"
#include "sim_episode.h"

typedef struct config {
	size_t engines, claims;
	unsigned target, fillers, clients;
	double scale, fail_frac;
	uint64_t seed;
} config;

typedef struct client {
	pthread_t t;
	serve_pool *pool;
	const sbx_run *run;
	atomic_size_t *left;
	atomic_uint_fast64_t *per_engine;
	double *take_us; /* each claim's sbx_serve__pool_take, microseconds */
	size_t n, cap, misses;
} client;

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void *client_main(void *arg)
{
	client *c = arg;

	for (;;) {
		size_t left = atomic_load(c->left), engine = 0;
		double t0;
		sbx_warm *w;

		if (left == 0)
			break;
		t0 = sbx_now_msf();
		w = sbx_serve__pool_take(c->pool, c->run, &engine);
		if (!w) {
			c->misses++;
			usleep(1000);
			continue;
		}
		if (c->n < c->cap)
			c->take_us[c->n++] = (sbx_now_msf() - t0) * 1000;
		if (atomic_compare_exchange_strong(c->left, &left, left - 1))
			atomic_fetch_add(&c->per_engine[engine], 1);
		sbx_warm_free(w); /* the episode ends at once: the sandbox goes */
		sbx_serve__pool_end(c->pool, engine, false, NULL);
	}
	return NULL;
}

static int parse(int argc, char **argv, config *c)
{
	static const struct option opts[] = {{"engines", required_argument, NULL, 'e'},
					     {"target", required_argument, NULL, 't'},
					     {"fillers", required_argument, NULL, 'f'},
					     {"clients", required_argument, NULL, 'c'},
					     {"claims", required_argument, NULL, 'n'},
					     {"scale", required_argument, NULL, 's'},
					     {"fail-frac", required_argument, NULL, 'x'},
					     {"seed", required_argument, NULL, 'r'},
					     {NULL, 0, NULL, 0}};
	int ch;

	*c = (config){.engines = 1000,
		      .claims = 100000,
		      .target = 2,
		      .fillers = 16,
		      .clients = 16,
		      .scale = 0.02,
		      .fail_frac = 0.05,
		      .seed = 1};
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'e':
			c->engines = strtoull(optarg, NULL, 10);
			break;
		case 't':
			c->target = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'f':
			c->fillers = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'c':
			c->clients = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			c->claims = strtoull(optarg, NULL, 10);
			break;
		case 's':
			c->scale = strtod(optarg, NULL);
			break;
		case 'x':
			c->fail_frac = strtod(optarg, NULL);
			break;
		case 'r':
			c->seed = strtoull(optarg, NULL, 10);
			break;
		default:
			fputs("usage: bench-serve-scale [--engines N] [--target N] [--fillers N] "
			      "[--clients N] [--claims N] [--scale X] [--fail-frac X] [--seed N]\n",
			      stderr);
			return -1;
		}
	}
	if (!c->engines || !c->target || !c->fillers || !c->clients || !c->claims) {
		fputs("bench-serve-scale: every count must be at least 1\n", stderr);
		return -1;
	}
	return 0;
}

/* A quarter at half speed, half nominal, a quarter double; fail_frac refuse all partway. */
static sim_cluster *make_cluster(const config *c, bool *failing)
{
	sim_engine_spec *v = calloc(c->engines, sizeof(*v));
	sim_cluster *cl;
	uint64_t x = c->seed;

	if (!v)
		return NULL;
	for (size_t i = 0; i < c->engines; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		v[i] = (sim_engine_spec)SIM_ENGINE_SPEC_INIT;
		v[i].speed = i % 4 == 0 ? 0.5 : i % 4 == 3 ? 2 : 1;
		failing[i] = (double)(x >> 11) * 0x1.0p-53 < c->fail_frac;
		if (failing[i]) /* after a few sandboxes of its own (3-4 operations each) */
			v[i].fail_after = 20 + (int64_t)((x >> 20) % 40);
	}
	cl = sim_cluster_new(v, c->engines, c->scale, c->seed);
	free(v);
	return cl;
}

/* One run of banking_reserve on the pool's image, prepared, for sbx_run_warm_fits. */
static int fit_run(sbx_run **out, char *dir, size_t dir_size)
{
	sbx_error err = SBX_ERROR_INIT;

	snprintf(dir, dir_size, "/tmp/sbx-serve-scale-XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	if (sim_fit_run(out, dir, "serve-scale-fit", &err) < 0) {
		fprintf(stderr,
			"bench-serve-scale: preparing the run to fit: %s\n"
			"(run it from the source tree, or set SBX_SOURCE_ROOT)\n",
			err.msg);
		return -1;
	}
	return 0;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	config c;
	sim_cluster *cl;
	bool *failing;
	char dir[64];
	sbx_run *run = NULL;
	serve_metrics m = {0};
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	serve_pool *pool = NULL;
	serve_pool_opts po = {0};
	sbx_serve_pool_spec spec;
	sbx_error err = SBX_ERROR_INIT;
	const char **urls;
	client *clients;
	atomic_size_t left;
	atomic_uint_fast64_t *per_engine;
	double t0, fill_s, cpu0, claim_s, cpu, *all, share[3] = {0};
	size_t n_all = 0, misses = 0, drained = 0, drained_failing = 0, cap;
	serve_engine_gauge *g = NULL;
	size_t n_g;

	if (parse(argc, argv, &c) < 0)
		return 2;
	failing = calloc(c.engines, sizeof(*failing));
	urls = calloc(c.engines, sizeof(*urls));
	per_engine = calloc(c.engines, sizeof(*per_engine));
	clients = calloc(c.clients, sizeof(*clients));
	if (!failing || !urls || !per_engine || !clients || !(cl = make_cluster(&c, failing)))
		return 1;
	for (size_t i = 0; i < c.engines; i++) {
		char *u;

		if (asprintf(&u, "sim://%zu", i) < 0)
			return 1;
		urls[i] = u;
	}
	if (fit_run(&run, dir, sizeof(dir)) < 0)
		return 1;
	printf("bench-serve-scale: %zu simulated engines x %u warm sandboxes, %u fillers, %u "
	       "clients, %zu claims, time scale %.3g, %.0f%% of engines failing\n",
	       c.engines, c.target, c.fillers, c.clients, c.claims, c.scale, c.fail_frac * 100);
	fflush(stdout);

	spec = (sbx_serve_pool_spec){.image = "sim-image", .target = c.target};
	po.pools = &spec;
	po.n_pools = 1;
	po.concurrency = c.fillers;
	po.idle_ttl_s = 3600;
	po.max_timeout_s = 600;
	po.engines = urls;
	po.n_engines = c.engines;
	po.service_id = "serve-scale";
	po.metrics = &m;
	po.lock = &lock;
	po.backend = sim_backend_new;
	po.backend_userdata = cl;
	t0 = sbx_now_msf();
	if (sbx_serve__pool_new(&pool, &po, &err) < 0) {
		fprintf(stderr, "bench-serve-scale: %s\n", err.msg);
		return 1;
	}
	while (!sbx_serve__pool_full(pool) && sbx_now_msf() - t0 < 300000)
		usleep(20000);
	fill_s = (sbx_now_msf() - t0) / 1000;
	printf("fill: every healthy engine's pool full in %.2f s (%llu warm starts, %llu "
	       "failed)\n",
	       fill_s, (unsigned long long)m.warm_started, (unsigned long long)m.engine_errors);

	atomic_store(&left, c.claims);
	cap = c.claims / c.clients + 1;
	cpu0 = cpu_s();
	t0 = sbx_now_msf();
	for (unsigned i = 0; i < c.clients; i++) {
		clients[i] = (client){.pool = pool,
				      .run = run,
				      .left = &left,
				      .per_engine = per_engine,
				      .take_us = calloc(cap, sizeof(double)),
				      .cap = cap};
		pthread_create(&clients[i].t, NULL, client_main, &clients[i]);
	}
	for (unsigned i = 0; i < c.clients; i++)
		pthread_join(clients[i].t, NULL);
	claim_s = (sbx_now_msf() - t0) / 1000;
	cpu = cpu_s() - cpu0;

	all = calloc(c.claims + c.clients, sizeof(double));
	for (unsigned i = 0; i < c.clients && all; i++) {
		memcpy(all + n_all, clients[i].take_us, clients[i].n * sizeof(double));
		n_all += clients[i].n;
		misses += clients[i].misses;
		free(clients[i].take_us);
	}
	if (all && n_all)
		qsort(all, n_all, sizeof(double), by_double);
	printf("claims: %zu in %.2f s, %.0f per second; %zu tries found the pool empty\n", c.claims,
	       claim_s, (double)c.claims / claim_s, misses);
	if (all && n_all)
		printf("claim (the pool's take: lock and scan over %zu engines): p50 %.1f us, p99 "
		       "%.1f us, max %.1f us\n",
		       c.engines, all[n_all / 2], all[n_all * 99 / 100], all[n_all - 1]);
	printf("CPU: %.1f us per claim, everything in the process (fillers' readiness checks, "
	       "the simulated engines' bookkeeping, clients); peak RSS %.1f MB\n",
	       cpu / (double)c.claims * 1e6, (double)peak_rss_kb() / 1024);

	n_g = sbx_serve__pool_engine_gauges(pool, &g);
	for (size_t i = 0; i < n_g; i++) {
		double sp = sim_cluster_speed(cl, i);

		drained += g[i].drained;
		drained_failing += g[i].drained && failing[i];
		if (!failing[i])
			share[sp == 0.5 ? 0
			      : sp == 1 ? 1
					: 2] +=
				(double)atomic_load(&per_engine[i]) / (double)c.claims;
	}
	{
		size_t n_failing = 0;

		double *per = calloc(c.engines, sizeof(double));
		size_t n_per = 0;

		for (size_t i = 0; i < c.engines; i++) {
			n_failing += failing[i];
			if (per && !failing[i])
				per[n_per++] = (double)atomic_load(&per_engine[i]);
		}
		if (per && n_per)
			printf("claims per healthy engine: min %.0f, p50 %.0f, max %.0f\n",
			       sbx_sweep_quantile(per, n_per, 0),
			       sbx_sweep_quantile(per, n_per, 0.5),
			       sbx_sweep_quantile(per, n_per, 1));
		free(per);
		printf("engines: %zu of the %zu failing ones drained, %zu healthy ones drained; "
		       "%llu "
		       "warm starts failed; claims by speed: x0.5 %.1f%%, x1 %.1f%%, x2 %.1f%%\n",
		       drained_failing, n_failing, drained - drained_failing,
		       (unsigned long long)m.engine_errors, share[0] * 100, share[1] * 100,
		       share[2] * 100);
	}
	free(g);
	free(all);
	sbx_serve__pool_free(pool);
	sbx_run_free(run);
	(void)sbx_path_remove_tree_at(AT_FDCWD, dir);
	for (size_t i = 0; i < c.engines; i++)
		free((char *)urls[i]);
	sim_cluster_free(cl);
	return 0;
}
