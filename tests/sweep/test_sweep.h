/* SPDX-License-Identifier: MIT */
/* What the test-sweep files share: their includes, a synthetic plan, and each file's cases. */
#pragma once

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "test_files.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/sweep.h"

#define EPS 1e-9

/* A plan of n_tasks tasks "taskI" by n_agents agents "agent I", 2 retries, pass@1 (free it). */
sbx_sweep_plan *make_plan(size_t n_tasks, size_t n_agents, unsigned epochs);

/* Each file's cases, added to the suite after the scheduler's in this order. */
void sweep_stats_cases(Suite *s);   /* test_sweep_stats.c */
void sweep_results_cases(Suite *s); /* test_sweep_results.c */
