/* SPDX-License-Identifier: MIT */
/*
 * bench-sweep-scale: a sweep of a million episodes over a thousand simulated
 * engines, in one process, through the real scheduler, results file and
 * summary (tests/sim: the engines' operations take drawn, scaled times; the
 * agent and the grade are draws). Prints what issue 31 asks of it:
 *
 *   - the scheduler's CPU per episode (the process's CPU less the stand-in's);
 *   - RSS over time, and its peak;
 *   - the results file's size;
 *   - each engine's share of the episodes against its speed;
 *   - how long each failing engine took to drain;
 *   - how long `--resume` takes to schedule again after a kill at 50%;
 *   - how long the summary of the whole results file takes.
 *
 * The first half runs in a child that is SIGKILLed once half the episodes have
 * a result; the parent resumes the sweep from the directory, as `sweep
 * --resume` does, and finishes it. Usage:
 *
 *   bench-sweep-scale [--episodes N] [--engines N] [--jobs N] [--scale X]
 *                     [--fail-frac X] [--kill-at X] [--dir DIR] [--seed N]
 *
 * The directory defaults to a fresh one under /dev/shm (fsync there is free:
 * this measures the scheduler, not the disk) and is removed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sbx/clock.h"
#include "sbx/path.h"
#include "sbx/sweep.h"
#include "sim_backend.h"
#include "sim_episode.h"

typedef struct config {
	size_t episodes, engines;
	unsigned jobs;
	double scale, fail_frac, kill_at;
	uint64_t seed;
	char dir[256];
	bool own_dir;
} config;

/* What the child reports while it runs (shared memory: it is SIGKILLed). */
typedef struct shared {
	atomic_size_t done;
} shared;

/* --- engines ------------------------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/*
 * A quarter of the engines at half speed, half nominal, a quarter at double;
 * fail_frac of them fail partway through their share of the work (half stop
 * answering, half refuse everything). The same for a given seed in the child
 * and the parent.
 */
static sim_engine_spec *engine_specs(const config *c, bool *failing)
{
	sim_engine_spec *v = calloc(c->engines, sizeof(*v));
	double ops_each = 7.0 * (double)c->episodes / (double)c->engines;

	if (!v)
		return NULL;
	for (size_t i = 0; i < c->engines; i++) {
		uint64_t h = mix(c->seed * 1000003 + i);
		double u = (double)(h >> 11) * 0x1.0p-53, w = (double)(mix(h) >> 11) * 0x1.0p-53;

		v[i] = (sim_engine_spec)SIM_ENGINE_SPEC_INIT;
		v[i].speed = i % 4 == 0 ? 0.5 : i % 4 == 3 ? 2 : 1;
		v[i].p_refuse = 0.001;
		v[i].p_die = 0.001;
		v[i].op_timeout_ms = 10000;
		failing[i] = u < c->fail_frac;
		if (failing[i]) {
			/* Somewhere in the middle of what it would have done. */
			int64_t at = (int64_t)(ops_each * (0.2 + 0.6 * w));

			if (h & 1)
				v[i].hang_after = at;
			else
				v[i].fail_after = at;
		}
	}
	return v;
}

/* --- measuring ----------------------------------------------------------------- */

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* A field of /proc/<pid>/status in kB ("VmRSS", "VmHWM"); -1 when unreadable. */
static long proc_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t n = strlen(field);
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

/* The CPU seconds /proc/<pid>/stat says the process used (utime + stime). */
static double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long file_size(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* --- the two halves -------------------------------------------------------------- */

typedef struct run_ctx {
	const config *c;
	sim_cluster *cluster;
	sbx_sweep_engine *engines;
	char (*urls)[32];
	sim_episode_config ep;
	shared *sh;
	int64_t first_attempt_ms; /* resume: when the first attempt started */
} run_ctx;

/* The stand-in episode, noting when the first attempt started. userdata is &run_ctx.ep. */
static int counting_attempt(const sbx_sweep_attempt *a, sbx_sweep_record *out, void *userdata,
			    sbx_error *err)
{
	run_ctx *x = (run_ctx *)((char *)userdata - offsetof(run_ctx, ep));
	int64_t zero = 0;

	__atomic_compare_exchange_n(&x->first_attempt_ms, &zero, sbx_now_ms(), false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return sim_episode_attempt(a, out, userdata, err);
}

static void on_progress(const sbx_sweep_progress *p, void *userdata)
{
	shared *sh = userdata;

	if (sh)
		atomic_store(&sh->done, p->done);
}

static int run_sweep(run_ctx *x, const sbx_sweep_plan *plan, sbx_sweep_outcome *out, double *open_s,
		     double *open_cpu_s)
{
	sbx_sweep_opts o = SBX_SWEEP_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	sbx_sweep_results *r = NULL;
	int64_t t0 = sbx_now_ms();
	double cpu0 = cpu_s();
	int rc;

	o.dir = x->c->dir;
	o.engines = x->engines;
	o.n_engines = x->c->engines;
	o.backoff_ms = 100;
	o.infra_window = 2000; /* 5% of engines failing must not stop the sweep */
	o.infra_threshold = 0.5;
	o.attempt = counting_attempt;
	o.attempt_userdata = &x->ep;
	o.progress = on_progress;
	o.progress_userdata = x->sh;
	if (sbx_sweep_results_open(x->c->dir, plan, &r, NULL, &err) < 0) {
		fprintf(stderr, "bench-sweep-scale: %s\n", err.msg);
		return -1;
	}
	if (open_s)
		*open_s = (double)(sbx_now_ms() - t0) / 1000.0;
	if (open_cpu_s)
		*open_cpu_s = cpu_s() - cpu0;
	rc = sbx_sweep_execute(plan, r, &o, out, &err);
	sbx_sweep_results_free(r);
	if (rc < 0)
		fprintf(stderr, "bench-sweep-scale: %s\n", err.msg);
	return rc;
}

/* RSS samples of a process, every second, printed as they come. */
typedef struct sampler {
	pthread_t t;
	pid_t pid;
	volatile bool stop;
	long peak_kb;
	const config *c;
	const char *label;
	size_t (*done)(void *);
	void *done_ud;
} sampler;

static void *sample_main(void *arg)
{
	sampler *s = arg;
	int64_t t0 = sbx_now_ms();

	while (!s->stop) {
		long kb = proc_kb(s->pid, "VmRSS");

		if (kb > s->peak_kb)
			s->peak_kb = kb;
		printf("  %-7s t=%5.1f s  done=%8zu  RSS %6.1f MB\n", s->label,
		       (double)(sbx_now_ms() - t0) / 1000.0, s->done(s->done_ud),
		       (double)kb / 1024);
		fflush(stdout);
		for (int i = 0; i < 20 && !s->stop; i++)
			usleep(100000);
	}
	return NULL;
}

static size_t shared_done(void *ud)
{
	return atomic_load(&((shared *)ud)->done);
}

/* --- main ------------------------------------------------------------------------ */

static void usage(void)
{
	fputs("usage: bench-sweep-scale [--episodes N] [--engines N] [--jobs N] [--scale X]\n"
	      "                         [--fail-frac X] [--kill-at X] [--dir DIR] [--seed N]\n",
	      stderr);
}

static int parse(int argc, char **argv, config *c)
{
	static const struct option opts[] = {{"episodes", required_argument, NULL, 'n'},
					     {"engines", required_argument, NULL, 'e'},
					     {"jobs", required_argument, NULL, 'j'},
					     {"scale", required_argument, NULL, 's'},
					     {"fail-frac", required_argument, NULL, 'f'},
					     {"kill-at", required_argument, NULL, 'k'},
					     {"dir", required_argument, NULL, 'd'},
					     {"seed", required_argument, NULL, 'r'},
					     {NULL, 0, NULL, 0}};
	int ch;

	*c = (config){.episodes = 1000000,
		      .engines = 1000,
		      .jobs = 1,
		      /*
		       * 0.5: a drawn 300 ms agent turn sleeps 150 ms, so 1,000 engines
		       * ask ~4,000 episodes/s of 2 cores and the CPU is not what paces
		       * them. At 0.02 the machine is saturated, every episode waits
		       * for a core as long as it runs, and fast engines' shares fall
		       * (x2 engines did 29.5% for 44.7%; 0.9% off at 0.5). ~4.5 min.
		       */
		      .scale = 0.5,
		      .fail_frac = 0.05,
		      .kill_at = 0.5,
		      .seed = 1};
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'n':
			c->episodes = strtoull(optarg, NULL, 10);
			break;
		case 'e':
			c->engines = strtoull(optarg, NULL, 10);
			break;
		case 'j':
			c->jobs = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 's':
			c->scale = strtod(optarg, NULL);
			break;
		case 'f':
			c->fail_frac = strtod(optarg, NULL);
			break;
		case 'k':
			c->kill_at = strtod(optarg, NULL);
			break;
		case 'd':
			snprintf(c->dir, sizeof(c->dir), "%s", optarg);
			break;
		case 'r':
			c->seed = strtoull(optarg, NULL, 10);
			break;
		default:
			usage();
			return -1;
		}
	}
	if (c->episodes < 100 || c->episodes % 100 || c->episodes > SBX_SWEEP_MAX_EPISODES ||
	    !c->engines || !c->jobs) {
		fprintf(stderr,
			"bench-sweep-scale: --episodes must be a multiple of 100 up to %d, "
			"engines and jobs at least 1\n",
			SBX_SWEEP_MAX_EPISODES);
		return -1;
	}
	return 0;
}

static int setup(config *c, run_ctx *x, sbx_sweep_plan **plan, bool *failing)
{
	sim_engine_spec *specs;
	sbx_error err = SBX_ERROR_INIT;

	if (!c->dir[0]) {
		snprintf(c->dir, sizeof(c->dir), "/dev/shm/sbx-sweep-scale-XXXXXX");
		if (!mkdtemp(c->dir)) {
			perror("mkdtemp");
			return -1;
		}
		c->own_dir = true;
	}
	/* 100 tasks × 1 agent × episodes/100 epochs, epoch-major as every sweep. */
	*plan = sim_plan_new(100, 1, (unsigned)(c->episodes / 100), 2);
	specs = engine_specs(c, failing);
	x->c = c;
	x->engines = calloc(c->engines, sizeof(*x->engines));
	x->urls = calloc(c->engines, sizeof(*x->urls));
	/* Shared with the child that runs the first half: its counts outlive its SIGKILL. */
	x->ep.results_on = mmap(NULL, c->engines * sizeof(*x->ep.results_on),
				PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (x->ep.results_on == MAP_FAILED)
		x->ep.results_on = NULL;
	x->ep.last_attempt_ms = calloc(c->engines, sizeof(*x->ep.last_attempt_ms));
	if (!*plan || !specs || !x->engines || !x->urls || !x->ep.results_on ||
	    !x->ep.last_attempt_ms) {
		fputs("bench-sweep-scale: out of memory\n", stderr);
		return -1;
	}
	for (size_t i = 0; i < c->engines; i++) {
		snprintf(x->urls[i], sizeof(x->urls[i]), "sim://%zu", i);
		x->engines[i] = (sbx_sweep_engine){.url = x->urls[i], .jobs = c->jobs};
	}
	x->cluster = sim_cluster_new(specs, c->engines, c->scale, c->seed);
	free(specs);
	x->ep.cluster = x->cluster;
	x->ep.agent = (sim_latency){300, 0.5};
	x->ep.p_pass = 0.6;
	if (sbx_sweep_plan_write(*plan, c->dir, &err) < 0) {
		fprintf(stderr, "bench-sweep-scale: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* The first half, in a child SIGKILLed at kill_at: its CPU and RSS read from /proc. */
static int first_half(run_ctx *x, const sbx_sweep_plan *plan, shared *sh)
{
	const config *c = x->c;
	size_t target = (size_t)((double)c->episodes * c->kill_at);
	sampler smp = {.label = "first", .c = c, .done = shared_done, .done_ud = sh};
	int64_t t0 = sbx_now_ms();
	double cpu = 0;
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		sbx_sweep_outcome out;

		x->sh = sh;
		_exit(run_sweep(x, plan, &out, NULL, NULL) < 0 ? 1 : 0);
	}
	smp.pid = pid;
	pthread_create(&smp.t, NULL, sample_main, &smp);
	while (atomic_load(&sh->done) < target && waitpid(pid, &status, WNOHANG) == 0) {
		double v = proc_cpu_s(pid);

		if (v >= 0)
			cpu = v;
		usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	smp.stop = true;
	pthread_join(smp.t, NULL);
	printf("first half: %zu episodes with a result in %.1f s, then SIGKILL; CPU %.1f s "
	       "(%.1f us per episode, stand-in included); peak RSS %.1f MB\n",
	       atomic_load(&sh->done), (double)(sbx_now_ms() - t0) / 1000.0, cpu,
	       cpu / (double)(atomic_load(&sh->done) ? atomic_load(&sh->done) : 1) * 1e6,
	       (double)smp.peak_kb / 1024);
	return 0;
}

static size_t self_done(void *ud)
{
	run_ctx *x = ud;

	return (size_t)atomic_load(&x->ep.attempts);
}

static void report_engines(run_ctx *x, const bool *failing)
{
	static const double speeds[] = {0.5, 1, 2};
	const config *c = x->c;
	double total = 0, speed_total = 0, worst = 0, *dev = calloc(c->engines, sizeof(double)),
	       drain_max = 0, drain_sum = 0, class_share[3] = {0}, class_expect[3] = {0};
	size_t n_good = 0, n_failing = 0, over10 = 0;

	for (size_t i = 0; i < c->engines; i++)
		if (!failing[i]) {
			total += (double)atomic_load(&x->ep.results_on[i]);
			speed_total += sim_cluster_speed(x->cluster, i);
		}
	for (size_t i = 0; i < c->engines && dev; i++) {
		double share, expect, speed = sim_cluster_speed(x->cluster, i);

		if (failing[i]) {
			sim_engine_stats st;
			int64_t l = atomic_load(&x->ep.last_attempt_ms[i]);

			sim_cluster_stats(x->cluster, i, &st);
			if (st.broken_ms > 0 && l >= st.broken_ms) {
				double d = (double)(l - st.broken_ms) / 1000.0;

				drain_sum += d;
				drain_max = d > drain_max ? d : drain_max;
				n_failing++;
			}
			continue;
		}
		share = (double)atomic_load(&x->ep.results_on[i]) / total;
		expect = speed / speed_total;
		for (int k = 0; k < 3; k++)
			if (speed == speeds[k])
				class_share[k] += share, class_expect[k] += expect;
		dev[n_good] = fabs(share / expect - 1);
		worst = dev[n_good] > worst ? dev[n_good] : worst;
		over10 += dev[n_good] > 0.10;
		n_good++;
	}
	if (dev && n_good) {
		printf("engine shares (whole sweep, %zu healthy engines): |share / "
		       "speed-proportional share - 1| p50 %.1f%%, p99 %.1f%%, max %.1f%%; %zu over "
		       "10%% (target: none)\n",
		       n_good, sbx_sweep_quantile(dev, n_good, 0.5) * 100,
		       sbx_sweep_quantile(dev, n_good, 0.99) * 100, worst * 100, over10);
		printf("  by speed: x0.5 engines did %.1f%% (speed-proportional %.1f%%), x1 %.1f%% "
		       "(%.1f%%), x2 %.1f%% (%.1f%%)\n",
		       class_share[0] * 100, class_expect[0] * 100, class_share[1] * 100,
		       class_expect[1] * 100, class_share[2] * 100, class_expect[2] * 100);
	}
	printf("failing engines: %zu failed during the resumed half; drain took mean %.2f s, max "
	       "%.2f s (from its first failed operation to the end of its last attempt, wall "
	       "clock at time scale %.3g)\n",
	       n_failing, n_failing ? drain_sum / (double)n_failing : 0, drain_max, c->scale);
	free(dev);
}

static int second_half(run_ctx *x, const sbx_sweep_plan *plan, const bool *failing)
{
	const config *c = x->c;
	sampler smp = {.pid = getpid(), .label = "resume", .c = c, .done = self_done, .done_ud = x};
	sbx_sweep_outcome out;
	double cpu0 = cpu_s(), cpu, open_s = 0, open_cpu = 0, sched;
	int64_t t0 = sbx_now_ms();
	size_t ran;

	pthread_create(&smp.t, NULL, sample_main, &smp);
	if (run_sweep(x, plan, &out, &open_s, &open_cpu) < 0)
		return -1;
	smp.stop = true;
	pthread_join(smp.t, NULL);
	cpu = cpu_s() - cpu0;
	ran = (size_t)atomic_load(&x->ep.attempts);
	sched = cpu - (double)atomic_load(&x->ep.cpu_ns) / 1e9;
	printf("resume: results loaded in %.2f s (%.2f s of CPU); first episode scheduled %.2f s "
	       "after start (target < 10 s)\n",
	       open_s, open_cpu, (double)(x->first_attempt_ms - t0) / 1000.0);
	printf("resumed half: %zu attempts in %.1f s, stop=%d%s%s; remaining %zu\n", ran,
	       out.elapsed_s, (int)out.stop, out.reason[0] ? ": " : "", out.reason, out.remaining);
	printf("scheduler CPU: %.1f us per attempt (process %.1f s less the stand-in's %.1f s; "
	       "target < 50 us)\n",
	       sched / (double)(ran ? ran : 1) * 1e6, cpu,
	       (double)atomic_load(&x->ep.cpu_ns) / 1e9);
	printf("peak RSS: %.1f MB (VmHWM %.1f MB; target < 256 MB)\n", (double)smp.peak_kb / 1024,
	       (double)proc_kb(getpid(), "VmHWM") / 1024);
	report_engines(x, failing);
	return 0;
}

static int summary(const config *c, const sbx_sweep_plan *plan)
{
	sbx_sweep_results *r = NULL;
	sbx_sweep_summary *s = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf text = SBX_BUF_INIT(1 << 24);
	const sbx_sweep_record *recs;
	int64_t t0 = sbx_now_ms();
	double cpu0 = cpu_s();
	size_t n;

	if (sbx_sweep_results_load(c->dir, plan, &r, &err) < 0 ||
	    (recs = sbx_sweep_results_records(r, &n),
	     sbx_sweep_summarise(plan, recs, n, &s, &err) < 0) ||
	    sbx_sweep_summary_text(s, &text) < 0) {
		fprintf(stderr, "bench-sweep-scale: summary: %s\n", err.msg);
		return -1;
	}
	printf("summary (load, summarise, the table) of %zu records from a %.1f MB results.jsonl: "
	       "%.2f s, %.2f s of CPU (target < 5 s); overall %u of %u done, pass rate %.3f\n",
	       n, (double)file_size(c->dir, "results.jsonl") / 1e6,
	       (double)(sbx_now_ms() - t0) / 1000.0, cpu_s() - cpu0, s->overall.done,
	       s->overall.planned, s->overall.pass_rate);
	sbx_buf_free(&text);
	sbx_sweep_summary_free(s);
	sbx_sweep_results_free(r);
	return 0;
}

int main(int argc, char **argv)
{
	config c;
	run_ctx x = {0};
	sbx_sweep_plan *plan = NULL;
	bool *failing;
	shared *sh;
	int rc = 1;

	if (parse(argc, argv, &c) < 0)
		return 2;
	failing = calloc(c.engines, sizeof(*failing));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!failing || sh == MAP_FAILED || setup(&c, &x, &plan, failing) < 0)
		return 1;
	printf("bench-sweep-scale: %zu episodes over %zu simulated engines x %u jobs, time scale "
	       "%.3g, %.0f%% of engines failing partway, kill at %.0f%%, in %s\n",
	       c.episodes, c.engines, c.jobs, c.scale, c.fail_frac * 100, c.kill_at * 100, c.dir);
	fflush(stdout);
	if (first_half(&x, plan, sh) == 0 && second_half(&x, plan, failing) == 0 &&
	    summary(&c, plan) == 0)
		rc = 0;
	printf("results.jsonl: %.1f MB for %zu episodes (%.0f bytes per line)\n",
	       (double)file_size(c.dir, "results.jsonl") / 1e6, c.episodes,
	       (double)file_size(c.dir, "results.jsonl") / (double)c.episodes);
	if (c.own_dir)
		(void)sbx_path_remove_tree_at(AT_FDCWD, c.dir);
	sim_cluster_free(x.cluster);
	sbx_sweep_plan_free(plan);
	return rc;
}
