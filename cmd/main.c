/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sbx-config.h"
#include "sbx/run.h"

bool arg_verbose;

static const cli_command commands[] = {
	{"build", cmd_build, "build the sandbox image through the Docker Engine API"},
	{"run", cmd_run, "run one episode: sandbox, agent, grade, cleanup"},
	{"sweep", cmd_sweep, "run many episodes in parallel, resumable, summarised"},
	{"serve", cmd_serve, "an episode service for RL loops: HTTP API, warm pool, /metrics"},
	{"mcp", cmd_mcp, "serve a task's sandbox as an MCP stdio server"},
	{"grade", cmd_grade, "grade saved outputs against an oracle"},
	{"tasks", cmd_tasks, "list, show or validate tasks"},
	{"doctor", cmd_doctor, "check the Docker engine and the sandbox image"},
	{"ps", cmd_ps, "list sandboxes created by sandboxctl"},
	{"gc", cmd_gc, "remove orphaned or expired sandboxes"},
	{"view", cmd_view, "see runs and sweeps in a browser (loopback, live)"},
	{"report", cmd_report, "one self-contained HTML page of a run or a sweep"},
	{"version", cmd_version, "print the version"},
	{"help", NULL, "this text, or a command's: 'sandboxctl help run'"},
};

static void log_to_stderr(int level, const char *msg, void *payload)
{
	static const char *names[] = {[SBX_LOG_ERROR] = "error",
				      [SBX_LOG_WARNING] = "warning",
				      [SBX_LOG_INFO] = "info",
				      [SBX_LOG_DEBUG] = "debug"};

	fprintf(stderr, "sandboxctl: %s: %s\n", level < 8 && names[level] ? names[level] : "log",
		msg);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: sandboxctl [--verbose] <command> [options]\n\n"
		   "Runs AI agents on tasks inside disposable, locked-down Docker containers\n"
		   "and scores what they produce.\n\nCommands:\n");
	for (size_t i = 0; i < SBX_ELEMENTSOF(commands); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\nRun 'sandboxctl <command> --help' for a command's options.\n\n"
		"Environment:\n"
		"  DOCKER_HOST        unix:///var/run/docker.sock (default) or tcp://HOST:PORT\n"
		"  DOCKER_CERT_PATH   directory with ca.pem, cert.pem, key.pem for tcp:// TLS\n"
		"  DOCKER_TLS_VERIFY  non-empty to verify the engine's certificate\n\n"
		"Global option, anywhere on the line: --verbose (-v) logs every step to stderr.\n\n"
		"Exit codes:\n"
		"  0 success or pass   1 graded but not passed   2 usage or bad input\n"
		"  3 engine or infrastructure error   4 deadline passed   5 agent error\n"
		"  6 the sandbox failed   130 interrupted\n");
}

static const cli_command *find_command(const char *name)
{
	for (size_t c = 0; c < SBX_ELEMENTSOF(commands); c++)
		if (strcmp(name, commands[c].name) == 0)
			return &commands[c];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[SBX_ELEMENTSOF(commands)];
	const char *guess;

	for (size_t c = 0; c < SBX_ELEMENTSOF(commands); c++)
		names[c] = commands[c].name;
	guess = sbx_suggest(name, names, SBX_ELEMENTSOF(names));
	if (guess)
		cli_error("unknown command '%s'; did you mean '%s'? (see 'sandboxctl --help')",
			  name, guess);
	else
		cli_error("unknown command '%s' (see 'sandboxctl --help')", name);
	return EXIT_USAGE;
}

/* 'sandboxctl help [CMD]': the same text as --help. */
static int cmd_help(int argc, char **argv)
{
	const cli_command *cmd;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return EXIT_PASS;
	}
	cmd = find_command(argv[1]);
	if (!cmd || !cmd->fn)
		return unknown_command(argv[1]);
	return cmd->fn(2, (char *[]){argv[1], (char *)"--help", NULL});
}

/*
 * --verbose is global but users put it anywhere ('sandboxctl run ... -v'):
 * take it out of the command's arguments (up to a "--") before they are parsed.
 */
static int take_verbose(int argc, char **argv)
{
	int out = 1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[out++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0)
			arg_verbose = true;
		else
			argv[out++] = argv[i];
	}
	argv[out] = NULL;
	return out;
}

int main(int argc, char **argv)
{
	const cli_command *cmd;
	int i = 1;

	/* The grading child of run, mcp, sweep and serve (cmd_run__grader: sandboxctl itself when
	 * sandbox-grader is missing). */
	if (argc > 1 && strcmp(argv[1], "__grade") == 0)
		return sbx_run_grader_main(argc - 1, argv + 1);
	argc = take_verbose(argc, argv);
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return EXIT_PASS;
		} else if (strcmp(argv[i], "--version") == 0) {
			return cmd_version(1, (char *[]){"version", NULL});
		} else {
			static const char *const global[] = {"--verbose", "--help", "--version"};
			const char *near = sbx_suggest(argv[i], global, SBX_ELEMENTSOF(global));

			if (near)
				cli_error(
					"unknown option '%s'; did you mean '%s'? (see 'sandboxctl "
					"--help')",
					argv[i], near);
			else
				cli_error("unknown option '%s' (see 'sandboxctl --help')", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	sbx_log_set(log_to_stderr, NULL, arg_verbose ? SBX_LOG_DEBUG : SBX_LOG_WARNING);
	cmd = find_command(argv[i]);
	if (!cmd)
		return unknown_command(argv[i]);
	if (!cmd->fn)
		return cmd_help(argc - i, argv + i);
	return cmd->fn(argc - i, argv + i);
}
