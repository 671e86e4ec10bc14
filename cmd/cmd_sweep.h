/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the files of `sandboxctl sweep` share: cmd_sweep.c (the sweep),
 * cmd_sweep_options.c (its options), cmd_sweep_show.c (show, compare).
 */

#include <stdbool.h>

#include "cli.h"
#include "engines.h"
#include "sbx/sweep.h"

#define CMD_SWEEP_DEFAULT_STOP_GRACE 10

/* What the options said. */
typedef struct cmd_sweep_args {
	sbx_sweep_plan *plan; /* what to run (a new plan's); the caller allocates it */
	cli_engine_arg engines[CLI_MAX_ENGINES];
	size_t n_engines;
	const char *resume, *task_file, *out;
	bool json, quiet, all_tasks;
	bool plan_given;    /* an option of the plan: --resume takes sweep.json's, never flags */
	bool retries_given; /* --retries: how to run it, so --resume may change it */
	long jobs;	    /* 0: from the engine */
	long reuse;	    /* episodes per job's sandbox, reset in place between (1: single use) */
	long stop_grace;
	double require_pass; /* < 0: not asked */
} cmd_sweep_args;

extern cmd_sweep_args arg_sweep;
/* The options and the whole of --help (cmd_sweep_options.c). */
extern const cli_option cmd_sweep__options[];

/*
 * Prints the summary of the sweep in dir (JSON, or the table under a line
 * naming the sweep); write: also summary.json. *pass_rate (may be NULL): the
 * overall pass rate. -1 after printing why.
 */
int cmd_sweep__print_summary(const sbx_sweep_plan *p, const char *dir, bool json, bool write,
			     double *pass_rate);

/* One line for what loading results.jsonl skipped: where the first was, and why. */
void cmd_sweep__warn_dropped(const sbx_sweep_results *res, const char *dir, const char *what);

int cmd_sweep__show(int argc, char **argv);
int cmd_sweep__compare(int argc, char **argv);
