/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl run --task NAME: one episode in a fresh sandbox, graded, cleaned
 * up, with runs/<run-id>/result.json. What mcp and sweep share with it (the
 * episode options, the grader's path, signals) is in run_options.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_run.h"
#include "engines.h"
#include "sbx/grade.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/run.h"

static int parse_port(const char *text)
{
	long v = cli_option_long("port", text, 1, 65535, "a port");

	if (v < 0)
		return -1;
	arg_run.port = (uint16_t)v;
	return 0;
}

static int parse_agent(const char *text)
{
	if (!*text)
		return cli_error("--agent: empty command"), -1;
	arg_run.agent = text;
	return 0;
}

static bool arg_json;

static const cli_option run_options[] = {
	{.text = "Usage: sandboxctl run --task NAME [options]\n\n"
		 "Runs one episode: creates a hardened sandbox, copies the task's files in,\n"
		 "lets an agent work through the MCP server, grades the outputs, removes the\n"
		 "sandbox and writes runs/<run-id>/result.json.\n"},
	{.heading = "Options:"},
	CMD_RUN_OPT_TASK(.help = "task name (in the tasks directory) or path (required)"),
	{"task-dir", .value = &arg_run.task, .usage = "--task-dir PATH",
	 .help = "the same, for a task folder: task.yaml, the reference\n"
		 "system's task.json (starting_files/, oracle/), or a\n"
		 "Harbor task directory (task.toml; docs/harbor.md)"},
	{"agent", .parse = parse_agent, .usage = "--agent CMD",
	 .help = "oracle | demo | llm | a shell command run on the host with\n"
		 "SANDBOX_MCP_URL, SANDBOX_REST_URL, SANDBOX_SSE_URL,\n"
		 "SANDBOX_TASK_PROMPT, SANDBOX_RUN_ID, SANDBOX_TASK,\n"
		 "SANDBOX_OUTPUTS and SANDBOX_DEADLINE in its environment.\n"
		 "Without --agent: print the endpoint and wait for an\n"
		 "outside agent to call complete_task."},
	{.include = cli_llm_options},
	CMD_RUN_OPT_TIMEOUT(.help = "deadline for the agent (default: the task's, else 600)"),
	CMD_RUN_OPT_MEMORY(.help = "memory limit, e.g. 2g, 512m (default: task's, else 2g)"),
	CMD_RUN_OPT_CPUS(.help = "CPU limit (default: task's, else 2)"),
	CMD_RUN_OPT_PIDS(.help = "process limit (default: task's, else 256)"),
	CMD_RUN_OPT_RUNTIME(.help = "OCI runtime, e.g. runsc (default: the engine's); an\n"
				    "engine without it is refused before anything is\n"
				    "created (exit 3), never a fallback; so is runsc\n"
				    "registered without --oci-seccomp (it would ignore\n"
				    "the seccomp profile) unless --allow-no-seccomp"),
	CLI_ENGINE_OPT_ALLOW_NO_SECCOMP(),
	CMD_RUN_OPT_SECCOMP(.help = "sandbox (default): our profile\n"
				    "(images/seccomp/sandbox.json: no AF_VSOCK or other\n"
				    "unused socket families, io_uring, ptrace, keyrings,\n"
				    "userfaultfd, perf, namespaces); default: the engine's\n"
				    "own. result.json records which"),
	CMD_RUN_OPT_IMAGE(.help = "sandbox image (default: " SBX_IMAGE_SLIM ", " SBX_IMAGE_FULL
				  " for GUI tasks)"),
	CMD_RUN_OPT_NETWORK(.help = "none (default): the sandbox has no network; agents reach\n"
				    "it through the relay, which records every message.\n"
				    "published: for clients that must connect straight to\n"
				    "the server: its port bound on 127.0.0.1 (any free one;\n"
				    "the agent's SANDBOX_*_URL name it), egress dropped for\n"
				    "IPv4 and IPv6 (iptables), no DNS; PID 1 starts as root\n"
				    "with NET_ADMIN, SETPCAP, SETUID, SETGID to set the\n"
				    "firewall, then drops every capability before anything\n"
				    "runs. Every request must carry the run's token (in the\n"
				    "URLs, or Authorization: Bearer) and /control is never\n"
				    "served on that port. The transcript misses the agent's\n"
				    "own traffic."),
	{"port", .parse = parse_port, .usage = "--port N",
	 .help = "relay port on 127.0.0.1 (default: any free one)"},
	{"listen", .value = &arg_run.listen, .usage = "--listen WHERE",
	 .help = "tcp (default): 127.0.0.1:PORT; unix: a 0600 socket,\n"
		 "runs/<run-id>/relay.sock; unix:PATH: that socket. The\n"
		 "agent gets SANDBOX_UNIX_SOCKET and http://localhost/...\n"
		 "URLs (curl --unix-socket PATH URL)"},
	CMD_RUN_OPT_GRACE(.help = "how long PID 1 waits past the deadline (default 30)"),
	{"record", .parse = cmd_run__parse_record, .usage = "--record SECONDS",
	 .help = "GUI tasks: a screenshot every SECONDS of the agent phase\n"
		 "into runs/<run-id>/frames/ (default 2; at least 0.5;\n"
		 "0: off; at most 600 frames, 128 MiB), played by\n"
		 "'sandboxctl view' with the tool calls between them"},
	CMD_RUN_OPT_RUNS_DIR(.help = "where run directories go (default ./runs)"),
	CMD_RUN_OPT_RUN_ID(.help = "run id (default: time-task-random)"),
	{"seed", .parse = cmd_run__parse_seed, .usage = "--seed N",
	 .help = "seedable tasks: a fresh instance (files and oracle)\n"
		 "made from seed N into the run directory; recorded in\n"
		 "result.json (default: the committed files)"},
	CMD_RUN_OPT_TASKS_DIR(.help = "tasks directory (default: $SBX_TASKS_DIR or ./tasks)"),
	CMD_RUN_OPT_KEEP(.help = "leave the sandbox behind (its id and how to remove it\n"
				 "are printed: sandboxctl gc --run-id ID)"),
	{"json", .flag = &arg_json, .help = "print result.json as one line on stdout"},
	{"quiet", .flag = &arg_run.quiet_agent,
	 .help = "agent output only into runs/<run-id>/agent.log"},
	CMD_RUN_OPT_TEST_LABEL(),
	{.text = "\nExit status: 0 pass, 1 graded but not passed (or a grade error: the\n"
		 "grader, a child process, crashed or ran past its limits on the outputs),\n"
		 "2 usage, 3 engine or infrastructure error, 4 deadline passed, 5 agent\n"
		 "error (the agent exited non-zero or could not start before complete_task;\n"
		 "still graded), 6 the sandbox failed, 130 interrupted.\n"},
	{0},
};

static void on_prepared(sbx_run *run, void *userdata)
{
	const sbx_task *t = sbx_run_get_task(run);

	if (t->reference) {
		fprintf(stderr, "sandboxctl: task '%s': read as a reference task (", t->id);
		sbx_fputs_escaped_line(t->path, stderr);
		fputs(")\n", stderr);
	}
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
		/* --json: the connection (URLs, token) is stdout's first line. */
		if (json && sbx_run_get_connection(run)) {
			printf("%s\n", sbx_run_get_connection(run));
			fflush(stdout);
		}
		if (strncmp(r->endpoint, "unix:", 5) == 0)
			fprintf(f, "Relay socket: %s (curl --unix-socket %s URL)\n",
				r->endpoint + 5, r->endpoint + 5);
		fprintf(f, "MCP endpoint: %s/mcp\nREST endpoint: %s\nTask prompt: ",
			sbx_run_get_url(run), sbx_run_get_url(run));
		/* The task folder's text: its lines kept, its escape sequences shown inert. */
		sbx_fputs_escaped(sbx_run_get_task(run)->prompt, f);
		fprintf(f,
			"\nOr send 'Authorization: Bearer <token>' (runs/%s/connection.json)\n"
			"Waiting for an agent to call complete_task (deadline in %u s; Ctrl-C "
			"ends the run)\n",
			r->run_id, r->limits.resolved.timeout_s);
		fflush(f);
	}
}

static void print_summary(const sbx_run_result *r)
{
	fprintf(stderr, "sandboxctl: run %s: %s", r->run_id, sbx_run_status_name(r->status));
	if (r->grade.graded && r->verifier.harbor)
		fprintf(stderr, " (reward %g from %s)", r->verifier.reward,
			r->verifier.reward_source);
	else if (r->grade.graded)
		fprintf(stderr, " (%s, score %.1f%%, %llu/%llu cells)",
			sbx_grade_status_name(r->grade.status), r->grade.score * 100,
			(unsigned long long)r->grade.cells_matched,
			(unsigned long long)r->grade.cells_graded);
	fprintf(stderr, ", ended by %s, %.2f s\n", sbx_run_end_name(r->end), r->total_ms / 1000);
	if (r->error)
		fprintf(stderr, "sandboxctl: %s: %s\n", r->error_kind ? r->error_kind : "error",
			r->error);
	if (r->status == SBX_RUN_AGENT_ERROR) {
		/* The grade of a broken agent is noise: grade.txt keeps it. */
		fprintf(stderr,
			"sandboxctl: agent error: the agent exited with status %d before "
			"complete_task%s%s",
			r->agent_exit, r->agent_exit == 127 ? " (command not found)" : "",
			r->agent_tail ? "; agent.log ends: " : "");
		sbx_fputs_escaped(r->agent_tail, stderr);
		fputc('\n', stderr);
	} else if (r->grade.report_text && r->status != SBX_RUN_PASS) {
		/* Cell values and sheet names come from the agent's outputs. */
		sbx_fputs_escaped(r->grade.report_text, stderr);
	}
	if (r->kept)
		fprintf(stderr,
			"sandboxctl: run %s: kept sandbox %.12s (--keep); remove it with: "
			"sandboxctl gc --run-id %s\n",
			r->run_id, r->sandbox_id ? r->sandbox_id : "?", r->run_id);
	fprintf(stderr, "sandboxctl: result: %s/result.json\n", r->run_id ? r->run_dir : "?");
}

/*
 * The one stdout line a person or a sweep script reads:
 * "PASS  banking_reserve 100.00% (315/315)". Timeouts show the grade too;
 * anything but a pass ends with its reason: "FAIL  sales_revenue 0.00%
 * (51/51): gate 'inputs unchanged' failed: Sheet1!A2 changed (...)".
 */
static void print_verdict(const sbx_run_result *r)
{
	_cleanup_free_ char *why = sbx_run_result_reason(r);
	char word[16];
	size_t i;

	snprintf(word, sizeof(word), "%s", sbx_run_status_name(r->status));
	for (i = 0; word[i]; i++)
		word[i] = (char)toupper((unsigned char)word[i]);
	if (r->grade.graded && r->verifier.harbor)
		printf("%s  %s reward %g", word, r->task ? r->task : "?", r->verifier.reward);
	else if (r->grade.graded)
		printf("%s  %s %.2f%% (%llu/%llu)", word, r->task ? r->task : "?",
		       r->grade.score * 100, (unsigned long long)r->grade.cells_matched,
		       (unsigned long long)r->grade.cells_graded);
	else
		printf("%s  %s", word, r->task ? r->task : "?");
	if (why) {
		/* Cell values in it are the agent's. */
		fputs(": ", stdout);
		sbx_fputs_escaped(why, stdout);
	}
	putchar('\n');
	fflush(stdout);
}

int cmd_run(int argc, char **argv)
{
	sbx_run_opts o;
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_run_result *res;
	_cleanup_free_ char *llm_agent = NULL;
	bool json;
	int r = cli_parse("run", argc, argv, run_options, NULL, CLI_NO_ARGUMENTS | CLI_IN_ORDER);

	if (r <= 0)
		return -r;
	o = arg_run;
	json = arg_json;
	if (cli_llm_agent(o.agent, cli_llm_extra, &llm_agent) < 0)
		return EXIT_USAGE;
	if (llm_agent)
		o.agent = llm_agent;
	if (!o.task)
		return cli_error("run: --task NAME is required (see 'sandboxctl tasks')"),
		       EXIT_USAGE;
	/* A runtime the engine lacks is refused before anything is made: the
	 * engine would refuse the create anyway, but as an infra_error a sweep
	 * retries. */
	if (o.limits.runtime[0] &&
	    cli_check_engines("run", &(cli_engine_arg){.url = (char *)o.engine}, 1, NULL,
			      o.limits.runtime, NULL, NULL, NULL) < 0)
		return EXIT_ENGINE;
	if (json)
		o.quiet_agent = true; /* stdout carries exactly one line */
	o.grader = cmd_run__grader();
	o.on_ready = on_ready;
	o.on_prepared = on_prepared;
	o.on_ready_userdata = &json;
	o.interrupted = &cmd_run__interrupted;
	cmd_run__install_signals();

	r = sbx_run_execute(&o, &run, &err);
	if (!run) {
		cli_error("run: %s", sbx_error_message(&err));
		return EXIT_USAGE;
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
	if (!json)
		print_verdict(res); /* last, so it is the line a person sees */
	return sbx_run_status_exit_code(res->status);
}
