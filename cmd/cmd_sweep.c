/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl sweep: many episodes (tasks × agents × epochs) on a pool of job
 * slots, resumable, summarised; `sweep show` and `sweep compare`
 * (cmd_sweep_show.c) read sweep directories back. The work, the plan
 * included, is lib/sweep's; this file runs its steps and prints progress;
 * the options are cmd_sweep_options.c's.
 */
#include <errno.h>
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
#include "cmd_sweep.h"
#include "engines.h"
#include "sbx/labels.h"

static volatile sig_atomic_t arg_signals;

static void on_signal(int sig)
{
	(void)sig;
	cli_count_stop_signal(&arg_signals,
			      "\nsandboxctl: sweep: stopping: no new episodes; running ones "
			      "get --stop-grace to finish (Ctrl-C again interrupts them now)\n",
			      "\nsandboxctl: sweep: interrupting the running episodes\n");
}

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

/* Default --out: sweeps/<UTC time>; NULL when out of memory. */
static char *default_out(void)
{
	char stamp[32], *dir;
	time_t now = time(NULL);
	struct tm tm;

	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", gmtime_r(&now, &tm));
	return asprintf(&dir, "sweeps/%s", stamp) < 0 ? NULL : dir;
}

/* --resume: the plan is sweep.json's; only how to run it may change. */
static int resume_plan(sbx_sweep_plan **p, char **out_dir)
{
	sbx_error err = SBX_ERROR_INIT;

	if (arg_sweep.plan_given)
		return cli_error("sweep --resume: the plan is in %s/sweep.json; give only --jobs, "
				 "--engine, --reuse, --retries, --stop-grace, --require-pass, "
				 "--quiet, --json",
				 arg_sweep.resume),
		       -1;
	if (sbx_sweep_plan_read(arg_sweep.resume, p, &err) < 0)
		return cli_error("sweep --resume: %s", sbx_error_message(&err)), -1;
	if (arg_sweep.retries_given)
		(*p)->retries =
			arg_sweep.plan->retries; /* how to run it, not what: this run's retries */
	*out_dir = strdup(arg_sweep.resume);
	return 0;
}

/* A new plan: the options' (arg_sweep.plan), completed by lib/sweep. */
static int new_plan(sbx_sweep_plan **p, char **out_dir)
{
	sbx_error err = SBX_ERROR_INIT;

	if (arg_sweep.all_tasks && sbx_sweep_plan_add_all_tasks(arg_sweep.plan, &err) < 0)
		return cli_error("--tasks all: %s", sbx_error_message(&err)), -1;
	if (arg_sweep.task_file &&
	    sbx_sweep_plan_add_task_file(arg_sweep.plan, arg_sweep.task_file, &err) < 0)
		return cli_error("--task-file: %s", sbx_error_message(&err)), -1;
	if (arg_sweep.plan->n_tasks == 0 || arg_sweep.plan->n_agents == 0)
		return cli_error(
			       "sweep: give at least one --task (or --tasks all, --task-file) and "
			       "one --agent"),
		       -1;
	*out_dir = arg_sweep.out ? strdup(arg_sweep.out) : default_out();
	if (sbx_sweep_plan_finish(arg_sweep.plan, &arg_run, &err) < 0)
		return cli_error("sweep: %s", sbx_error_message(&err)), -1;
	*p = TAKE_PTR(arg_sweep.plan);
	return 0;
}

/*
 * Before the first episode: every task and agent loads, every engine holds
 * the images (and --runtime); a new plan records the image and the tasks'
 * commit; then the job slots per engine. 0, else the exit code (printed why).
 */
static int prepare(sbx_sweep_plan *p, bool resumed, sbx_sweep_engine **engines, size_t *total)
{
	_cleanup_(sbx_sweep_needs_clear) sbx_sweep_needs needs = {0};
	_cleanup_free_ char *image_id = NULL;
	sbx_error err = SBX_ERROR_INIT;
	long jobs = arg_sweep.jobs;
	int ncpu = 0;
	int64_t mem = 0;

	if (sbx_sweep_plan_load(p, &needs, &err) < 0)
		return cli_error("sweep: %s", sbx_error_message(&err)), EXIT_USAGE;
	if (arg_sweep.n_engines == 0)
		arg_sweep.engines[arg_sweep.n_engines++] = (cli_engine_arg){0};
	if (cli_check_engines("sweep", arg_sweep.engines, arg_sweep.n_engines, needs.images,
			      arg_run.limits.runtime[0] ? arg_run.limits.runtime : NULL, &image_id,
			      &ncpu, &mem) < 0)
		return EXIT_ENGINE;
	if (resumed && p->image_id && image_id && strcmp(p->image_id, image_id) != 0)
		cli_error("sweep: warning: image '%s' is %.19s now, %.19s when the sweep "
			  "began: the episodes resumed run on a different image",
			  needs.images[0], image_id, p->image_id);
	if (!resumed)
		sbx_sweep_plan_stamp(p, TAKE_PTR(image_id));
	if (!jobs) {
		uint64_t per;

		jobs = sbx_sweep_jobs(p, &needs, ncpu, mem, &per);
		if (!arg_sweep.quiet)
			fprintf(stderr,
				"sweep: --jobs %ld (engine: %d CPUs, %.1f GiB; %.1f GiB per "
				"sandbox)\n",
				jobs, ncpu, (double)mem / (1 << 30), (double)per / (1 << 30));
	}
	*engines = calloc(arg_sweep.n_engines, sizeof(**engines));
	if (!*engines)
		return cli_error("out of memory"), EXIT_USAGE;
	for (size_t i = 0; i < arg_sweep.n_engines; i++) {
		(*engines)[i].url = arg_sweep.engines[i].url;
		(*engines)[i].jobs =
			arg_sweep.engines[i].jobs ? arg_sweep.engines[i].jobs : (unsigned)jobs;
		*total += (*engines)[i].jobs;
	}
	return 0;
}

/* Writes a new sweep's plan, opens results.jsonl and runs what is not done. 0, else the exit code.
 */
static int run_sweep(const sbx_sweep_plan *p, const char *out_dir, bool resumed,
		     sbx_sweep_engine *engines, size_t total_jobs, sbx_sweep_outcome *outcome)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *results = NULL;
	sbx_sweep_opts so = SBX_SWEEP_OPTS_INIT;
	progress_ctx pc = {.quiet = arg_sweep.quiet, .tty = isatty(STDERR_FILENO)};
	sbx_error err = SBX_ERROR_INIT;
	unsigned dropped = 0;

	if (!resumed && make_out_dir(out_dir) < 0)
		return EXIT_USAGE;
	if (!resumed && sbx_sweep_plan_write(p, out_dir, &err) < 0)
		return cli_error("sweep: %s", sbx_error_message(&err)), EXIT_ENGINE;
	if (sbx_sweep_results_open(out_dir, p, &results, &dropped, &err) < 0) {
		cli_error("sweep: %s", sbx_error_message(&err));
		return err.code == -EBUSY ? EXIT_USAGE : EXIT_ENGINE;
	}
	if (dropped)
		cmd_sweep__warn_dropped(results, out_dir, "dropped (those episodes run again)");
	if (!arg_sweep.quiet)
		fprintf(stderr,
			"sweep: %s: %zu tasks × %zu agents × %u epochs = %zu episodes on %zu "
			"job slot(s)%s\n",
			out_dir, p->n_tasks, p->n_agents, p->epochs, sbx_sweep_plan_size(p),
			total_jobs, resumed ? " (resuming)" : "");
	cli_on_stop_signals(on_signal);
	so.dir = out_dir;
	so.engines = engines;
	so.n_engines = arg_sweep.n_engines;
	so.grader = cmd_run__grader();
	so.stop = &arg_signals;
	so.stop_grace_s = (uint32_t)arg_sweep.stop_grace;
	so.progress = on_progress;
	so.progress_userdata = &pc;
	so.test_label = arg_run.test;
	so.reuse = (uint32_t)arg_sweep.reuse;
	if (sbx_sweep_execute(p, results, &so, outcome, &err) < 0)
		return cli_error("sweep: %s", sbx_error_message(&err)), EXIT_ENGINE;
	if (pc.tty && !arg_sweep.quiet)
		fputc('\n', stderr);
	return 0;
}

/* The summary, then why the sweep ended: the exit code. */
static int report(const sbx_sweep_plan *p, const char *out_dir, const sbx_sweep_outcome *outcome)
{
	double pass_rate = NAN;
	int rc;

	if (cmd_sweep__print_summary(p, out_dir, arg_sweep.json, true, &pass_rate) < 0)
		return EXIT_ENGINE;
	if (!arg_sweep.quiet)
		fprintf(stderr, "sweep: %zu episodes in %.1f s; summary: %s/summary.json\n",
			outcome->ran, outcome->elapsed_s, out_dir);
	switch (outcome->stop) {
	case SBX_SWEEP_COMPLETE:
		rc = arg_sweep.require_pass >= 0 && !(pass_rate >= arg_sweep.require_pass)
			     ? EXIT_NOT_PASSED
			     : EXIT_PASS;
		if (rc == EXIT_NOT_PASSED)
			cli_error("sweep: pass rate %.1f%% is under --require-pass %.1f%%",
				  pass_rate * 100, arg_sweep.require_pass * 100);
		return rc;
	case SBX_SWEEP_INTERRUPTED:
		cli_error("sweep: interrupted; %zu episodes left: sandboxctl sweep --resume %s",
			  outcome->remaining, out_dir);
		return EXIT_INTERRUPTED;
	case SBX_SWEEP_CONFIG:
		cli_error("sweep: stopped: %s", outcome->reason);
		return EXIT_USAGE;
	default:
		cli_error("sweep: stopped: %s; finish with: sandboxctl sweep --resume %s",
			  outcome->reason, out_dir);
		return EXIT_ENGINE;
	}
}

int cmd_sweep(int argc, char **argv)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = NULL;
	_cleanup_free_ char *out_dir = NULL;
	_cleanup_free_ sbx_sweep_engine *engines = NULL;
	sbx_sweep_outcome outcome;
	size_t total_jobs = 0;
	int rc = EXIT_USAGE, r;

	if (argc > 1 && strcmp(argv[1], "show") == 0)
		return cmd_sweep__show(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "compare") == 0)
		return cmd_sweep__compare(argc - 1, argv + 1);
	arg_sweep.plan = sbx_sweep_plan_new();
	if (!arg_sweep.plan)
		return cli_error("out of memory"), EXIT_ENGINE;
	r = cli_parse("sweep", argc, argv, cmd_sweep__options, NULL,
		      CLI_NO_ARGUMENTS | CLI_IN_ORDER);
	if (r <= 0)
		rc = -r;
	else if ((arg_sweep.resume ? resume_plan(&p, &out_dir) : new_plan(&p, &out_dir)) < 0)
		rc = EXIT_USAGE;
	else if (!out_dir)
		cli_error("out of memory");
	else if (!(rc = prepare(p, arg_sweep.resume, &engines, &total_jobs)) &&
		 !(rc = run_sweep(p, out_dir, arg_sweep.resume, engines, total_jobs, &outcome)))
		rc = report(p, out_dir, &outcome);
	sbx_sweep_plan_free(TAKE_PTR(arg_sweep.plan));
	for (size_t i = 0; i < arg_sweep.n_engines; i++)
		free(arg_sweep.engines[i].url);
	return rc;
}
