/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl sweep: many episodes (tasks × agents × epochs) on a pool of job
 * slots, resumable, summarised; `sweep show` and `sweep compare` read sweep
 * directories back. The work is lib/sweep's; this file is options and output.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_run.h" /* a sweep grades and limits exactly as `run` does */
#include "engines.h"
#include "sbx-config.h"
#include "sbx/file.h"
#include "sbx/labels.h"
#include "sbx/sweep.h"

#define DEFAULT_RETRIES	   2
#define DEFAULT_STOP_GRACE 10
#define TASK_FILE_MAX	   (4 << 20)

static volatile sig_atomic_t arg_signals;

static void on_signal(int sig)
{
	(void)sig;
	cli_count_stop_signal(&arg_signals,
			      "\nsandboxctl: sweep: stopping: no new episodes; running ones "
			      "get --stop-grace to finish (Ctrl-C again interrupts them now)\n",
			      "\nsandboxctl: sweep: interrupting the running episodes\n");
}

static void help(void)
{
	printf("Usage: sandboxctl sweep --task NAME... --agent CMD... [options]\n"
	       "       sandboxctl sweep --resume DIR [--jobs N] [--engine URL...] [--retries N]\n"
	       "       sandboxctl sweep show DIR [--json]\n"
	       "       sandboxctl sweep compare DIR_A DIR_B [--json]\n\n"
	       "Runs every task with every agent --epochs times, --jobs episodes at a time,\n"
	       "each one the same lifecycle as 'sandboxctl run' (hardened sandbox, agent,\n"
	       "grade, removal). The sweep directory (--out) holds sweep.json (the plan),\n"
	       "results.jsonl (one fsync'd line per attempt), runs/<run-id>/ and\n"
	       "summary.json. Episodes run in epoch order, so a partial sweep is a fair\n"
	       "sample; --resume runs exactly what has no result yet.\n\n"
	       "What to run:\n"
	       "  --task NAME        a task (repeat); --tasks all: every task; --task-file F:\n"
	       "                     one name per line ('#' comments)\n"
	       "  --agent CMD        an agent, as 'run --agent' takes it (repeat: each agent\n"
	       "                     gets its rows in the summary): oracle, demo,\n"
	       "                     'llm --model X', a command\n"
	       "  --epochs N         episodes per task and agent (default 1)\n"
	       "  --seed-from N      seedable tasks: epoch e runs the instance of seed N+e\n"
	       "                     (the same seeds for every agent); others run as committed\n"
	       "  --pass-at K,...    pass@k values to report besides pass@1 (k <= epochs)\n"
	       "  --timeout SECONDS  each episode's deadline (default: each task's)\n"
	       "  --image REF        sandbox image (default: each task's)\n"
	       "  --memory SIZE, --cpus N, --pids N, --runtime NAME, --grace S,\n"
	       "  --network none|published, --seccomp sandbox|default, --allow-no-seccomp\n"
	       "                     each episode's limits, as 'sandboxctl run' takes them\n"
	       "                     (default: each task's, else run's defaults)\n"
	       "  --tasks-dir DIR    tasks directory (default: $SBX_TASKS_DIR or ./tasks)\n"
	       "  --tag KEY=VALUE    recorded in sweep.json (repeat)\n"
	       "  --out DIR          the sweep directory (default sweeps/<UTC time>); must be\n"
	       "                     new or empty\n\n"
	       "How to run it:\n"
	       "  --jobs N           concurrent episodes on the default engine (default: from\n"
	       "                     the engine's CPUs and memory and the tasks' memory limit)\n"
	       "  --engine URL       an engine (repeat to spread episodes over several):\n"
	       "                     unix:///path or tcp://host:port (TLS from\n"
	       "                     DOCKER_CERT_PATH); URL#jobs=N gives it N slots (default\n"
	       "                     --jobs). Each must have the image; one that fails 3\n"
	       "                     times in a row is drained and its work re-queued\n"
	       "  --reuse N          each job's sandbox serves up to N episodes, reset in\n"
	       "                     place between two by PID 1 and checked (default 1:\n"
	       "                     single use; GUI and published runs stay single use;\n"
	       "                     docs/serve.md, \"Reuse\")\n"
	       "  --retries N        extra attempts for an infra_error episode, with backoff\n"
	       "                     (default %d); other statuses are results, never retried.\n"
	       "                     More than 20%% infra errors in the last 20 attempts\n"
	       "                     stops the sweep (exit 3)\n"
	       "  --stop-grace S     after Ctrl-C, how long running episodes may finish\n"
	       "                     before they are interrupted (default %d; a second\n"
	       "                     Ctrl-C interrupts at once)\n"
	       "  --require-pass R   exit 1 when the overall pass rate is below R (0..1)\n"
	       "  --quiet            no progress; --json: the summary as one JSON document\n\n"
	       "Summary (printed, and summary.json): per task × agent and overall: episodes,\n"
	       "pass rate with a 95%% Wilson interval, mean score with a bootstrap 95%%\n"
	       "interval, unbiased pass@k, agent errors, timeouts, infra errors (attempts),\n"
	       "median agent time and overhead (p95 too in summary.json), tool calls and\n"
	       "token usage (llm).\n"
	       "'compare' pairs episodes by task, epoch and seed and gives the exact sign\n"
	       "test's p-value on pass/fail and a paired bootstrap interval on the score.\n\n"
	       "Exit status: 0 every episode has a result (whatever it scored), 1 under\n"
	       "--require-pass, 2 usage or configuration (an episode could not be prepared:\n"
	       "the agent or a task), 3 engine or infrastructure (episodes left without a\n"
	       "result, too many infra errors), 130 interrupted (resume with --resume).\n",
	       DEFAULT_RETRIES, DEFAULT_STOP_GRACE);
}

/* The limits `run` takes, parsed by cmd_run.c's parser so the two cannot drift apart. */
static bool is_limit(const char *name)
{
	static const char *const names[] = {"memory", "cpus",	 "pids",    "runtime",
					    "grace",  "network", "seccomp", NULL};

	return cli_name_in(name, names);
}

/* What sweep.json holds: a resumed sweep takes it from there, never from flags. */
static bool is_plan_option(const char *name)
{
	static const char *const names[] = {
		"task", "tasks",   "task-file", "agent",     "epochs", "seed-from", "pass-at",
		"out",	"timeout", "image",	"tasks-dir", "tag",    NULL};

	return cli_name_in(name, names) || is_limit(name);
}

/* ---- building the plan ------------------------------------------------------ */

static int strv_push(char ***v, size_t *n, const char *s, size_t max)
{
	char **nv;

	if (*n >= max)
		return -E2BIG;
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int read_task_file(const char *path, sbx_sweep_plan *p)
{
	_cleanup_free_ char *text = NULL;
	sbx_error err = SBX_ERROR_INIT;
	size_t len;
	char *save = NULL;

	if (sbx_file_read_capped(AT_FDCWD, path, TASK_FILE_MAX, &text, &len, &err) < 0)
		return cli_error("--task-file: %s", sbx_error_message(&err)), -1;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *e;

		line += strspn(line, " \t\r");
		e = line + strcspn(line, "#");
		while (e > line && strchr(" \t\r", e[-1]))
			e--;
		*e = '\0';
		if (*line && strv_push(&p->tasks, &p->n_tasks, line, SBX_SWEEP_MAX_TASKS) < 0)
			return cli_error("--task-file: too many tasks"), -1;
	}
	return 0;
}

static int parse_pass_at(const char *arg, sbx_sweep_plan *p)
{
	_cleanup_free_ char *copy = strdup(arg);
	char *save = NULL;

	if (!copy)
		return -1;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		long k = cli_parse_long(w, 1, SBX_SWEEP_MAX_EPOCHS);
		bool seen = false;

		if (k < 0)
			return cli_error("--pass-at: '%s' is not a number >= 1", w), -1;
		for (size_t i = 0; i < p->n_pass_at; i++)
			seen = seen || p->pass_at[i] == (unsigned)k;
		if (seen)
			continue;
		if (p->n_pass_at >= SBX_SWEEP_MAX_PASS_AT)
			return cli_error("--pass-at: at most %d values", SBX_SWEEP_MAX_PASS_AT), -1;
		p->pass_at[p->n_pass_at++] = (unsigned)k;
	}
	return 0;
}

/*
 * Loads each task once before anything runs: a typo fails now, not after an
 * hour; seedability, image and memory limit come from the task itself.
 */
static int resolve_tasks(sbx_sweep_plan *p, char ***images, uint64_t *max_memory)
{
	_cleanup_free_ char *dir = p->tasks_dir ? strdup(p->tasks_dir) : sbx_task_dir_default();
	size_t n_images = 0;
	/* A resumed plan keeps its own: the seeds of its episodes must not change. */
	bool resumed = p->seedable != NULL;

	if (!resumed)
		p->seedable = calloc(p->n_tasks, sizeof(*p->seedable));
	*images = calloc(p->n_tasks + 1, sizeof(**images));
	if (!dir || !p->seedable || !*images)
		return cli_error("out of memory"), -1;
	*max_memory = 0;
	for (size_t i = 0; i < p->n_tasks; i++) {
		_cleanup_free_ char *yaml = NULL;
		sbx_task *t = NULL;
		sbx_error err = SBX_ERROR_INIT;
		const char *img;
		bool seen = false;

		if (sbx_task_resolve(dir, p->tasks[i], &yaml, &err) < 0 ||
		    sbx_task_load(yaml, &t, &err) < 0)
			return cli_error("sweep: task '%s': %s", p->tasks[i],
					 sbx_error_message(&err)),
			       -1;
		if (!resumed)
			p->seedable[i] = sbx_task_seedable(t);
		img = p->image			 ? p->image
		      : t->gui || t->libreoffice ? SBX_IMAGE_FULL
						 : SBX_IMAGE_SLIM;
		if (t->limits.memory_bytes > *max_memory)
			*max_memory = t->limits.memory_bytes;
		for (size_t j = 0; j < n_images; j++)
			seen = seen || strcmp((*images)[j], img) == 0;
		if (!seen)
			(*images)[n_images++] = strdup(img);
		sbx_task_free(t);
	}
	return 0;
}

/* ---- progress and output ---------------------------------------------------- */

typedef struct progress_ctx {
	bool quiet, tty;
	size_t width; /* of the last live line */
} progress_ctx;

static void on_progress(const sbx_sweep_progress *p, void *userdata)
{
	progress_ctx *c = userdata;
	const sbx_sweep_record *r = p->last;
	char eta[32] = "?";

	if (c->quiet)
		return;
	if (p->eta_s >= 0)
		snprintf(eta, sizeof(eta), "%.0fs", p->eta_s);
	if (c->tty) {
		char line[256];
		int n = snprintf(line, sizeof(line),
				 "\r%zu/%zu done, pass %.0f%%, %.1f/min, ETA %s, running %zu, "
				 "retried %zu",
				 p->done, p->planned, p->done ? 100.0 * p->passed / p->done : 0,
				 p->per_min, eta, p->running, p->retried);

		fprintf(stderr, "%s%*s", line,
			n > 0 && (size_t)n < c->width ? (int)(c->width - n) : 0, "");
		c->width = n > 0 ? (size_t)n : 0;
		fflush(stderr);
		return;
	}
	if (r)
		fprintf(stderr, "sweep: [%zu/%zu] %s %s (agent %s, epoch %u%s): %s%s%s\n", p->done,
			p->planned, r->run_id, r->task, r->agent, r->epoch + 1,
			r->attempt > 1 ? ", retry" : "", sbx_run_status_name(r->status),
			r->error ? ": " : "", r->error ? r->error : "");
}

/* One line for what loading results.jsonl skipped: where the first was, and why. */
static void warn_dropped(const sbx_sweep_results *res, const char *dir, const char *what)
{
	const char *why = NULL;
	size_t line = 0;
	unsigned n = sbx_sweep_results_dropped(res, &line, &why);

	if (n)
		cli_error("sweep: %s/results.jsonl:%zu: %s; %u line(s) %s", dir, line, why, n,
			  what);
}

static int print_summary(const sbx_sweep_plan *p, const char *dir, bool json, bool write,
			 double *pass_rate)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *res = NULL;
	_cleanup_(sbx_sweep_summary_freep) sbx_sweep_summary *s = NULL;
	_cleanup_(sbx_buf_free) sbx_buf text = SBX_BUF_INIT(64 << 20);
	sbx_error err = SBX_ERROR_INIT;
	const sbx_sweep_record *recs;
	size_t n;

	if (sbx_sweep_results_load(dir, p, &res, &err) < 0 ||
	    (recs = sbx_sweep_results_records(res, &n), false) ||
	    sbx_sweep_summarise(p, recs, n, &s, &err) < 0 ||
	    (write && sbx_sweep_summary_write(s, dir, &err) < 0))
		return cli_error("sweep '%s': %s", dir, sbx_error_message(&err)), -1;
	if (!write) /* a sweep that ran said so when it opened the file */
		warn_dropped(res, dir, "skipped");
	if (pass_rate)
		*pass_rate = s->overall.pass_rate;
	if (json) {
		_cleanup_free_ char *j = sbx_sweep_summary_json(s, false);

		if (!j)
			return cli_error("out of memory"), -1;
		printf("%s\n", j);
	} else {
		if (sbx_sweep_summary_text(s, &text) < 0)
			return cli_error("out of memory"), -1;
		/* Which sweep this is: enough to tell two apart without opening sweep.json. */
		printf("sweep %s: %zu tasks × %zu agents × %u epochs", p->id ? p->id : dir,
		       p->n_tasks, p->n_agents, p->epochs);
		if (p->seeded)
			printf(", seeds from %llu", (unsigned long long)p->seed_from);
		if (p->image_id)
			printf(", image %.19s", p->image_id);
		if (p->tasks_commit)
			printf(", tasks %.12s%s", p->tasks_commit, p->tasks_dirty ? "+dirty" : "");
		for (size_t i = 0; i < p->n_tags; i++)
			printf("%s%s", i ? " " : ", ", p->tags[i]);
		printf("\n");
		fputs(sbx_buf_str(&text), stdout);
	}
	fflush(stdout);
	return 0;
}

static int cmd_sweep_show(int argc, char **argv)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const char *dir = NULL;
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (argv[i][0] == '-' || dir)
			return cli_error("sweep show: unexpected '%s' (see 'sandboxctl sweep "
					 "--help')",
					 argv[i]),
			       EXIT_USAGE;
		else
			dir = argv[i];
	}
	if (!dir)
		return cli_error("sweep show: which sweep directory?"), EXIT_USAGE;
	if (sbx_sweep_plan_read(dir, &p, &err) < 0)
		return cli_error("sweep show: %s", sbx_error_message(&err)), EXIT_USAGE;
	return print_summary(p, dir, json, false, NULL) < 0 ? EXIT_USAGE : EXIT_PASS;
}

static int cmd_sweep_compare(int argc, char **argv)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *pa = NULL, *pb = NULL;
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *ra = NULL, *rb = NULL;
	_cleanup_free_ char *out = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_sweep_record *xa, *xb;
	const char *dirs[2] = {NULL, NULL};
	size_t na, nb, nd = 0;
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (argv[i][0] == '-' || nd == 2)
			return cli_error("sweep compare: unexpected '%s'", argv[i]), EXIT_USAGE;
		else
			dirs[nd++] = argv[i];
	}
	if (nd != 2)
		return cli_error("sweep compare: expected two sweep directories"), EXIT_USAGE;
	if (sbx_sweep_plan_read(dirs[0], &pa, &err) < 0 ||
	    sbx_sweep_plan_read(dirs[1], &pb, &err) < 0 ||
	    sbx_sweep_results_load(dirs[0], pa, &ra, &err) < 0 ||
	    sbx_sweep_results_load(dirs[1], pb, &rb, &err) < 0)
		return cli_error("sweep compare: %s", sbx_error_message(&err)), EXIT_USAGE;
	xa = sbx_sweep_results_records(ra, &na);
	xb = sbx_sweep_results_records(rb, &nb);
	if (sbx_sweep_compare(pa, xa, na, pb, xb, nb, json, &out, &err) < 0)
		return cli_error("sweep compare: %s", sbx_error_message(&err)), EXIT_USAGE;
	fputs(out, stdout);
	if (!json || out[strlen(out) - 1] != '\n')
		fputs(json ? "\n" : "", stdout);
	return EXIT_PASS;
}

/* The directory must be new or empty: a sweep never mixes with other files. */
static int make_out_dir(const char *dir)
{
	_cleanup_free_ char *copy = strdup(dir), *runs = NULL;
	struct stat st;

	if (!copy || asprintf(&runs, "%s/runs", dir) < 0)
		return cli_error("out of memory"), -1;
	for (char *s = copy + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(copy, 0755) < 0 && errno != EEXIST)
				return cli_error("--out '%s': %s", copy, strerror(errno)), -1;
			*s = '/';
		}
	if (mkdir(dir, 0755) < 0) {
		if (errno != EEXIST || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			return cli_error("--out '%s': %s", dir, strerror(errno)), -1;
		if (rmdir(dir) < 0 || mkdir(dir, 0755) < 0) /* only an empty one goes */
			return cli_error("--out '%s' is not empty (resume it with --resume %s)",
					 dir, dir),
			       -1;
	}
	if (mkdir(runs, 0755) < 0 && errno != EEXIST)
		return cli_error("--out '%s': %s", runs, strerror(errno)), -1;
	return 0;
}

int cmd_sweep(int argc, char **argv)
{
	static const char *const sweep_options[] = {
		"task=",	 "tasks=",   "task-file=", "agent=",	 "epochs=",  "seed-from=",
		"pass-at=",	 "jobs=",    "out=",	   "resume=",	 "retries=", "timeout=",
		"image=",	 "memory=",  "cpus=",	   "pids=",	 "runtime=", "grace=",
		"network=",	 "seccomp=", "tasks-dir=", "engine=",	 "tag=",     "stop-grace=",
		"require-pass=", "json",     "quiet",	   "test-label", "reuse=",   NULL,
	};
	cli_longopts lo = {0};
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = calloc(1, sizeof(*p));
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *results = NULL;
	_cleanup_free_ char *out_dir = NULL;
	_cleanup_free_ sbx_sweep_engine *engines = NULL;
	cli_engine_arg eargs[CLI_MAX_ENGINES];
	size_t n_eargs = 0;
	char **images = NULL;
	const char *resume = NULL, *task_file = NULL;
	bool json = false, quiet = false, test_label = false, all_tasks = false;
	long jobs = 0, stop_grace = DEFAULT_STOP_GRACE;
	double require_pass = -1, pass_rate = NAN;
	sbx_error err = SBX_ERROR_INIT;
	sbx_sweep_opts so = SBX_SWEEP_OPTS_INIT;
	sbx_run_opts limits = SBX_RUN_OPTS_INIT;
	bool plan_given = false, retries_given = false;
	long reuse = 1;
	sbx_sweep_outcome outcome;
	progress_ctx pc = {0};
	uint64_t max_memory = 0;
	const char *name;
	int ncpu = 0, c, rc = EXIT_USAGE;
	int64_t mem = 0;
	unsigned dropped = 0;
	size_t total_jobs = 0;

	if (argc > 1 && strcmp(argv[1], "show") == 0)
		return cmd_sweep_show(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "compare") == 0)
		return cmd_sweep_compare(argc - 1, argv + 1);
	if (!p)
		return cli_error("out of memory"), EXIT_ENGINE;
	p->epochs = 1;
	p->retries = DEFAULT_RETRIES;
	p->pass_at[p->n_pass_at++] = 1;

	cli_longopts_add(&lo, sweep_options);
	cli_longopts_add(&lo, cli_engine_options);
	optind = 1;
	while ((c = cli_next_option("sweep", argc, argv, &lo, help, &name)) > 0) {
		long v;

		if (is_plan_option(name))
			plan_given = true;
		if (strcmp(name, "task") == 0) {
			if (strv_push(&p->tasks, &p->n_tasks, optarg, SBX_SWEEP_MAX_TASKS) < 0) {
				cli_error("--task: more than %d tasks", SBX_SWEEP_MAX_TASKS);
				goto done;
			}
		} else if (strcmp(name, "tasks") == 0) {
			if (strcmp(optarg, "all") != 0) {
				cli_error("--tasks: only 'all' (use --task NAME for one)");
				goto done;
			}
			all_tasks = true;
		} else if (strcmp(name, "task-file") == 0) {
			task_file = optarg;
		} else if (strcmp(name, "agent") == 0) {
			if (!*optarg ||
			    strv_push(&p->agents, &p->n_agents, optarg, SBX_SWEEP_MAX_AGENTS) < 0) {
				cli_error("--agent: empty, or more than %d agents",
					  SBX_SWEEP_MAX_AGENTS);
				goto done;
			}
		} else if (strcmp(name, "epochs") == 0) {
			if ((v = cli_option_long(name, optarg, 1, SBX_SWEEP_MAX_EPOCHS, NULL)) < 0)
				goto done;
			p->epochs = (unsigned)v;
		} else if (strcmp(name, "seed-from") == 0) {
			char *end;

			errno = 0;
			p->seed_from = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' ||
			    p->seed_from > SBX_TASK_SEED_MAX) {
				cli_error("--seed-from: '%s' is not a seed", optarg);
				goto done;
			}
			p->seeded = true;
		} else if (strcmp(name, "pass-at") == 0) {
			if (parse_pass_at(optarg, p) < 0)
				goto done;
		} else if (strcmp(name, "jobs") == 0) {
			if ((jobs = cli_option_long(name, optarg, 1, 256, NULL)) < 0)
				goto done;
		} else if (strcmp(name, "out") == 0) {
			free(out_dir);
			out_dir = strdup(optarg);
		} else if (strcmp(name, "resume") == 0) {
			resume = optarg;
		} else if (strcmp(name, "reuse") == 0) {
			if ((reuse = cli_option_long(name, optarg, 1, 1000000, NULL)) < 0)
				goto done;
		} else if (strcmp(name, "retries") == 0) {
			if ((v = cli_option_long(name, optarg, 0, 100, NULL)) < 0)
				goto done;
			p->retries = (unsigned)v;
			retries_given = true;
		} else if (strcmp(name, "timeout") == 0) {
			if ((v = cli_option_long(name, optarg, 1, 7 * 24 * 3600,
						 "a number of seconds")) < 0)
				goto done;
			p->timeout_s = (uint32_t)v;
		} else if (strcmp(name, "image") == 0) {
			p->image = strdup(optarg);
		} else if (is_limit(name)) {
			if (cmd_run__parse_common(name, optarg, &limits) < 0)
				goto done;
		} else if (strcmp(name, "tasks-dir") == 0) {
			p->tasks_dir = realpath(optarg, NULL);
			if (!p->tasks_dir) {
				cli_error("--tasks-dir '%s': %s", optarg, strerror(errno));
				goto done;
			}
		} else if (strcmp(name, "engine") == 0) {
			if (n_eargs >= CLI_MAX_ENGINES) {
				cli_error("--engine: at most %d", CLI_MAX_ENGINES);
				goto done;
			}
			if (cli_parse_engine("sweep", optarg, true, &eargs[n_eargs]) < 0)
				goto done;
			n_eargs++;
		} else if (strcmp(name, "tag") == 0) {
			if (!strchr(optarg, '=') || optarg[0] == '=' ||
			    strv_push(&p->tags, &p->n_tags, optarg, 1024) < 0) {
				cli_error("--tag '%s': expected KEY=VALUE", optarg);
				goto done;
			}
		} else if (strcmp(name, "stop-grace") == 0) {
			if ((stop_grace = cli_option_long(name, optarg, 0, 3600,
							  "a number of seconds")) < 0)
				goto done;
		} else if (strcmp(name, "require-pass") == 0) {
			char *end;

			require_pass = strtod(optarg, &end);
			if (end == optarg || *end || !(require_pass >= 0 && require_pass <= 1)) {
				cli_error("--require-pass: '%s' is not a rate 0..1", optarg);
				goto done;
			}
		} else if (strcmp(name, "json") == 0) {
			json = true;
		} else if (strcmp(name, "quiet") == 0) {
			quiet = true;
		} else if (strcmp(name, "test-label") == 0) {
			test_label = true;
		} else if (strcmp(name, "allow-no-seccomp") == 0) {
			cli_allow_no_seccomp = true;
		}
	}
	if (c < 0) {
		if (c == CLI_OPT_HELP)
			rc = EXIT_PASS;
		goto done; /* a usage error: said why */
	}
	if (cli_no_arguments("sweep", argc, argv) < 0)
		goto done;

	if (resume) {
		/* The plan is the one on disk; only how to run it may change. */
		unsigned retries = p->retries;

		if (plan_given) {
			cli_error("sweep --resume: the plan is in %s/sweep.json; give only --jobs, "
				  "--engine, --retries, --stop-grace, --require-pass, --quiet, "
				  "--json",
				  resume);
			goto done;
		}
		sbx_sweep_plan_free(TAKE_PTR(p));
		if (sbx_sweep_plan_read(resume, &p, &err) < 0) {
			cli_error("sweep --resume: %s", sbx_error_message(&err));
			goto done;
		}
		if (retries_given)
			p->retries = retries; /* how to run it, not what: this run's retries */
		out_dir = strdup(resume);
	} else {
		if (all_tasks) {
			_cleanup_free_ char *dir =
				p->tasks_dir ? strdup(p->tasks_dir) : sbx_task_dir_default();
			char **names = NULL;
			size_t n = 0;

			if (!dir || sbx_task_list(dir, &names, &n, &err) < 0) {
				cli_error("--tasks all: %s", sbx_error_message(&err));
				goto done;
			}
			for (size_t i = 0; i < n; i++)
				if (strv_push(&p->tasks, &p->n_tasks, names[i],
					      SBX_SWEEP_MAX_TASKS) < 0)
					break;
			sbx_task_names_free(names);
		}
		if (task_file && read_task_file(task_file, p) < 0)
			goto done;
		if (p->n_tasks == 0 || p->n_agents == 0) {
			cli_error(
				"sweep: give at least one --task (or --tasks all, --task-file) and "
				"one --agent");
			goto done;
		}
		if (!out_dir) {
			char stamp[32];
			time_t now = time(NULL);
			struct tm tm;

			strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", gmtime_r(&now, &tm));
			if (asprintf(&out_dir, "sweeps/%s", stamp) < 0)
				out_dir = NULL;
		}
		if (!p->tasks_dir) {
			/* Absolute in sweep.json, so --resume from anywhere finds the same tasks.
			 */
			_cleanup_free_ char *def = sbx_task_dir_default();

			p->tasks_dir = def ? realpath(def, NULL) : NULL;
		}
		p->memory = limits.memory;
		p->cpus = limits.cpus;
		p->pids = limits.pids;
		p->runtime = limits.runtime ? strdup(limits.runtime) : NULL;
		p->grace_s = limits.grace_s;
		p->published = limits.published;
		p->engine_seccomp = limits.engine_seccomp;
		if (sbx_sweep_plan_new_id(p, &err) < 0) {
			cli_error("sweep: %s", sbx_error_message(&err));
			goto done;
		}
		p->version = strdup(SBX_VERSION);
		p->created_at = (int64_t)time(NULL);
		if (sbx_sweep_plan_check(p, &err) < 0) {
			cli_error("sweep: %s", sbx_error_message(&err));
			goto done;
		}
	}
	if (!out_dir) {
		cli_error("out of memory");
		goto done;
	}
	if (resolve_tasks(p, &images, &max_memory) < 0)
		goto done;
	/* A mistyped or missing agent would fail every episode like it: refuse it now. */
	for (size_t i = 0; i < p->n_agents; i++)
		if (sbx_run_check_agent(p->agents[i], NULL, &err) < 0) {
			cli_error("sweep: %s", sbx_error_message(&err));
			goto done;
		}
	if (n_eargs == 0)
		eargs[n_eargs++] = (cli_engine_arg){0};
	{
		_cleanup_free_ char *image_id = NULL;

		if (cli_check_engines("sweep", eargs, n_eargs, images, limits.runtime, &image_id,
				      &ncpu, &mem) < 0) {
			rc = EXIT_ENGINE;
			goto done;
		}
		if (resume && p->image_id && image_id && strcmp(p->image_id, image_id) != 0)
			cli_error("sweep: warning: image '%s' is %.19s now, %.19s when the sweep "
				  "began: the episodes resumed run on a different image",
				  images[0], image_id, p->image_id);
		if (!resume) {
			sbx_provenance prov = {0};
			_cleanup_free_ char *dir =
				p->tasks_dir ? strdup(p->tasks_dir) : sbx_task_dir_default();

			p->image_id = TAKE_PTR(image_id);
			if (dir && sbx_provenance_get(dir, &prov, NULL) == 0 && prov.known) {
				p->tasks_commit = strdup(prov.commit);
				p->tasks_dirty = prov.dirty;
			}
			sbx_provenance_clear(&prov);
		}
	}
	if (!jobs) {
		/* A sandbox's CPU limit is a cap, not a reservation: CPUs bound the
		 * count, the memory limits bound it harder. */
		uint64_t per = p->memory ? p->memory : max_memory ? max_memory : 2ULL << 30;
		long by_mem = mem > 0 ? (long)((uint64_t)mem * 8 / 10 / per) : 1;

		jobs = ncpu > 0 ? ncpu : 1;
		if (by_mem < jobs)
			jobs = by_mem < 1 ? 1 : by_mem;
		if (!quiet)
			fprintf(stderr,
				"sweep: --jobs %ld (engine: %d CPUs, %.1f GiB; %.1f GiB per "
				"sandbox)\n",
				jobs, ncpu, (double)mem / (1 << 30), (double)per / (1 << 30));
	}
	engines = calloc(n_eargs, sizeof(*engines));
	if (!engines) {
		cli_error("out of memory");
		goto done;
	}
	for (size_t i = 0; i < n_eargs; i++) {
		engines[i].url = eargs[i].url;
		engines[i].jobs = eargs[i].jobs ? eargs[i].jobs : (unsigned)jobs;
		total_jobs += engines[i].jobs;
	}

	if (!resume) {
		if (make_out_dir(out_dir) < 0)
			goto done;
		if (sbx_sweep_plan_write(p, out_dir, &err) < 0) {
			cli_error("sweep: %s", sbx_error_message(&err));
			rc = EXIT_ENGINE;
			goto done;
		}
	}
	if (sbx_sweep_results_open(out_dir, p, &results, &dropped, &err) < 0) {
		cli_error("sweep: %s", sbx_error_message(&err));
		rc = err.code == -EBUSY ? EXIT_USAGE : EXIT_ENGINE;
		goto done;
	}
	if (dropped)
		warn_dropped(results, out_dir, "dropped (those episodes run again)");
	if (!quiet)
		fprintf(stderr,
			"sweep: %s: %zu tasks × %zu agents × %u epochs = %zu episodes on %zu "
			"job slot(s)%s\n",
			out_dir, p->n_tasks, p->n_agents, p->epochs, sbx_sweep_plan_size(p),
			total_jobs, resume ? " (resuming)" : "");

	cli_on_stop_signals(on_signal);
	pc.quiet = quiet;
	pc.tty = isatty(STDERR_FILENO);
	so.dir = out_dir;
	so.engines = engines;
	so.n_engines = n_eargs;
	so.grade = cmd_run__grade;
	so.grader = cmd_run__grader();
	so.stop = &arg_signals;
	so.stop_grace_s = (uint32_t)stop_grace;
	so.progress = on_progress;
	so.progress_userdata = &pc;
	so.test_label = test_label;
	so.reuse = (uint32_t)reuse;
	if (sbx_sweep_execute(p, results, &so, &outcome, &err) < 0) {
		cli_error("sweep: %s", sbx_error_message(&err));
		rc = EXIT_ENGINE;
		goto done;
	}
	if (pc.tty && !quiet)
		fputc('\n', stderr);
	sbx_sweep_results_free(TAKE_PTR(results));
	if (print_summary(p, out_dir, json, true, &pass_rate) < 0) {
		rc = EXIT_ENGINE;
		goto done;
	}
	if (!quiet)
		fprintf(stderr, "sweep: %zu episodes in %.1f s; summary: %s/summary.json\n",
			outcome.ran, outcome.elapsed_s, out_dir);
	switch (outcome.stop) {
	case SBX_SWEEP_COMPLETE:
		rc = require_pass >= 0 && !(pass_rate >= require_pass) ? EXIT_NOT_PASSED
								       : EXIT_PASS;
		if (rc == EXIT_NOT_PASSED)
			cli_error("sweep: pass rate %.1f%% is under --require-pass %.1f%%",
				  pass_rate * 100, require_pass * 100);
		break;
	case SBX_SWEEP_INTERRUPTED:
		cli_error("sweep: interrupted; %zu episodes left: sandboxctl sweep --resume %s",
			  outcome.remaining, out_dir);
		rc = EXIT_INTERRUPTED;
		break;
	case SBX_SWEEP_CONFIG:
		cli_error("sweep: stopped: %s", outcome.reason);
		rc = EXIT_USAGE;
		break;
	default:
		cli_error("sweep: stopped: %s; finish with: sandboxctl sweep --resume %s",
			  outcome.reason, out_dir);
		rc = EXIT_ENGINE;
		break;
	}
done:
	for (size_t i = 0; i < n_eargs; i++)
		free(eargs[i].url);
	sbx_strv_free(images);
	return rc;
}
