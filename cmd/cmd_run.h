/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the commands that run episodes share (cmd/run_options.c): the
 * options of an episode, one row each for run, mcp and sweep, the grade hook
 * and stop signals (also serve's).
 */

#include <signal.h>

#include "cli.h"
#include "sbx/run.h"

/*
 * The episode options' values: each row below parses into it, with one
 * wording for every command's errors. Starts as SBX_RUN_OPTS_INIT.
 */
extern sbx_run_opts arg_run;

int cmd_run__parse_timeout(const char *text);
int cmd_run__parse_memory(const char *text);
int cmd_run__parse_cpus(const char *text);
int cmd_run__parse_pids(const char *text);
int cmd_run__parse_seccomp(const char *text);
int cmd_run__parse_network(const char *text);
int cmd_run__parse_grace(const char *text);
int cmd_run__parse_record(const char *text);
int cmd_run__parse_seed(const char *text);

/*
 * The rows, for the option tables of run, mcp and sweep (as libgit2's
 * CLI_COMMON_OPT rows): name, value and parser here, once; each command adds
 * what the option means to it (.help = ...) and anything else it needs
 * (.seen = ...).
 */
#define CMD_RUN_OPT_TASK(...)                                                                      \
	{                                                                                          \
		"task", .value = &arg_run.task, .usage = "--task NAME", __VA_ARGS__                \
	}
#define CMD_RUN_OPT_IMAGE(...)                                                                     \
	{                                                                                          \
		"image", .value = &arg_run.image, .usage = "--image REF", __VA_ARGS__              \
	}
#define CMD_RUN_OPT_TIMEOUT(...)                                                                   \
	{                                                                                          \
		"timeout", .parse = cmd_run__parse_timeout, .usage = "--timeout SECONDS",          \
			   .short_usage = "--timeout S", __VA_ARGS__                               \
	}
#define CMD_RUN_OPT_MEMORY(...)                                                                    \
	{                                                                                          \
		"memory", .parse = cmd_run__parse_memory, .usage = "--memory SIZE", __VA_ARGS__    \
	}
#define CMD_RUN_OPT_CPUS(...)                                                                      \
	{                                                                                          \
		"cpus", .parse = cmd_run__parse_cpus, .usage = "--cpus N", __VA_ARGS__             \
	}
#define CMD_RUN_OPT_PIDS(...)                                                                      \
	{                                                                                          \
		"pids", .parse = cmd_run__parse_pids, .usage = "--pids N", __VA_ARGS__             \
	}
#define CMD_RUN_OPT_RUNTIME(...)                                                                   \
	{                                                                                          \
		"runtime", .value = &arg_run.runtime, .usage = "--runtime NAME", __VA_ARGS__       \
	}
#define CMD_RUN_OPT_SECCOMP(...)                                                                   \
	{                                                                                          \
		"seccomp", .parse = cmd_run__parse_seccomp, .usage = "--seccomp sandbox|default",  \
			   __VA_ARGS__                                                             \
	}
#define CMD_RUN_OPT_NETWORK(...)                                                                   \
	{                                                                                          \
		"network", .parse = cmd_run__parse_network, .usage = "--network MODE",             \
			   .short_usage = "--network none|published", __VA_ARGS__                  \
	}
#define CMD_RUN_OPT_GRACE(...)                                                                     \
	{                                                                                          \
		"grace", .parse = cmd_run__parse_grace, .usage = "--grace SECONDS",                \
			 .short_usage = "--grace S", __VA_ARGS__                                   \
	}
#define CMD_RUN_OPT_RUNS_DIR(...)                                                                  \
	{                                                                                          \
		"runs-dir", .value = &arg_run.runs_dir, .usage = "--runs-dir DIR", __VA_ARGS__     \
	}
#define CMD_RUN_OPT_RUN_ID(...)                                                                    \
	{                                                                                          \
		"run-id", .value = &arg_run.run_id, .usage = "--run-id ID", __VA_ARGS__            \
	}
#define CMD_RUN_OPT_TASKS_DIR(...)                                                                 \
	{                                                                                          \
		"tasks-dir", .value = &arg_run.tasks_dir, .usage = "--tasks-dir DIR", __VA_ARGS__  \
	}
#define CMD_RUN_OPT_KEEP(...)                                                                      \
	{                                                                                          \
		"keep", .flag = &arg_run.keep, __VA_ARGS__                                         \
	}
#define CMD_RUN_OPT_TEST_LABEL(...)                                                                \
	{                                                                                          \
		"test-label", .flag = &arg_run.test, __VA_ARGS__                                   \
	}

/*
 * The program every episode is graded by, in a child process, so a grader
 * crash or runaway ends that episode as a grade error, never the command
 * (run, mcp, sweep, serve): sandbox-grader next to sandboxctl (the build's
 * cmd/, or libexec/sandboxctl/ when installed), else sandboxctl itself
 * ("/proc/self/exe", its internal `__grade` verb in main.c). Never from PATH:
 * it must be this build's.
 */
const char *cmd_run__grader(void);

/* The grade hook of sbx_run_opts: grades outputs_dir against the task, in process. */
int cmd_run__grade(const sbx_task *task, const char *outputs_dir, sbx_run_grade *out,
		   void *userdata, sbx_error *err);

/* Stop signals set cmd_run__interrupted (for sbx_run_opts.interrupted). */
void cmd_run__install_signals(void);
extern volatile sig_atomic_t cmd_run__interrupted;
