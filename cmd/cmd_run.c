/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl run --task NAME: one episode in a fresh sandbox, graded, cleaned
 * up, with runs/<run-id>/result.json. Also holds what `mcp` shares with it
 * (option parsing for limits, the grade hook, signal handling).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "grader.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/run.h"

/* Shared with cmd_mcp.c (no header of their own: cmd/ keeps one file per command). */
int cmd_run__grade(const sbx_task *task, const char *outputs_dir, sbx_run_grade *out,
		   void *userdata, sbx_error *err);
int cmd_run__parse_common(int opt, const char *arg, sbx_run_opts *o);
void cmd_run__install_signals(void);
extern volatile sig_atomic_t cmd_run__interrupted;

volatile sig_atomic_t cmd_run__interrupted;

static void on_signal(int sig)
{
	cmd_run__interrupted = sig;
}

void cmd_run__install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int cmd_run__grade(const sbx_task *task, const char *outputs_dir, sbx_run_grade *out,
		   void *userdata, sbx_error *err)
{
	_cleanup_(sbx_grade_result_freep) sbx_grade_result *g = NULL;
	_cleanup_(sbx_buf_free) sbx_buf text = SBX_BUF_INIT(16 * 1024 * 1024);
	int r;

	r = sbx_grade_task(task, outputs_dir, &g, err);
	if (r < 0)
		return r;
	out->graded = true;
	snprintf(out->status, sizeof(out->status), "%s", sbx_grade_status_name(g->status));
	out->score = g->score;
	out->cells_graded = g->graded;
	out->cells_matched = g->matched;
	if (sbx_grade_report_text(g, 50, &text) >= 0)
		out->report_text = sbx_buf_steal(&text, NULL);
	out->report_json = sbx_grade_report_json(g);
	return 0;
}

/* "2g", "512m", "1.5GiB", "1073741824" -> bytes; 0 on a bad value. */
static uint64_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1;

	if (end == s || v <= 0)
		return 0;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1024.0, end++;
		break;
	case 'm':
	case 'M':
		mul = 1024.0 * 1024, end++;
		break;
	case 'g':
	case 'G':
		mul = 1024.0 * 1024 * 1024, end++;
		break;
	case '\0':
		break;
	default:
		return 0;
	}
	if (strcasecmp(end, "ib") == 0 || strcasecmp(end, "b") == 0)
		end += strlen(end);
	if (*end || v * mul > 1e15)
		return 0;
	return (uint64_t)(v * mul);
}

static long parse_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	return v;
}

enum {
	OPT_TASK = 0x100,
	OPT_AGENT,
	OPT_IMAGE,
	OPT_TIMEOUT,
	OPT_MEMORY,
	OPT_CPUS,
	OPT_PIDS,
	OPT_RUNTIME,
	OPT_KEEP,
	OPT_JSON,
	OPT_RUNS_DIR,
	OPT_RUN_ID,
	OPT_TASKS_DIR,
	OPT_PORT,
	OPT_NETWORK,
	OPT_GRACE,
	OPT_QUIET,
	OPT_TEST,
};

/* Options both `run` and `mcp` take. Returns 1 when handled, 0 when not, -1 on a bad value. */
int cmd_run__parse_common(int opt, const char *arg, sbx_run_opts *o)
{
	long v;

	switch (opt) {
	case OPT_TASK:
		o->task = arg;
		return 1;
	case OPT_IMAGE:
		o->image = arg;
		return 1;
	case OPT_TIMEOUT:
		v = parse_long(arg, 1, 7 * 24 * 3600);
		if (v < 0)
			return cli_error("--timeout: '%s' is not a number of seconds", arg), -1;
		o->timeout_s = (uint32_t)v;
		return 1;
	case OPT_MEMORY:
		o->memory = parse_size(arg);
		if (!o->memory)
			return cli_error("--memory: '%s' is not a size (e.g. 2g, 512m)", arg), -1;
		return 1;
	case OPT_CPUS: {
		char *end;
		o->cpus = strtod(arg, &end);
		if (end == arg || *end || o->cpus <= 0 || o->cpus > 1024)
			return cli_error("--cpus: '%s' is not a positive number", arg), -1;
		return 1;
	}
	case OPT_PIDS:
		v = parse_long(arg, 8, 1 << 22);
		if (v < 0)
			return cli_error("--pids: '%s' is not a number >= 8", arg), -1;
		o->pids = (uint32_t)v;
		return 1;
	case OPT_RUNTIME:
		o->runtime = arg;
		return 1;
	case OPT_RUNS_DIR:
		o->runs_dir = arg;
		return 1;
	case OPT_RUN_ID:
		o->run_id = arg;
		return 1;
	case OPT_TASKS_DIR:
		o->tasks_dir = arg;
		return 1;
	case OPT_GRACE:
		v = parse_long(arg, 1, 3600);
		if (v < 0)
			return cli_error("--grace: '%s' is not a number of seconds", arg), -1;
		o->grace_s = (uint32_t)v;
		return 1;
	case OPT_NETWORK:
		if (strcmp(arg, "none") == 0)
			o->published = false;
		else if (strcmp(arg, "published") == 0)
			return cli_error("--network published is not available in this build: the "
					 "sandbox image cannot drop egress yet (use the default, "
					 "none, reached through the relay)"),
			       -1;
		else
			return cli_error("--network: expected 'none' or 'published', not '%s'",
					 arg),
			       -1;
		return 1;
	case OPT_KEEP:
		o->keep = true;
		return 1;
	case OPT_TEST:
		o->test = true;
		return 1;
	default:
		return 0;
	}
}

static void help(void)
{
	printf("Usage: sandboxctl run --task NAME [options]\n\n"
	       "Runs one episode: creates a hardened sandbox, copies the task's files in,\n"
	       "lets an agent work through the MCP server, grades the outputs, removes the\n"
	       "sandbox and writes runs/<run-id>/result.json.\n\n"
	       "Options:\n"
	       "  --task NAME        task name (in the tasks directory) or path (required)\n"
	       "  --agent CMD        oracle | demo | a shell command run on the host with\n"
	       "                     SANDBOX_MCP_URL, SANDBOX_REST_URL, SANDBOX_SSE_URL,\n"
	       "                     SANDBOX_TASK_PROMPT, SANDBOX_RUN_ID, SANDBOX_TASK,\n"
	       "                     SANDBOX_OUTPUTS and SANDBOX_DEADLINE in its environment.\n"
	       "                     Without --agent: print the endpoint and wait for an\n"
	       "                     outside agent to call complete_task.\n"
	       "  --timeout SECONDS  deadline for the agent (default: the task's, else 600)\n"
	       "  --memory SIZE      memory limit, e.g. 2g, 512m (default: task's, else 2g)\n"
	       "  --cpus N           CPU limit (default: task's, else 2)\n"
	       "  --pids N           process limit (default: task's, else 256)\n"
	       "  --runtime NAME     OCI runtime, e.g. runsc (default: the engine's)\n"
	       "  --image REF        sandbox image (default: %s, %s for GUI tasks)\n"
	       "  --network MODE     none (the default and, for now, the only mode: the\n"
	       "                     sandbox has no network; agents reach it through the relay)\n"
	       "  --port N           relay port on 127.0.0.1 (default: any free one)\n"
	       "  --grace SECONDS    how long PID 1 waits past the deadline (default 30)\n"
	       "  --runs-dir DIR     where run directories go (default ./runs)\n"
	       "  --run-id ID        run id (default: time-task-random)\n"
	       "  --tasks-dir DIR    tasks directory (default: $SBX_TASKS_DIR or ./tasks)\n"
	       "  --keep             leave the sandbox behind (remove it with 'sandboxctl gc')\n"
	       "  --json             print result.json as one line on stdout\n"
	       "  --quiet            agent output only into runs/<run-id>/agent.log\n\n"
	       "Exit status: 0 pass, 1 graded but not passed, 2 usage, 3 engine or\n"
	       "infrastructure error, 4 deadline passed, 130 interrupted.\n",
	       SBX_IMAGE_SLIM, SBX_IMAGE_FULL);
}

static void on_ready(sbx_run *run, void *userdata)
{
	bool json = *(bool *)userdata;
	const sbx_run_result *r = sbx_run_get_result(run);
	FILE *f = json ? stderr : stdout;

	fprintf(stderr, "sandboxctl: run %s: sandbox %.12s ready in %.0f ms\n", r->run_id,
		r->sandbox_id ? r->sandbox_id : "?",
		r->phase_ms[SBX_PHASE_CREATE] + r->phase_ms[SBX_PHASE_START] +
			r->phase_ms[SBX_PHASE_READY]);
	if (strcmp(r->agent, "external") == 0) {
		fprintf(f,
			"MCP endpoint: %s/mcp\nREST endpoint: %s\nTask prompt: %s\n"
			"Waiting for an agent to call complete_task (deadline in %u s; Ctrl-C "
			"ends the run)\n",
			sbx_run_get_url(run), sbx_run_get_url(run),
			sbx_run_get_task(run)->prompt ? sbx_run_get_task(run)->prompt : "",
			r->limits.timeout_s);
		fflush(f);
	}
}

static void print_summary(const sbx_run_result *r)
{
	fprintf(stderr, "sandboxctl: run %s: %s", r->run_id, sbx_run_status_name(r->status));
	if (r->grade.graded)
		fprintf(stderr, " (%s, score %.1f%%, %llu/%llu cells)", r->grade.status,
			r->grade.score * 100, (unsigned long long)r->grade.cells_matched,
			(unsigned long long)r->grade.cells_graded);
	fprintf(stderr, ", ended by %s, %.2f s\n", sbx_run_end_name(r->end), r->total_ms / 1000);
	if (r->error)
		fprintf(stderr, "sandboxctl: %s: %s\n", r->error_kind ? r->error_kind : "error",
			r->error);
	if (r->grade.report_text && r->status != SBX_RUN_PASS)
		fputs(r->grade.report_text, stderr);
	fprintf(stderr, "sandboxctl: result: %s/result.json\n", r->run_dir);
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"task", required_argument, NULL, OPT_TASK},
		{"agent", required_argument, NULL, OPT_AGENT},
		{"image", required_argument, NULL, OPT_IMAGE},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"memory", required_argument, NULL, OPT_MEMORY},
		{"cpus", required_argument, NULL, OPT_CPUS},
		{"pids", required_argument, NULL, OPT_PIDS},
		{"runtime", required_argument, NULL, OPT_RUNTIME},
		{"keep", no_argument, NULL, OPT_KEEP},
		{"json", no_argument, NULL, OPT_JSON},
		{"runs-dir", required_argument, NULL, OPT_RUNS_DIR},
		{"run-id", required_argument, NULL, OPT_RUN_ID},
		{"tasks-dir", required_argument, NULL, OPT_TASKS_DIR},
		{"port", required_argument, NULL, OPT_PORT},
		{"network", required_argument, NULL, OPT_NETWORK},
		{"grace", required_argument, NULL, OPT_GRACE},
		{"quiet", no_argument, NULL, OPT_QUIET},
		{"test-label", no_argument, NULL, OPT_TEST},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	sbx_run_opts o = SBX_RUN_OPTS_INIT;
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_run_result *res;
	bool json = false;
	int c, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		long v;

		r = cmd_run__parse_common(c, optarg, &o);
		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 'h':
			help();
			return EXIT_PASS;
		case OPT_AGENT:
			if (!*optarg)
				return cli_error("--agent: empty command"), EXIT_USAGE;
			o.agent = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_QUIET:
			o.quiet_agent = true;
			break;
		case OPT_PORT:
			v = parse_long(optarg, 1, 65535);
			if (v < 0)
				return cli_error("--port: '%s' is not a port", optarg), EXIT_USAGE;
			o.port = (uint16_t)v;
			break;
		default:
			cli_error("run: unknown or incomplete option '%s' (see 'sandboxctl run "
				  "--help')",
				  argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return cli_error("run: unexpected argument '%s'", argv[optind]), EXIT_USAGE;
	if (!o.task)
		return cli_error("run: --task NAME is required (see 'sandboxctl tasks')"),
		       EXIT_USAGE;
	if (json)
		o.quiet_agent = true; /* stdout carries exactly one line */
	o.grade = cmd_run__grade;
	o.on_ready = on_ready;
	o.on_ready_userdata = &json;
	o.interrupted = &cmd_run__interrupted;
	cmd_run__install_signals();

	r = sbx_run_prepare(&run, &o, &err);
	if (r < 0) {
		cli_error("run: %s", sbx_error_message(&err));
		return EXIT_USAGE;
	}
	{
		sbx_run_end end;
		sbx_error lerr = SBX_ERROR_INIT;

		if (sbx_run_launch(run, &lerr) < 0)
			end = cmd_run__interrupted ? SBX_END_INTERRUPTED : SBX_END_NONE;
		else
			end = sbx_run_wait(run);
		r = sbx_run_finish(run, end, &err);
	}
	res = sbx_run_get_result(run);
	if (r < 0) {
		cli_error("run %s: writing the result: %s", res->run_id, sbx_error_message(&err));
		return EXIT_ENGINE;
	}
	if (json) {
		_cleanup_free_ char *text = sbx_run_result_json(res);
		_cleanup_json_ cJSON *j = NULL;
		_cleanup_free_ char *line = NULL;

		if (text && sbx_json_parse(text, strlen(text), &j, NULL) == 0)
			line = sbx_json_print(j);
		if (line)
			printf("%s\n", line);
		fflush(stdout);
	}
	print_summary(res);
	return sbx_run_status_exit_code(res->status);
}
