/* SPDX-License-Identifier: MIT */
/*
 * lib/sweep without an engine: the statistics against hand-computed values,
 * the plan's order and sweep.json, results.jsonl (torn last line, append),
 * resume's view of what is done, the summary and compare on synthetic results.
 *
 * This file: the runner, the shared plan and the scheduler on an engine that
 * is not there; the rest is in test_sweep_{stats,results}.c.
 */
#include "test_sweep.h"

sbx_sweep_plan *make_plan(size_t n_tasks, size_t n_agents, unsigned epochs)
{
	sbx_sweep_plan *p = calloc(1, sizeof(*p));

	p->n_tasks = n_tasks;
	p->tasks = calloc(n_tasks, sizeof(char *));
	p->seedable = calloc(n_tasks, sizeof(bool));
	for (size_t i = 0; i < n_tasks; i++)
		ck_assert_int_ge(asprintf(&p->tasks[i], "task%zu", i), 0);
	p->n_agents = n_agents;
	p->agents = calloc(n_agents, sizeof(char *));
	for (size_t i = 0; i < n_agents; i++)
		ck_assert_int_ge(asprintf(&p->agents[i], "agent %zu", i), 0);
	p->epochs = epochs;
	p->retries = 2;
	p->pass_at[p->n_pass_at++] = 1;
	return p;
}

/* ---- the scheduler, on an engine that is not there ---- */

static sbx_sweep_plan *real_plan(unsigned epochs, unsigned retries)
{
	sbx_sweep_plan *p = make_plan(1, 1, epochs);
	const char *src = getenv("SBX_SOURCE_ROOT");

	free(p->tasks[0]);
	p->tasks[0] = strdup("banking_reserve");
	free(p->agents[0]);
	p->agents[0] = strdup("oracle");
	ck_assert_int_ge(asprintf(&p->tasks_dir, "%s/tasks", src ? src : "."), 0);
	p->retries = retries;
	return p;
}

/*
 * The scheduler case's fixture: a sweep in the scratch directory on an engine
 * that is not there (2 jobs, 1 ms backoff), its results and its outcome.
 */
static struct {
	sbx_sweep_opts o;
	sbx_sweep_engine e;
	char sock[128];
	sbx_sweep_results *r;
	sbx_sweep_outcome out;
} dead;

static void dead_engine_setup(void)
{
	sbx_test_scratch_setup();
	dead.o = (sbx_sweep_opts)SBX_SWEEP_OPTS_INIT;
	snprintf(dead.sock, sizeof(dead.sock), "unix://%s/no-engine.sock", sbx_test_scratch);
	dead.e = (sbx_sweep_engine){.url = dead.sock, .jobs = 2};
	dead.o.dir = sbx_test_scratch;
	dead.o.engines = &dead.e;
	dead.o.n_engines = 1;
	dead.o.backoff_ms = 1;
}

static void dead_engine_teardown(void)
{
	sbx_sweep_results_free(dead.r);
	dead.r = NULL;
	sbx_test_scratch_teardown();
}

/* Executes p under dead.o with a fresh runs/ and results file. */
static void execute(const sbx_sweep_plan *p)
{
	sbx_error err = SBX_ERROR_INIT;
	char runs[128];

	snprintf(runs, sizeof(runs), "%s/runs", sbx_test_scratch);
	ck_assert_int_eq(mkdir(runs, 0755), 0);
	ck_assert_int_eq(sbx_sweep_results_open(sbx_test_scratch, NULL, &dead.r, NULL, &err), 0);
	ck_assert_msg(sbx_sweep_execute(p, dead.r, &dead.o, &dead.out, &err) == 0, "%s", err.msg);
}

START_TEST(scheduler_retries_infra_errors)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = real_plan(2, 1);
	const sbx_sweep_record *recs;
	size_t n;

	execute(p);
	/* Two episodes, each tried once and retried once: four infra_error lines,
	 * kept as one record per episode that stands for two. */
	recs = sbx_sweep_results_records(dead.r, &n);
	ck_assert_uint_eq(n, 2);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(recs[i].lines, 2);
		ck_assert_int_eq(recs[i].status, SBX_RUN_INFRA_ERROR);
		ck_assert_ptr_nonnull(recs[i].error);
		ck_assert_str_eq(recs[i].engine, dead.sock);
	}
	ck_assert_int_eq(dead.out.stop, SBX_SWEEP_UNFINISHED);
	ck_assert_uint_eq(dead.out.remaining, 2);
	ck_assert_uint_eq(dead.out.ran, 0);
}
END_TEST

START_TEST(scheduler_stops_on_too_many_infra_errors)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = real_plan(20, 0);
	size_t n;

	dead.e.jobs = 1;
	dead.o.infra_window = 10; /* more than 2 of the last 10: stop */
	execute(p);
	ck_assert_int_eq(dead.out.stop, SBX_SWEEP_INFRA_TOO_MANY);
	ck_assert_ptr_nonnull(strstr(dead.out.reason, "3 infrastructure errors"));
	sbx_sweep_results_records(dead.r, &n);
	ck_assert_uint_eq(n, 3); /* it stopped rather than burning the other 17 */
	ck_assert_uint_eq(dead.out.remaining, 20);
}
END_TEST

START_TEST(scheduler_stop_before_start)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = real_plan(3, 0);
	static volatile sig_atomic_t sigs = 2;
	size_t n;

	dead.o.stop = &sigs;
	execute(p);
	ck_assert_int_eq(dead.out.stop, SBX_SWEEP_INTERRUPTED);
	sbx_sweep_results_records(dead.r, &n);
	ck_assert_uint_le(n, 2); /* at most what had started: nothing new after the signal */
	ck_assert_uint_eq(dead.out.remaining, 3);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "scheduler", dead_engine_setup, dead_engine_teardown, 60,
		      scheduler_retries_infra_errors, scheduler_stops_on_too_many_infra_errors,
		      scheduler_stop_before_start);

	sweep_stats_cases(s);
	sweep_results_cases(s);
}

SBX_TEST_MAIN("sweep", add_cases)
