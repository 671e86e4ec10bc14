/* SPDX-License-Identifier: MIT */
#pragma once

/* What cmd_run.c shares with `mcp` and `sweep`: the options and hooks of a run. */

#include <signal.h>

#include "sbx/run.h"

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

/* The options `run` and `mcp` both take, for cli_longopts_add. */
extern const char *const cmd_run__common_options[];

/*
 * Options both `run` and `mcp` take (cmd_run__common_options, listed once so
 * the two commands cannot drift apart) and the limits `sweep` passes on, by
 * long name. Returns 1 when handled, 0 when not, -1 on a bad value (printed).
 */
int cmd_run__parse_common(const char *name, const char *arg, sbx_run_opts *o);

/* Stop signals set cmd_run__interrupted (for sbx_run_opts.interrupted). */
void cmd_run__install_signals(void);
extern volatile sig_atomic_t cmd_run__interrupted;
