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

/* One benchmark: its settings, the simulated engines, the pool, the clients. */
typedef struct bench {
	config c;
	sim_cluster *cl;
	bool *failing; /* per engine: refuses everything partway */
	const char **urls;
	atomic_uint_fast64_t *per_engine; /* claims served */
	client *clients;
	char dir[64];
	sbx_run *run;
	serve_metrics m;
	pthread_mutex_t lock;
	sbx_serve_pool_spec spec;
	serve_pool *pool;
	double claim_s, cpu;
} bench;

/* The engines, their URLs, the run to fit; the plan printed. */
static int setup(bench *b)
{
	const config *c = &b->c;

	b->failing = calloc(c->engines, sizeof(*b->failing));
	b->urls = calloc(c->engines, sizeof(*b->urls));
	b->per_engine = calloc(c->engines, sizeof(*b->per_engine));
	b->clients = calloc(c->clients, sizeof(*b->clients));
	if (!b->failing || !b->urls || !b->per_engine || !b->clients ||
	    !(b->cl = make_cluster(c, b->failing)))
		return -1;
	for (size_t i = 0; i < c->engines; i++) {
		char *u;

		if (asprintf(&u, "sim://%zu", i) < 0)
			return -1;
		b->urls[i] = u;
	}
	if (fit_run(&b->run, b->dir, sizeof(b->dir)) < 0)
		return -1;
	printf("bench-serve-scale: %zu simulated engines x %u warm sandboxes, %u fillers, %u "
	       "clients, %zu claims, time scale %.3g, %.0f%% of engines failing\n",
	       c->engines, c->target, c->fillers, c->clients, c->claims, c->scale,
	       c->fail_frac * 100);
	fflush(stdout);
	return 0;
}

/* The pool started and waited for until every healthy engine's is full. */
static int fill(bench *b)
{
	serve_pool_opts po = {0};
	sbx_error err = SBX_ERROR_INIT;
	double t0, fill_s;

	b->spec = (sbx_serve_pool_spec){.image = "sim-image", .target = b->c.target};
	po.pools = &b->spec;
	po.n_pools = 1;
	po.concurrency = b->c.fillers;
	po.idle_ttl_s = 3600;
	po.max_timeout_s = 600;
	po.engines = b->urls;
	po.n_engines = b->c.engines;
	po.service_id = "serve-scale";
	po.metrics = &b->m;
	po.lock = &b->lock;
	po.backend = sim_backend_new;
	po.backend_userdata = b->cl;
	t0 = sbx_now_msf();
	if (sbx_serve__pool_new(&b->pool, &po, &err) < 0) {
		fprintf(stderr, "bench-serve-scale: %s\n", err.msg);
		return -1;
	}
	while (!sbx_serve__pool_full(b->pool) && sbx_now_msf() - t0 < 300000)
		usleep(20000);
	fill_s = (sbx_now_msf() - t0) / 1000;
	printf("fill: every healthy engine's pool full in %.2f s (%llu warm starts, %llu "
	       "failed)\n",
	       fill_s, (unsigned long long)b->m.warm_started,
	       (unsigned long long)b->m.engine_errors);
	return 0;
}

/* The clients' threads claim until c.claims are taken: b->claim_s, b->cpu. */
static void claim(bench *b)
{
	atomic_size_t left;
	size_t cap = b->c.claims / b->c.clients + 1;
	double cpu0, t0;

	atomic_store(&left, b->c.claims);
	cpu0 = cpu_s();
	t0 = sbx_now_msf();
	for (unsigned i = 0; i < b->c.clients; i++) {
		b->clients[i] = (client){.pool = b->pool,
					 .run = b->run,
					 .left = &left,
					 .per_engine = b->per_engine,
					 .take_us = calloc(cap, sizeof(double)),
					 .cap = cap};
		pthread_create(&b->clients[i].t, NULL, client_main, &b->clients[i]);
	}
	for (unsigned i = 0; i < b->c.clients; i++)
		pthread_join(b->clients[i].t, NULL);
	b->claim_s = (sbx_now_msf() - t0) / 1000;
	b->cpu = cpu_s() - cpu0;
}

/* Claims per second, the take's latency, CPU per claim, peak RSS. */
static void report_claims(bench *b)
{
	const config *c = &b->c;
	double *all = calloc(c->claims + c->clients, sizeof(double));
	size_t n_all = 0, misses = 0;

	for (unsigned i = 0; i < c->clients && all; i++) {
		memcpy(all + n_all, b->clients[i].take_us, b->clients[i].n * sizeof(double));
		n_all += b->clients[i].n;
		misses += b->clients[i].misses;
		free(b->clients[i].take_us);
	}
	if (all && n_all)
		qsort(all, n_all, sizeof(double), by_double);
	printf("claims: %zu in %.2f s, %.0f per second; %zu tries found the pool empty\n",
	       c->claims, b->claim_s, (double)c->claims / b->claim_s, misses);
	if (all && n_all)
		printf("claim (the pool's take: lock and scan over %zu engines): p50 %.1f us, p99 "
		       "%.1f us, max %.1f us\n",
		       c->engines, all[n_all / 2], all[n_all * 99 / 100], all[n_all - 1]);
	printf("CPU: %.1f us per claim, everything in the process (fillers' readiness checks, "
	       "the simulated engines' bookkeeping, clients); peak RSS %.1f MB\n",
	       b->cpu / (double)c->claims * 1e6, (double)peak_rss_kb() / 1024);
	free(all);
}

/* How claims spread over engines (by speed, per healthy engine), and which were drained. */
static void report_engines(bench *b)
{
	serve_engine_gauge *g = NULL;
	size_t n_g = sbx_serve__pool_engine_gauges(b->pool, &g);
	size_t drained = 0, drained_failing = 0, n_failing = 0, n_per = 0;
	double share[3] = {0}, *per = calloc(b->c.engines, sizeof(double));

	for (size_t i = 0; i < n_g; i++) {
		double sp = sim_cluster_speed(b->cl, i);

		drained += g[i].drained;
		drained_failing += g[i].drained && b->failing[i];
		if (!b->failing[i])
			share[sp == 0.5 ? 0
			      : sp == 1 ? 1
					: 2] +=
				(double)atomic_load(&b->per_engine[i]) / (double)b->c.claims;
	}
	for (size_t i = 0; i < b->c.engines; i++) {
		n_failing += b->failing[i];
		if (per && !b->failing[i])
			per[n_per++] = (double)atomic_load(&b->per_engine[i]);
	}
	if (per && n_per)
		printf("claims per healthy engine: min %.0f, p50 %.0f, max %.0f\n",
		       sbx_sweep_quantile(per, n_per, 0), sbx_sweep_quantile(per, n_per, 0.5),
		       sbx_sweep_quantile(per, n_per, 1));
	free(per);
	printf("engines: %zu of the %zu failing ones drained, %zu healthy ones drained; "
	       "%llu "
	       "warm starts failed; claims by speed: x0.5 %.1f%%, x1 %.1f%%, x2 %.1f%%\n",
	       drained_failing, n_failing, drained - drained_failing,
	       (unsigned long long)b->m.engine_errors, share[0] * 100, share[1] * 100,
	       share[2] * 100);
	free(g);
}

int main(int argc, char **argv)
{
	static bench b = {.lock = PTHREAD_MUTEX_INITIALIZER};

	if (parse(argc, argv, &b.c) < 0)
		return 2;
	if (setup(&b) < 0 || fill(&b) < 0)
		return 1;
	claim(&b);
	report_claims(&b);
	report_engines(&b);
	sbx_serve__pool_free(b.pool);
	sbx_run_free(b.run);
	(void)sbx_path_remove_tree_at(AT_FDCWD, b.dir);
	for (size_t i = 0; i < b.c.engines; i++)
		free((char *)b.urls[i]);
	sim_cluster_free(b.cl);
	return 0;
}
