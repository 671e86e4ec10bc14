/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by the cmd_<verb>.c files: exit codes, the command table, output helpers. */

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>

#include "sbx/util.h"

/* Exit codes, as documented in `sandboxctl --help` and DESIGN.md. */
enum {
	EXIT_PASS = 0,		/* success, or graded and passed */
	EXIT_NOT_PASSED = 1,	/* graded but not passed */
	EXIT_USAGE = 2,		/* usage or configuration error, bad input */
	EXIT_ENGINE = 3,	/* engine or infrastructure error */
	EXIT_DEADLINE = 4,	/* deadline passed */
	EXIT_INTERRUPTED = 130, /* run: SIGINT/SIGTERM, sandbox removed */
};

typedef struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} cli_command;

/* Each returns an exit code; argv[0] is the command name. */
int cmd_build(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_grade(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* tasks import (cmd_tasks_import.c): a reference task folder into out; returns an exit code. */
int cmd_tasks__import(const char *path, const char *out, unsigned flags);

/* Prints "sandboxctl: <msg>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* cli_getopt's answer when it has printed a usage error: exit EXIT_USAGE. */
#define CLI_OPT_ERROR (-2)

/*
 * getopt_long for command cmd, with one wording for every command's usage
 * errors: an unknown option (with "did you mean" when one is close) or a
 * missing value prints one line and returns CLI_OPT_ERROR. Returns -1 at the
 * end of the options, like getopt_long. Set optind = 1 before the first call.
 */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts, int *idx);

/*
 * One option of a command for cli_parse_options. Without a value (value and
 * parse both NULL) it sets *flag, and *also when that is set too; with one,
 * *value = the text, or parse(text), which prints why and returns < 0 when the
 * text is bad. short_name ('o' for -o) is optional.
 */
typedef struct cli_option {
	const char *name;
	char short_name;
	bool *flag, *also;
	const char **value;
	int (*parse)(const char *text);
} cli_option;

/* The most options cli_parse_options takes (--help not counted). */
#define CLI_MAX_OPTIONS 32

/*
 * The whole option loop of a command: cli_getopt over opts (ended by {0}) and
 * --help/-h, which calls help(). Returns 1 to go on (optind at the first
 * argument), else minus the exit code: 0 after help, -EXIT_USAGE after a
 * usage error (printed). So: `if (r <= 0) return -r;`.
 */
int cli_parse_options(const char *cmd, int argc, char **argv, const cli_option *opts,
		      void (*help)(void));
/* The same for a command that takes options only: an argument is a usage error. */
int cli_parse_options_only(const char *cmd, int argc, char **argv, const cli_option *opts,
			   void (*help)(void));

/* A decimal integer in [min, max] (min >= 0), the whole string; -1 when it is not one. */
long cli_parse_long(const char *s, long min, long max);

/* 0 when argv[optind..] is empty, else one line and CLI_OPT_ERROR. */
int cli_no_arguments(const char *cmd, int argc, char **argv);

/* True when --help or -h is among argv[1..]. */
bool cli_wants_help(int argc, char **argv);

/* handler for SIGINT, SIGTERM, SIGHUP (no SA_RESTART: calls see EINTR); SIGPIPE ignored. */
void cli_on_stop_signals(void (*handler)(int sig));
/*
 * For a handler of a two-step stop (drain, then hurry): counts the signal in
 * *count (to 2 at most) and writes first on the first one, second after.
 * Async-signal-safe.
 */
void cli_count_stop_signal(volatile sig_atomic_t *count, const char *first, const char *second);

/* Global flags parsed by main before the command runs. */
extern bool arg_verbose;

/* The model agent's flags (cmd/llm_options.c): true for --model, --base-url, ... */
bool cli_llm_is_option(const char *name);
/* Appends " --NAME VALUE" to *extra (malloc'd); -1 with a message on a bad value. */
int cli_llm_add_option(char **extra, const char *name, const char *value);
/* *out = agent + extra when extra is set (agent must be "llm ..."), else NULL; -1 on misuse. */
int cli_llm_agent(const char *agent, const char *extra, char **out);
