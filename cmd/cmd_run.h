/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the commands that run episodes share (cmd/run_options.c): the
 * options of an episode, one row each for run, mcp and sweep, the grader's path
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
int cmd_run__parse_runtime(const char *text);
int cmd_run__parse_seccomp(const char *text);
int cmd_run__parse_network(const char *text);
int cmd_run__parse_grace(const char *text);
int cmd_run__parse_record(const char *text);
int cmd_run__parse_seed(const char *text);

/*
 * The rows, for the option tables of run, mcp and sweep (as libgit2's
 * CLI_COMMON_OPT rows): name, what it sets, usage and short usage (NULL:
 * the usage) here, once; each command adds what the option means to it
 * (.help = ...) and anything else it needs (.seen = ...).
 */
#define CMD_RUN_ROW(name, sets, usage_, short_, ...)                                               \
	{                                                                                          \
		name, sets, .usage = usage_, .short_usage = short_, __VA_ARGS__                    \
	}
/* clang-format off */
#define CMD_RUN_OPT_TASK(...) CMD_RUN_ROW("task", .value = &arg_run.task, "--task NAME", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_IMAGE(...) CMD_RUN_ROW("image", .value = &arg_run.image, "--image REF", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_TIMEOUT(...) CMD_RUN_ROW("timeout", .parse = cmd_run__parse_timeout, "--timeout SECONDS", "--timeout S", __VA_ARGS__)
#define CMD_RUN_OPT_MEMORY(...) CMD_RUN_ROW("memory", .parse = cmd_run__parse_memory, "--memory SIZE", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_CPUS(...) CMD_RUN_ROW("cpus", .parse = cmd_run__parse_cpus, "--cpus N", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_PIDS(...) CMD_RUN_ROW("pids", .parse = cmd_run__parse_pids, "--pids N", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_RUNTIME(...) CMD_RUN_ROW("runtime", .parse = cmd_run__parse_runtime, "--runtime NAME", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_SECCOMP(...) CMD_RUN_ROW("seccomp", .parse = cmd_run__parse_seccomp, "--seccomp sandbox|default", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_NETWORK(...) CMD_RUN_ROW("network", .parse = cmd_run__parse_network, "--network MODE", "--network none|published", __VA_ARGS__)
#define CMD_RUN_OPT_GRACE(...) CMD_RUN_ROW("grace", .parse = cmd_run__parse_grace, "--grace SECONDS", "--grace S", __VA_ARGS__)
#define CMD_RUN_OPT_RUNS_DIR(...) CMD_RUN_ROW("runs-dir", .value = &arg_run.runs_dir, "--runs-dir DIR", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_RUN_ID(...) CMD_RUN_ROW("run-id", .value = &arg_run.run_id, "--run-id ID", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_TASKS_DIR(...) CMD_RUN_ROW("tasks-dir", .value = &arg_run.tasks_dir, "--tasks-dir DIR", NULL, __VA_ARGS__)
#define CMD_RUN_OPT_KEEP(...) CMD_RUN_ROW("keep", .flag = &arg_run.keep, NULL, NULL, __VA_ARGS__)
#define CMD_RUN_OPT_TEST_LABEL(...) CMD_RUN_ROW("test-label", .flag = &arg_run.test, NULL, NULL, __VA_ARGS__)
/* clang-format on */

/*
 * The program every episode is graded by, in a child process, so a grader
 * crash or runaway ends that episode as a grade error, never the command
 * (run, mcp, sweep, serve): sandbox-grader next to sandboxctl (the build's
 * cmd/, or libexec/sandboxctl/ when installed), else sandboxctl itself
 * ("/proc/self/exe", its internal `__grade` verb in main.c). Never from PATH:
 * it must be this build's.
 */
const char *cmd_run__grader(void);

/* Stop signals set cmd_run__interrupted (for sbx_run_opts.interrupted). */
void cmd_run__install_signals(void);
extern volatile sig_atomic_t cmd_run__interrupted;
