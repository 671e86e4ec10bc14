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

/* tasks (cmd_tasks.c): loads task name (a name in --tasks-dir, or a path) into *out. */
int cmd_tasks__load(const char *name, struct sbx_task **out, sbx_error *err);
/* tasks (cmd_tasks.c): the tasks directory, --tasks-dir or the default (malloc'd; NULL: no memory).
 */
char *cmd_tasks__dir(void);
/* tasks show (cmd_tasks_show.c): task name printed, as JSON when json; returns an exit code. */
int cmd_tasks__show(const char *name, bool json);
/* tasks validate (cmd_tasks_validate.c): the n tasks names (none: every task); an exit code. */
int cmd_tasks__validate(int n, char **names);

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
 * One row of a command's option table (libgit2's cli_opt_spec as the
 * model): how the option parses and how --help shows it. A table ends with
 * {0}.
 *
 * Parsing: without a value (value, parse and pass all NULL) the option sets
 * *flag, and *also when that is set too. With one: *value = the text; or
 * parse(text), which prints why and returns < 0 when the text is bad; or
 * pass, for options handed on to another program: " --name text" appended
 * to *pass (malloc'd), the text one word. *seen (optional) becomes true
 * whenever the option is given. short_name ('o' for -o) is optional.
 *
 * --help (cli_print_options): usage is the left column ("--task NAME";
 * NULL: "--name"), help the right one, lines separated by '\n', at column
 * 21 (a row's column, when set, moves it for that row and those after);
 * indent moves both right (an option that belongs to the one above). A row
 * without help is not listed on its own: another row's text names it.
 *
 * Rows that are not options: {.text = "Usage: ..."} prints its text as it
 * is (what comes before and after the options); {.heading = "What to
 * run:"} prints a blank line and the heading; {.usage = ..., .help = ...}
 * without a name is text in the two columns; {.include = table} stands for table's rows (a list
 * several commands share) and, with .group (the separator: ", " or " "),
 * lists their short_usage (else usage) together, wrapped, with help under
 * them.
 */
typedef struct cli_option {
	const char *name;
	char short_name;
	bool *flag, *also, *seen;
	const char **value;
	int (*parse)(const char *text);
	char **pass;
	const char *usage, *short_usage, *help, *heading, *text;
	unsigned indent, column;
	const struct cli_option *include;
	const char *group;
} cli_option;

/* The most options a command takes, counting included tables (--help not counted). */
#define CLI_MAX_OPTIONS 64

/* cli_parse's flags. */
enum {
	CLI_NO_ARGUMENTS = 1 << 0, /* an argument is a usage error */
	CLI_IN_ORDER = 1 << 1,	   /* options end at the first argument (no permuting) */
};

/*
 * The whole option loop of a command: cli_getopt over opts and --help/-h,
 * which calls help(), or with help NULL prints opts (cli_print_options): the
 * command's whole --help is its table. Returns 1 to go on (optind at the first argument),
 * else minus the exit code: 0 after help, -EXIT_USAGE after a usage error
 * (printed). So: `if (r <= 0) return -r;`.
 */
int cli_parse(const char *cmd, int argc, char **argv, const cli_option *opts, void (*help)(void),
	      unsigned flags);
/* cli_parse without flags; and with CLI_NO_ARGUMENTS. */
int cli_parse_options(const char *cmd, int argc, char **argv, const cli_option *opts,
		      void (*help)(void));
int cli_parse_options_only(const char *cmd, int argc, char **argv, const cli_option *opts,
			   void (*help)(void));

/* Prints opts' rows as --help lists them (see cli_option), on stdout. */
void cli_print_options(const cli_option *opts);

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

/*
 * The model agent's flags (cmd/llm_options.c): rows for a table, each
 * passed on into cli_llm_extra (" --model X --base-url U ...").
 */
extern const cli_option cli_llm_options[];
extern char *cli_llm_extra;
/* *out = agent + extra when extra is set (agent must be "llm ..."), else NULL; -1 on misuse. */
int cli_llm_agent(const char *agent, const char *extra, char **out);
