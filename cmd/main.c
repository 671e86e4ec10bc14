/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sbx-config.h"

bool arg_verbose;

static const cli_command commands[] = {
	{"build", cmd_build, "build the sandbox image through the Docker Engine API"},
	{"run", cmd_run, "run one episode: sandbox, agent, grade, cleanup"},
	{"sweep", cmd_sweep, "run many episodes in parallel, resumable, summarised"},
	{"mcp", cmd_mcp, "serve a task's sandbox as an MCP stdio server"},
	{"grade", cmd_grade, "grade saved outputs against an oracle"},
	{"tasks", cmd_tasks, "list, show or validate tasks"},
	{"doctor", cmd_doctor, "check the Docker engine and the sandbox image"},
	{"ps", cmd_ps, "list sandboxes created by sandboxctl"},
	{"gc", cmd_gc, "remove orphaned or expired sandboxes"},
	{"version", cmd_version, "print the version"},
};

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sandboxctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	}
	return false;
}

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
	fprintf(f, "\nRun 'sandboxctl <command> --help' for a command's options.\n\n"
		   "Environment:\n"
		   "  DOCKER_HOST        unix:///var/run/docker.sock (default) or tcp://HOST:PORT\n"
		   "  DOCKER_CERT_PATH   directory with ca.pem, cert.pem, key.pem for tcp:// TLS\n"
		   "  DOCKER_TLS_VERIFY  non-empty to verify the engine's certificate\n\n"
		   "Exit codes:\n"
		   "  0 success or pass   1 graded but not passed   2 usage or bad input\n"
		   "  3 engine or infrastructure error   4 deadline passed   130 interrupted (run, "
		   "sweep)\n");
}

int main(int argc, char **argv)
{
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return EXIT_PASS;
		} else if (strcmp(argv[i], "--version") == 0) {
			return cmd_version(1, (char *[]){"version", NULL});
		} else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
			arg_verbose = true;
		} else {
			cli_error("unknown option '%s' (see 'sandboxctl --help')", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	sbx_log_set(log_to_stderr, NULL, arg_verbose ? SBX_LOG_DEBUG : SBX_LOG_WARNING);
	for (size_t c = 0; c < SBX_ELEMENTSOF(commands); c++)
		if (strcmp(argv[i], commands[c].name) == 0)
			return commands[c].fn(argc - i, argv + i);
	cli_error("unknown command '%s' (see 'sandboxctl --help')", argv[i]);
	return EXIT_USAGE;
}
