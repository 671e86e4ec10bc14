/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl sweep's options: one row each (cli_option), parsed into
 * arg_sweep (what to run into its plan, how to run it into the rest) and
 * arg_run (the episodes' limits, as `run` parses them); --help from the rows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_run.h"
#include "cmd_sweep.h"
#include "engines.h"

#define STR(x)	#x
#define XSTR(x) STR(x)

cmd_sweep_args arg_sweep = {
	.stop_grace = CMD_SWEEP_DEFAULT_STOP_GRACE, .require_pass = -1, .reuse = 1};

static int parse_task(const char *text)
{
	if (sbx_sweep_plan_push(&arg_sweep.plan->tasks, &arg_sweep.plan->n_tasks, text,
				SBX_SWEEP_MAX_TASKS) < 0)
		return cli_error("--task: more than %d tasks", SBX_SWEEP_MAX_TASKS), -1;
	return 0;
}

static int parse_task_dir(const char *text)
{
	sbx_error err = SBX_ERROR_INIT;

	if (sbx_sweep_plan_add_task_dir(arg_sweep.plan, text, &err) < 0)
		return cli_error("%s", sbx_error_message(&err)), -1;
	return 0;
}

static int parse_tasks(const char *text)
{
	if (strcmp(text, "all") != 0)
		return cli_error("--tasks: only 'all' (use --task NAME for one)"), -1;
	arg_sweep.all_tasks = true;
	return 0;
}

static int parse_agent(const char *text)
{
	if (!*text || sbx_sweep_plan_push(&arg_sweep.plan->agents, &arg_sweep.plan->n_agents, text,
					  SBX_SWEEP_MAX_AGENTS) < 0)
		return cli_error("--agent: empty, or more than %d agents", SBX_SWEEP_MAX_AGENTS),
		       -1;
	return 0;
}

static int parse_epochs(const char *text)
{
	long v = cli_option_long("epochs", text, 1, SBX_SWEEP_MAX_EPOCHS, NULL);

	if (v < 0)
		return -1;
	arg_sweep.plan->epochs = (unsigned)v;
	return 0;
}

static int parse_seed_from(const char *text)
{
	char *end;

	errno = 0;
	arg_sweep.plan->seed_from = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' ||
	    arg_sweep.plan->seed_from > SBX_TASK_SEED_MAX)
		return cli_error("--seed-from: '%s' is not a seed", text), -1;
	arg_sweep.plan->seeded = true;
	return 0;
}

static int parse_pass_at(const char *text)
{
	_cleanup_free_ char *copy = strdup(text);
	char *save = NULL;

	if (!copy)
		return -1;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		long k = cli_parse_long(w, 1, SBX_SWEEP_MAX_EPOCHS);

		if (k < 0)
			return cli_error("--pass-at: '%s' is not a number >= 1", w), -1;
		if (sbx_sweep_plan_add_pass_at(arg_sweep.plan, (unsigned)k) < 0)
			return cli_error("--pass-at: at most %d values", SBX_SWEEP_MAX_PASS_AT), -1;
	}
	return 0;
}

static int parse_jobs(const char *text)
{
	arg_sweep.jobs = cli_option_long("jobs", text, 1, 256, NULL);
	return arg_sweep.jobs < 0 ? -1 : 0;
}

/* How to run it, not what: --resume may change it. */
static int parse_reuse(const char *text)
{
	arg_sweep.reuse = cli_option_long("reuse", text, 1, 1000000, NULL);
	return arg_sweep.reuse < 0 ? -1 : 0;
}

static int parse_retries(const char *text)
{
	long v = cli_option_long("retries", text, 0, 100, NULL);

	if (v < 0)
		return -1;
	arg_sweep.plan->retries = (unsigned)v;
	return 0;
}

static int parse_tasks_dir(const char *text)
{
	free(arg_sweep.plan->tasks_dir);
	arg_sweep.plan->tasks_dir = realpath(text, NULL);
	if (!arg_sweep.plan->tasks_dir)
		return cli_error("--tasks-dir '%s': %s", text, strerror(errno)), -1;
	return 0;
}

static int parse_engine(const char *text)
{
	if (arg_sweep.n_engines >= CLI_MAX_ENGINES)
		return cli_error("--engine: at most %d", CLI_MAX_ENGINES), -1;
	if (cli_parse_engine("sweep", text, true, &arg_sweep.engines[arg_sweep.n_engines]) < 0)
		return -1;
	arg_sweep.n_engines++;
	return 0;
}

static int parse_tag(const char *text)
{
	if (!strchr(text, '=') || text[0] == '=' ||
	    sbx_sweep_plan_push(&arg_sweep.plan->tags, &arg_sweep.plan->n_tags, text, 1024) < 0)
		return cli_error("--tag '%s': expected KEY=VALUE", text), -1;
	return 0;
}

static int parse_stop_grace(const char *text)
{
	arg_sweep.stop_grace = cli_option_long("stop-grace", text, 0, 3600, "a number of seconds");
	return arg_sweep.stop_grace < 0 ? -1 : 0;
}

static int parse_require_pass(const char *text)
{
	char *end;

	arg_sweep.require_pass = strtod(text, &end);
	if (end == text || *end || !(arg_sweep.require_pass >= 0 && arg_sweep.require_pass <= 1))
		return cli_error("--require-pass: '%s' is not a rate 0..1", text), -1;
	return 0;
}

/* The limits `run` takes, parsed by its rows so the two cannot drift apart. */
static const cli_option limits[] = {
	CMD_RUN_OPT_MEMORY(.seen = &arg_sweep.plan_given),
	CMD_RUN_OPT_CPUS(.seen = &arg_sweep.plan_given),
	CMD_RUN_OPT_PIDS(.seen = &arg_sweep.plan_given),
	CMD_RUN_OPT_RUNTIME(.seen = &arg_sweep.plan_given),
	CMD_RUN_OPT_GRACE(.seen = &arg_sweep.plan_given),
	CMD_RUN_OPT_NETWORK(.seen = &arg_sweep.plan_given),
	CMD_RUN_OPT_SECCOMP(.seen = &arg_sweep.plan_given),
	CLI_ENGINE_OPT_ALLOW_NO_SECCOMP(),
	{0},
};

const cli_option cmd_sweep__options[] = {
	{.text = "Usage: sandboxctl sweep --task NAME... --agent CMD... [options]\n"
		 "       sandboxctl sweep --resume DIR [--jobs N] [--engine URL...] [--retries N]\n"
		 "       sandboxctl sweep show DIR [--json]\n"
		 "       sandboxctl sweep compare DIR_A DIR_B [--json]\n\n"
		 "Runs every task with every agent --epochs times, --jobs episodes at a time,\n"
		 "each one the same lifecycle as 'sandboxctl run' (hardened sandbox, agent,\n"
		 "grade, removal). The sweep directory (--out) holds sweep.json (the plan),\n"
		 "results.jsonl (one fsync'd line per attempt), runs/<run-id>/ and\n"
		 "summary.json. Episodes run in epoch order, so a partial sweep is a fair\n"
		 "sample; --resume runs exactly what has no result yet.\n"},
	{.heading = "What to run:"},
	{"task", .parse = parse_task, .seen = &arg_sweep.plan_given, .usage = "--task NAME",
	 .help = "a task (repeat); --tasks all: every task; --task-file F:\n"
		 "one name per line ('#' comments)"},
	{"tasks", .parse = parse_tasks, .seen = &arg_sweep.plan_given},
	{"task-file", .value = &arg_sweep.task_file, .seen = &arg_sweep.plan_given},
	{"agent", .parse = parse_agent, .seen = &arg_sweep.plan_given, .usage = "--agent CMD",
	 .help = "an agent, as 'run --agent' takes it (repeat: each agent\n"
		 "gets its rows in the summary): oracle, demo,\n"
		 "'llm --model X', a command"},
	{"epochs", .parse = parse_epochs, .seen = &arg_sweep.plan_given, .usage = "--epochs N",
	 .help = "episodes per task and agent (default 1)"},
	{"seed-from", .parse = parse_seed_from, .seen = &arg_sweep.plan_given,
	 .usage = "--seed-from N",
	 .help = "seedable tasks: epoch e runs the instance of seed N+e\n"
		 "(the same seeds for every agent); others run as committed"},
	{"pass-at", .parse = parse_pass_at, .seen = &arg_sweep.plan_given,
	 .usage = "--pass-at K,...",
	 .help = "pass@k values to report besides pass@1 (k <= epochs)"},
	CMD_RUN_OPT_TIMEOUT(.seen = &arg_sweep.plan_given,
			    .help = "each episode's deadline (default: each task's)"),
	CMD_RUN_OPT_IMAGE(.seen = &arg_sweep.plan_given,
			  .help = "sandbox image (default: each task's)"),
	{.include = limits,
	 .group = ", ",
	 .help = "each episode's limits, as 'sandboxctl run' takes them\n"
		 "(default: each task's, else run's defaults)"},
	{"task-dir", .parse = parse_task_dir, .seen = &arg_sweep.plan_given,
	 .usage = "--task-dir DIR",
	 .help = "a task folder (a Harbor task.toml one too), or a folder of\n"
		 "them; repeat"},
	{"tasks-dir", .parse = parse_tasks_dir, .seen = &arg_sweep.plan_given,
	 .usage = "--tasks-dir DIR",
	 .help = "tasks directory (default: $SBX_TASKS_DIR or ./tasks)"},
	{"tag", .parse = parse_tag, .seen = &arg_sweep.plan_given, .usage = "--tag KEY=VALUE",
	 .help = "recorded in sweep.json (repeat)"},
	{"out", .value = &arg_sweep.out, .seen = &arg_sweep.plan_given, .usage = "--out DIR",
	 .help = "the sweep directory (default sweeps/<UTC time>); must be\n"
		 "new or empty"},
	{.heading = "How to run it:"},
	{"resume", .value = &arg_sweep.resume},
	{"jobs", .parse = parse_jobs, .usage = "--jobs N",
	 .help = "concurrent episodes on the default engine (default: from\n"
		 "the engine's CPUs and memory and the tasks' memory limit)"},
	{"engine", .parse = parse_engine, .usage = "--engine URL",
	 .help = "an engine (repeat to spread episodes over several):\n"
		 "unix:///path or tcp://host:port (TLS from\n"
		 "DOCKER_CERT_PATH); URL#jobs=N gives it N slots (default\n"
		 "--jobs). Each must have the image; one that fails 3\n"
		 "times in a row is drained and its work re-queued"},
	{"reuse", .parse = parse_reuse, .usage = "--reuse N",
	 .help = "each job's sandbox serves up to N episodes, reset in\n"
		 "place between two by PID 1 and checked (default 1:\n"
		 "single use; GUI, Harbor and published runs stay single\n"
		 "use; docs/serve.md, \"Reuse\")"},
	{"retries", .parse = parse_retries, .seen = &arg_sweep.retries_given,
	 .usage = "--retries N",
	 .help = "extra attempts for an infra_error episode, with backoff\n"
		 "(default " XSTR(SBX_SWEEP_DEFAULT_RETRIES) "); other statuses are results, never "
							     "retried.\n"
							     "More than 20% infra errors in the "
							     "last 20 attempts\n"
							     "stops the sweep (exit 3)"},
	{"stop-grace", .parse = parse_stop_grace, .usage = "--stop-grace S",
	 .help = "after Ctrl-C, how long running episodes may finish\n"
		 "before they are interrupted (default " XSTR(
			 CMD_SWEEP_DEFAULT_STOP_GRACE) "; a second\n"
						       "Ctrl-C interrupts at once)"},
	{"require-pass", .parse = parse_require_pass, .usage = "--require-pass R",
	 .help = "exit 1 when the overall pass rate is below R (0..1)"},
	{"quiet", .flag = &arg_sweep.quiet,
	 .help = "no progress; --json: the summary as one JSON document"},
	{"json", .flag = &arg_sweep.json},
	CMD_RUN_OPT_TEST_LABEL(),
	{.text = "\nSummary (printed, and summary.json): per task × agent and overall: episodes,\n"
		 "pass rate with a 95% Wilson interval, mean score with a bootstrap 95%\n"
		 "interval, unbiased pass@k, agent errors, timeouts, infra errors (attempts),\n"
		 "median agent time and overhead (p95 too in summary.json), tool calls and\n"
		 "token usage (llm).\n"
		 "'compare' pairs episodes by task, epoch and seed and gives the exact sign\n"
		 "test's p-value on pass/fail and a paired bootstrap interval on the score.\n\n"
		 "Exit status: 0 every episode has a result (whatever it scored), 1 under\n"
		 "--require-pass, 2 usage or configuration (an episode could not be prepared:\n"
		 "the agent or a task), 3 engine or infrastructure (episodes left without a\n"
		 "result, too many infra errors), 130 interrupted (resume with --resume).\n"},
	{0},
};
