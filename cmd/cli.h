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

/* A command: returns an exit code; argv[0] is the command name. */
typedef int cli_command_fn(int argc, char **argv);

typedef struct cli_command {
	const char *name;
	cli_command_fn *fn;
	const char *summary;
} cli_command;

cli_command_fn cmd_build, cmd_run, cmd_sweep, cmd_serve, cmd_mcp, cmd_grade, cmd_tasks, cmd_doctor,
	cmd_ps, cmd_gc, cmd_version, cmd_view, cmd_report;

/*
 * tasks import (cmd_tasks_import.c): a reference task folder into out, its id
 * id (NULL: out's name); returns an exit code.
 */
int cmd_tasks__import(const char *path, const char *out, const char *id, unsigned flags);

/*
 * tasks new (cmd_tasks_new.c): a task scaffolded at name (a path when it has a
 * '/', else in tasks_dir) whose files are in format (csv, ods, xlsx; NULL:
 * csv); *stop set by a signal ends its generator; returns an exit code.
 */
int cmd_tasks__new(const char *name, const char *tasks_dir, const char *format,
		   const volatile sig_atomic_t *stop);

/* tasks (cmd_tasks.c): loads a task whose files are not made yet (tasks new, generate). */
struct sbx_task;
int cmd_tasks__load_unchecked(const char *name, struct sbx_task **out, sbx_error *err);

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

/*
 * The options of a command with many, told apart by long name (see
 * cli_next_option): in opts, each answers CLI_OPT_LONG, --help 'h'.
 */
#define CLI_OPT_LONG	 0x100
#define CLI_MAX_LONGOPTS 64

typedef struct cli_longopts {
	struct option opts[CLI_MAX_LONGOPTS + 2]; /* the names, --help, {0} */
	char names[CLI_MAX_LONGOPTS][32];
	size_t n;
} cli_longopts;

/*
 * Appends names (ended by NULL) to l, which starts zeroed: "name" is a flag,
 * "name=" takes a value. So lists two commands share are written once.
 */
void cli_longopts_add(cli_longopts *l, const char *const *names);

/* cli_next_option's answer after --help: help() was called, exit EXIT_PASS. */
#define CLI_OPT_HELP (-3)

/*
 * The next option of a loop over l (set optind = 1 before the first call): 1
 * with *name its long name and optarg its value, 0 at the end of the options
 * (optind at the first argument), CLI_OPT_HELP after --help or -h (help()
 * called), CLI_OPT_ERROR after a usage error (printed). Options end at the
 * first argument.
 */
int cli_next_option(const char *cmd, int argc, char **argv, const cli_longopts *l,
		    void (*help)(void), const char **name);

/* True when name is one of names (ended by NULL; a trailing '=' there is ignored). */
bool cli_name_in(const char *name, const char *const *names);

/* A decimal integer in [min, max] (min >= 0), the whole string; -1 when it is not one. */
long cli_parse_long(const char *s, long min, long max);

/*
 * The value of option --name as a decimal integer in [min, max]; else -1 with
 * "--name: 'text' is not what" printed (what NULL: "a number min..max").
 */
long cli_option_long(const char *name, const char *text, long min, long max, const char *what);

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

/* The model agent's flags (cmd/llm_options.c), for cli_longopts_add: "model=", ... */
extern const char *const cli_llm_options[];
/* True for --model, --base-url, ... */
bool cli_llm_is_option(const char *name);
/* Appends " --NAME VALUE" to *extra (malloc'd); -1 with a message on a bad value. */
int cli_llm_add_option(char **extra, const char *name, const char *value);
/* *out = agent + extra when extra is set (agent must be "llm ..."), else NULL; -1 on misuse. */
int cli_llm_agent(const char *agent, const char *extra, char **out);
