/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl run --task NAME: one episode in a fresh sandbox, graded, cleaned
 * up, with runs/<run-id>/result.json. Also holds what `mcp` shares with it
 * (option parsing for limits, the grade hook, signal handling).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_run.h"
#include "engines.h"
#include "sbx/grade.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/run.h"

volatile sig_atomic_t cmd_run__interrupted;

static void on_signal(int sig)
{
	cmd_run__interrupted = sig;
}

void cmd_run__install_signals(void)
{
	cli_on_stop_signals(on_signal);
}

int cmd_run__grade(const sbx_task *task, const char *outputs_dir, sbx_run_grade *out,
		   void *userdata, sbx_error *err)
{
	(void)userdata;
	return sbx_run_grade_outputs(task, outputs_dir, out, err);
}

const char *cmd_run__grader(void)
{
	static char path[PATH_MAX];
	static const char *const rel[] = {"/", "/../libexec/sandboxctl/"};
	char self[PATH_MAX];
	ssize_t n;

	if (path[0])
		return path;
	snprintf(path, sizeof(path), "/proc/self/exe");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return path;
	self[n] = '\0';
	dirname(self);
	for (size_t i = 0; i < SBX_ELEMENTSOF(rel); i++) {
		char p[PATH_MAX];

		if (snprintf(p, sizeof(p), "%s%ssandbox-grader", self, rel[i]) < (int)sizeof(p) &&
		    access(p, X_OK) == 0) {
			snprintf(path, sizeof(path), "%s", p);
			break;
		}
	}
	return path;
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

/* arg is a or b: 1 with *is_b saying which, else -1 with a message. */
static int parse_either(const char *name, const char *arg, const char *a, const char *b, bool *is_b)
{
	if (strcmp(arg, a) != 0 && strcmp(arg, b) != 0)
		return cli_error("--%s: expected '%s' or '%s', not '%s'", name, a, b, arg), -1;
	*is_b = strcmp(arg, b) == 0;
	return 1;
}

const char *const cmd_run__common_options[] = {
	"task=",   "image=",	 "timeout=", "memory=",	   "cpus=",
	"pids=",   "runtime=",	 "seccomp=", "keep",	   "runs-dir=",
	"run-id=", "tasks-dir=", "grace=",   "test-label", NULL,
};

int cmd_run__parse_common(const char *name, const char *arg, sbx_run_opts *o)
{
	long v;

	if (strcmp(name, "task") == 0 || strcmp(name, "task-dir") == 0) {
		o->task = arg;
	} else if (strcmp(name, "image") == 0) {
		o->image = arg;
	} else if (strcmp(name, "timeout") == 0) {
		v = cli_option_long(name, arg, 1, 7 * 24 * 3600, "a number of seconds");
		if (v < 0)
			return -1;
		o->timeout_s = (uint32_t)v;
	} else if (strcmp(name, "memory") == 0) {
		o->memory = parse_size(arg);
		if (!o->memory)
			return cli_error("--memory: '%s' is not a size (e.g. 2g, 512m)", arg), -1;
	} else if (strcmp(name, "cpus") == 0) {
		char *end;

		o->cpus = strtod(arg, &end);
		if (end == arg || *end || o->cpus <= 0 || o->cpus > 1024)
			return cli_error("--cpus: '%s' is not a positive number", arg), -1;
	} else if (strcmp(name, "pids") == 0) {
		v = cli_option_long(name, arg, 8, 1 << 22, "a number >= 8");
		if (v < 0)
			return -1;
		o->pids = (uint32_t)v;
	} else if (strcmp(name, "runtime") == 0) {
		o->runtime = arg;
	} else if (strcmp(name, "seccomp") == 0) {
		return parse_either(name, arg, "sandbox", "default", &o->engine_seccomp);
	} else if (strcmp(name, "runs-dir") == 0) {
		o->runs_dir = arg;
	} else if (strcmp(name, "run-id") == 0) {
		o->run_id = arg;
	} else if (strcmp(name, "tasks-dir") == 0) {
		o->tasks_dir = arg;
	} else if (strcmp(name, "record") == 0) {
		char *end;

		o->record_s = strtod(arg, &end);
		if (end == arg || *end || o->record_s < 0 || o->record_s > 3600)
			return cli_error("--record: '%s' is not a number of seconds (0: off)", arg),
			       -1;
		if (o->record_s == 0)
			o->record_s =
				-1; /* the option's 0 means off; the struct's 0 means default */
		else if (o->record_s < 0.5)
			o->record_s = 0.5;
	} else if (strcmp(name, "grace") == 0) {
		v = cli_option_long(name, arg, 1, 3600, "a number of seconds");
		if (v < 0)
			return -1;
		o->grace_s = (uint32_t)v;
	} else if (strcmp(name, "network") == 0) {
		return parse_either(name, arg, "none", "published", &o->published);
	} else if (strcmp(name, "seed") == 0) {
		char *end;

		errno = 0;
		o->seed = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || o->seed > SBX_TASK_SEED_MAX)
			return cli_error("--seed: '%s' is not a number 0..%llu", arg,
					 SBX_TASK_SEED_MAX),
			       -1;
		o->seeded = true;
	} else if (strcmp(name, "keep") == 0) {
		o->keep = true;
	} else if (strcmp(name, "test-label") == 0) {
		o->test = true;
	} else {
		return 0;
	}
	return 1;
}

static void help(void)
{
	printf("Usage: sandboxctl run --task NAME [options]\n\n"
	       "Runs one episode: creates a hardened sandbox, copies the task's files in,\n"
	       "lets an agent work through the MCP server, grades the outputs, removes the\n"
	       "sandbox and writes runs/<run-id>/result.json.\n\n"
	       "Options:\n"
	       "  --task NAME        task name (in the tasks directory) or path (required)\n"
	       "  --task-dir PATH    the same, for a task folder: task.yaml, the reference\n"
	       "                     system's task.json (starting_files/, oracle/), or a\n"
	       "                     Harbor task directory (task.toml; docs/harbor.md)\n"
	       "  --agent CMD        oracle | demo | llm | a shell command run on the host with\n"
	       "                     SANDBOX_MCP_URL, SANDBOX_REST_URL, SANDBOX_SSE_URL,\n"
	       "                     SANDBOX_TASK_PROMPT, SANDBOX_RUN_ID, SANDBOX_TASK,\n"
	       "                     SANDBOX_OUTPUTS and SANDBOX_DEADLINE in its environment.\n"
	       "                     Without --agent: print the endpoint and wait for an\n"
	       "                     outside agent to call complete_task.\n"
	       "  --agent llm        the built-in model agent: a tool loop with a model endpoint\n"
	       "    --model NAME       the endpoint's model (required)\n"
	       "    --api openai|anthropic   Chat Completions (default) or Messages\n"
	       "    --base-url URL     default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL, else the\n"
	       "                       provider's; --api-key-env VAR (default OPENAI_API_KEY /\n"
	       "                       ANTHROPIC_API_KEY; never logged)\n"
	       "    --max-turns N (50), --max-output-tokens N, --max-total-tokens N,\n"
	       "    --temperature T, --model-seed N, --system-prompt FILE\n"
	       "                       each message once: runs/<run-id>/model.jsonl; a reply\n"
	       "                       over 4 MiB is refused, the conversation kept within\n"
	       "                       8 MiB (the oldest turns' tool output elided first)\n"
	       "  --timeout SECONDS  deadline for the agent (default: the task's, else 600)\n"
	       "  --memory SIZE      memory limit, e.g. 2g, 512m (default: task's, else 2g)\n"
	       "  --cpus N           CPU limit (default: task's, else 2)\n"
	       "  --pids N           process limit (default: task's, else 256)\n"
	       "  --runtime NAME     OCI runtime, e.g. runsc (default: the engine's); an\n"
	       "                     engine without it is refused before anything is\n"
	       "                     created (exit 3), never a fallback; so is runsc\n"
	       "                     registered without --oci-seccomp (it would ignore\n"
	       "                     the seccomp profile) unless --allow-no-seccomp\n"
	       "  --seccomp sandbox|default   sandbox (default): our profile\n"
	       "                     (images/seccomp/sandbox.json: no AF_VSOCK or other\n"
	       "                     unused socket families, io_uring, ptrace, keyrings,\n"
	       "                     userfaultfd, perf, namespaces); default: the engine's\n"
	       "                     own. result.json records which\n"
	       "  --image REF        sandbox image (default: %s, %s for GUI tasks)\n"
	       "  --network MODE     none (default): the sandbox has no network; agents reach\n"
	       "                     it through the relay, which records every message.\n"
	       "                     published: for clients that must connect straight to\n"
	       "                     the server: its port bound on 127.0.0.1 (any free one;\n"
	       "                     the agent's SANDBOX_*_URL name it), egress dropped for\n"
	       "                     IPv4 and IPv6 (iptables), no DNS; PID 1 starts as root\n"
	       "                     with NET_ADMIN, SETPCAP, SETUID, SETGID to set the\n"
	       "                     firewall, then drops every capability before anything\n"
	       "                     runs. Every request must carry the run's token (in the\n"
	       "                     URLs, or Authorization: Bearer) and /control is never\n"
	       "                     served on that port. The transcript misses the agent's\n"
	       "                     own traffic.\n",
	       SBX_IMAGE_SLIM, SBX_IMAGE_FULL);
	printf("  --port N           relay port on 127.0.0.1 (default: any free one)\n"
	       "  --listen WHERE     tcp (default): 127.0.0.1:PORT; unix: a 0600 socket,\n"
	       "                     runs/<run-id>/relay.sock; unix:PATH: that socket. The\n"
	       "                     agent gets SANDBOX_UNIX_SOCKET and http://localhost/...\n"
	       "                     URLs (curl --unix-socket PATH URL)\n"
	       "  --grace SECONDS    how long PID 1 waits past the deadline (default 30)\n"
	       "  --record SECONDS   GUI tasks: a screenshot every SECONDS of the agent phase\n"
	       "                     into runs/<run-id>/frames/ (default 2; at least 0.5;\n"
	       "                     0: off; at most 600 frames, 128 MiB), played by\n"
	       "                     'sandboxctl view' with the tool calls between them\n"
	       "  --runs-dir DIR     where run directories go (default ./runs)\n"
	       "  --run-id ID        run id (default: time-task-random)\n"
	       "  --seed N           seedable tasks: a fresh instance (files and oracle)\n"
	       "                     made from seed N into the run directory; recorded in\n"
	       "                     result.json (default: the committed files)\n"
	       "  --tasks-dir DIR    tasks directory (default: $SBX_TASKS_DIR or ./tasks)\n"
	       "  --keep             leave the sandbox behind (its id and how to remove it\n"
	       "                     are printed: sandboxctl gc --run-id ID)\n"
	       "  --json             print result.json as one line on stdout\n"
	       "  --quiet            agent output only into runs/<run-id>/agent.log\n\n"
	       "Exit status: 0 pass, 1 graded but not passed (or a grade error: the\n"
	       "grader, a child process, crashed or ran past its limits on the outputs),\n"
	       "2 usage, 3 engine or infrastructure error, 4 deadline passed, 5 agent\n"
	       "error (the agent exited non-zero or could not start before complete_task;\n"
	       "still graded), 6 the sandbox failed, 130 interrupted.\n");
}

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
			r->run_id, r->limits.timeout_s);
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
	static const char *const run_options[] = {
		"task-dir=", "agent=",	 "record=", "json",  "port=",
		"listen=",   "network=", "quiet",   "seed=", NULL,
	};
	cli_longopts lo = {0};
	sbx_run_opts o = SBX_RUN_OPTS_INIT;
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_run_result *res;
	_cleanup_free_ char *llm_extra = NULL, *llm_agent = NULL;
	const char *name;
	bool json = false;
	int r, handled;

	cli_longopts_add(&lo, cmd_run__common_options);
	cli_longopts_add(&lo, run_options);
	cli_longopts_add(&lo, cli_engine_options);
	cli_longopts_add(&lo, cli_llm_options);
	optind = 1;
	while ((r = cli_next_option("run", argc, argv, &lo, help, &name)) > 0) {
		long v;

		handled = cmd_run__parse_common(name, optarg, &o);
		if (handled < 0)
			return EXIT_USAGE;
		if (handled > 0)
			continue;
		if (cli_llm_is_option(name)) {
			if (cli_llm_add_option(&llm_extra, name, optarg) < 0)
				return EXIT_USAGE;
		} else if (strcmp(name, "agent") == 0) {
			if (!*optarg)
				return cli_error("--agent: empty command"), EXIT_USAGE;
			o.agent = optarg;
		} else if (strcmp(name, "json") == 0) {
			json = true;
		} else if (strcmp(name, "quiet") == 0) {
			o.quiet_agent = true;
		} else if (strcmp(name, "port") == 0) {
			v = cli_option_long(name, optarg, 1, 65535, "a port");
			if (v < 0)
				return EXIT_USAGE;
			o.port = (uint16_t)v;
		} else if (strcmp(name, "listen") == 0) {
			o.listen = optarg;
		} else if (strcmp(name, "allow-no-seccomp") == 0) {
			cli_allow_no_seccomp = true;
		}
	}
	if (r < 0)
		return r == CLI_OPT_HELP ? EXIT_PASS : EXIT_USAGE;
	if (cli_no_arguments("run", argc, argv) < 0)
		return EXIT_USAGE;
	if (cli_llm_agent(o.agent, llm_extra, &llm_agent) < 0)
		return EXIT_USAGE;
	if (llm_agent)
		o.agent = llm_agent;
	if (!o.task)
		return cli_error("run: --task NAME is required (see 'sandboxctl tasks')"),
		       EXIT_USAGE;
	/* A runtime the engine lacks is refused before anything is made: the
	 * engine would refuse the create anyway, but as an infra_error a sweep
	 * retries. */
	if (o.runtime && *o.runtime &&
	    cli_check_engines("run", &(cli_engine_arg){.url = (char *)o.engine}, 1, NULL, o.runtime,
			      NULL, NULL, NULL) < 0)
		return EXIT_ENGINE;
	if (json)
		o.quiet_agent = true; /* stdout carries exactly one line */
	o.grade = cmd_run__grade;
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
