/* SPDX-License-Identifier: MIT */
/*
 * lib/sweep without an engine: the statistics against hand-computed values,
 * the plan's order and sweep.json, results.jsonl (torn last line, append),
 * resume's view of what is done, the summary and compare on synthetic results.
 */
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

/* ---- statistics ---- */

START_TEST(wilson_hand_computed)
{
	double lo, hi;

	/* 8/10 at 95%: centre (0.8 + z²/20)/(1 + z²/10), the textbook [0.4902, 0.9433]. */
	sbx_sweep_wilson(8, 10, 1.959963984540054, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0.49016247153664183, 1e-12);
	ck_assert_double_eq_tol(hi, 0.9433178485456247, 1e-12);
	sbx_sweep_wilson(2, 5, 1.959963984540054, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0.11762077423264783, 1e-12);
	ck_assert_double_eq_tol(hi, 0.769275718723987, 1e-12);
	/* The edges: never outside [0, 1], and 0/n still has a non-zero upper bound. */
	sbx_sweep_wilson(0, 4, 1.959963984540054, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0, EPS);
	ck_assert_double_eq_tol(hi, 0.4898908364545973, 1e-12);
	sbx_sweep_wilson(12, 12, 1.959963984540054, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0.7575059933447592, 1e-12);
	ck_assert_double_eq_tol(hi, 1, EPS);
	sbx_sweep_wilson(0, 0, 1.96, &lo, &hi);
	ck_assert(lo == 0 && hi == 1);
}
END_TEST

START_TEST(pass_at_k_unbiased)
{
	/* n = 5, c = 2: pass@1 = 2/5; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10;
	 * pass@3 = 1 - C(3,3)/C(5,3) = 1 - 1/10; pass@4: every 4-subset holds a pass. */
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(5, 2, 1), 0.4, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(5, 2, 2), 0.7, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(5, 2, 3), 0.9, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(5, 2, 4), 1, EPS);
	/* n = 10, c = 3, k = 5: 1 - C(7,5)/C(10,5) = 1 - 21/252. */
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(10, 3, 5), 1 - 21.0 / 252, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(10, 0, 5), 0, EPS);
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(10, 10, 1), 1, EPS);
	ck_assert(isnan(sbx_sweep_pass_at_k(3, 1, 4)));
	ck_assert(isnan(sbx_sweep_pass_at_k(3, 1, 0)));
	/* Large n does not overflow: pass@1 is still c/n. */
	ck_assert_double_eq_tol(sbx_sweep_pass_at_k(100000, 25000, 1), 0.25, 1e-9);
}
END_TEST

START_TEST(sign_test_exact)
{
	/* 0 vs 6 discordant: 2 × (1/2)^6. */
	ck_assert_double_eq_tol(sbx_sweep_sign_test(0, 6), 0.03125, 1e-12);
	/* 1 vs 9: 2 × (1 + 10) / 1024. */
	ck_assert_double_eq_tol(sbx_sweep_sign_test(1, 9), 22.0 / 1024, 1e-12);
	ck_assert_double_eq_tol(sbx_sweep_sign_test(9, 1), 22.0 / 1024, 1e-12);
	ck_assert_double_eq_tol(sbx_sweep_sign_test(5, 5), 1, EPS);
	ck_assert_double_eq_tol(sbx_sweep_sign_test(0, 0), 1, EPS);
	/* 40 vs 60: the normal approximation says ~0.057; the exact value is 0.0569. */
	ck_assert_double_eq_tol(sbx_sweep_sign_test(40, 60), 0.056887933640, 1e-9);
}
END_TEST

static int cmp_double_asc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

START_TEST(quantiles_and_bootstrap)
{
	double v[] = {4, 1, 3, 2}, lo, hi, lo2, hi2;
	double c[] = {0.5, 0.5, 0.5};
	double m[] = {0, 1, 0, 1, 1, 0, 1, 1, 0, 1};

	ck_assert_double_eq_tol(sbx_sweep_quantile(v, 4, 0.5), 2.5, EPS);
	ck_assert_double_eq_tol(sbx_sweep_quantile(v, 4, 1), 4, EPS);
	ck_assert_double_eq_tol(sbx_sweep_quantile(v, 4, 0), 1, EPS);
	ck_assert(isnan(sbx_sweep_quantile(v, 0, 0.5)));
	sbx_sweep_bootstrap_mean(c, 3, 500, 1, &lo, &hi);
	ck_assert_double_eq_tol(lo, 0.5, EPS);
	ck_assert_double_eq_tol(hi, 0.5, EPS);
	/* Same data, same seed: the same interval; it holds the mean (0.6). */
	sbx_sweep_bootstrap_mean(m, 10, 2000, 7, &lo, &hi);
	sbx_sweep_bootstrap_mean(m, 10, 2000, 7, &lo2, &hi2);
	ck_assert(lo == lo2 && hi == hi2);
	ck_assert(lo < 0.6 && hi > 0.6 && lo >= 0 && hi <= 1);
	ck_assert(lo > 0.1 && hi < 1.0);
}
END_TEST

/* Selection, not sorting, for big inputs: the same quantiles as a sort gives. */
START_TEST(quantiles_by_selection_match_sorting)
{
	static double v[5000], w[5000];
	static const double qs[] = {0, 0.01, 0.25, 0.5, 0.95, 0.999, 1};
	uint64_t x = 99;

	for (size_t n = 65; n <= 5000; n = n * 3 + 1)
		for (int dup = 0; dup < 2; dup++)
			for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
				double pos = qs[k] * (double)(n - 1), want, got;
				size_t i = (size_t)pos;

				for (size_t j = 0; j < n; j++) {
					x = x * 6364136223846793005ULL + 1442695040888963407ULL;
					v[j] = dup ? (double)((x >> 33) % 7) : (double)(x >> 11);
					w[j] = v[j];
				}
				qsort(w, n, sizeof(*w), cmp_double_asc);
				want = i + 1 < n ? w[i] + (pos - (double)i) * (w[i + 1] - w[i])
						 : w[i];
				got = sbx_sweep_quantile(v, n, qs[k]);
				ck_assert_msg(got == want, "n %zu dup %d q %g: %g, sorted gives %g",
					      n, dup, qs[k], got, want);
			}
}
END_TEST

/*
 * Above 1,000 values the interval is the bootstrap's normal limit: it must
 * agree with the bootstrap itself at the size where one hands over to the
 * other, for a skewed pass rate (10%) and for spread-out fractional scores.
 */
START_TEST(bootstrap_hands_over_to_its_normal_limit)
{
	static double v[1001];
	uint64_t x = 12345;

	for (int shape = 0; shape < 2; shape++) {
		double blo, bhi, nlo, nhi, sd = 0, mean = 0;

		for (size_t i = 0; i < 1001; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			v[i] = shape == 0 ? (double)((x >> 33) % 10 == 0)
					  : (double)(x >> 40) / 16777216.0;
		}
		sbx_sweep_bootstrap_mean(v, 1000, 2000, 7, &blo, &bhi); /* the bootstrap */
		sbx_sweep_bootstrap_mean(v, 1001, 2000, 7, &nlo, &nhi); /* its normal limit */
		for (size_t i = 0; i < 1000; i++)
			mean += v[i] / 1000;
		for (size_t i = 0; i < 1000; i++)
			sd += (v[i] - mean) * (v[i] - mean) / 1000;
		sd = sqrt(sd / 1000); /* the sd of the mean */
		ck_assert_msg(fabs(blo - nlo) < 0.2 * sd && fabs(bhi - nhi) < 0.2 * sd,
			      "shape %d: bootstrap [%g, %g], normal limit [%g, %g], sd %g", shape,
			      blo, bhi, nlo, nhi, sd);
	}
	/* All equal: an interval of width 0, as the bootstrap gives. */
	for (size_t i = 0; i < 1001; i++)
		v[i] = 1;
	{
		double lo, hi;

		sbx_sweep_bootstrap_mean(v, 1001, 2000, 7, &lo, &hi);
		ck_assert(lo == 1 && hi == 1);
	}
}
END_TEST

/* ---- the plan ---- */

static sbx_sweep_plan *make_plan(size_t n_tasks, size_t n_agents, unsigned epochs)
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

START_TEST(plan_order_is_epoch_major)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = make_plan(2, 2, 3);
	sbx_sweep_episode ep;

	p->seeded = true;
	p->seed_from = 100;
	p->seedable[1] = true;
	ck_assert_uint_eq(sbx_sweep_plan_size(p), 12);
	/* Every task × agent of epoch 0 comes before any of epoch 1. */
	for (size_t i = 0; i < 12; i++) {
		sbx_sweep_plan_episode(p, i, &ep);
		ck_assert_uint_eq(ep.epoch, i / 4);
		ck_assert_uint_eq(ep.task, (i % 4) / 2);
		ck_assert_uint_eq(ep.agent, i % 2);
		/* Seeds only for the seedable task, the same for every agent of an epoch. */
		ck_assert(ep.seeded == (ep.task == 1));
		if (ep.seeded)
			ck_assert_uint_eq(ep.seed, 100 + ep.epoch);
	}
	{
		char id[160];

		sbx_sweep_plan_episode(p, 7, &ep);
		sbx_sweep_plan_run_id(p, &ep, 2, id, sizeof(id));
		ck_assert_str_eq(id, "task1.a1.e1.t2");
		ck_assert_int_eq(sbx_sweep_plan_new_id(p, NULL), 0);
		sbx_sweep_plan_run_id(p, &ep, 2, id, sizeof(id));
		ck_assert_uint_eq(strlen(id), 8 + 1 + strlen("task1.a1.e1.t2"));
		ck_assert_str_eq(id + 9, "task1.a1.e1.t2");
		ck_assert_int_eq(sbx_sweep_plan_check(p, NULL), 0);
	}
}
END_TEST

START_TEST(plan_json_round_trip)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = make_plan(2, 1, 5), *q = NULL;
	_cleanup_free_ char *text = NULL, *text2 = NULL;
	sbx_error err = SBX_ERROR_INIT;

	p->seeded = true;
	p->seed_from = 7;
	p->seedable[0] = true;
	p->pass_at[p->n_pass_at++] = 5;
	p->n_tags = 1;
	p->tags = calloc(1, sizeof(char *));
	p->tags[0] = strdup("model=x=y");
	p->image_id = strdup("sha256:abc");
	text = sbx_sweep_plan_json(p);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(sbx_sweep_plan_parse(text, strlen(text), &q, &err), 0);
	ck_assert_uint_eq(q->n_tasks, 2);
	ck_assert(q->seedable[0] && !q->seedable[1]);
	ck_assert_uint_eq(q->epochs, 5);
	ck_assert(q->seeded && q->seed_from == 7);
	ck_assert_uint_eq(q->n_pass_at, 2);
	ck_assert_str_eq(q->tags[0], "model=x=y");
	text2 = sbx_sweep_plan_json(q);
	ck_assert_str_eq(text, text2);
	/* A plan asking pass@k past its epochs is refused. */
	p->pass_at[1] = 6;
	ck_assert_int_eq(sbx_sweep_plan_check(p, &err), -EINVAL);
	ck_assert_int_lt(sbx_sweep_plan_parse("{\"tasks\":[]}", 12, &q, &err), 0);
}
END_TEST

/* ---- results ---- */

static char *read_all(const char *name)
{
	char path[128], *text = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", sbx_test_scratch, name);
	ck_assert_int_eq(sbx_file_read_capped(AT_FDCWD, path, 1 << 20, &text, &len, NULL), 0);
	return text;
}

static char *line(size_t episode, unsigned attempt, const char *status, double score)
{
	char *s;

	ck_assert_int_ge(asprintf(&s,
				  "{\"episode\":%zu,\"attempt\":%u,\"task\":\"task0\",\"agent\":"
				  "\"agent 0\",\"epoch\":%zu,\"seed\":null,\"run_id\":\"r%zu.%u\","
				  "\"status\":\"%s\",\"score\":%g,\"agent_ms\":10,\"total_ms\":"
				  "100}\n",
				  episode, attempt, episode, episode, attempt, status, score),
			 0);
	return s;
}

START_TEST(results_torn_last_line)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *r = NULL;
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = make_plan(1, 1, 4);
	_cleanup_free_ char *l0 = line(0, 1, "pass", 1), *l1 = line(1, 1, "interrupted", 0),
			    *l2 = line(2, 1, "infra_error", 0), *l3 = line(3, 1, "fail", 0.5),
			    *all = NULL, *after = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_sweep_record *recs;
	sbx_sweep_record rec = {0};
	bool done[4];
	unsigned attempts[4], dropped = 0;
	size_t n;

	/* The last line was cut mid-write: half of l3, no newline. */
	ck_assert_int_ge(asprintf(&all, "%s%s%s%.*s", l0, l1, l2, (int)(strlen(l3) / 2), l3), 0);
	sbx_test_put(sbx_test_scratch, "results.jsonl", all);
	ck_assert_int_eq(sbx_sweep_results_open(sbx_test_scratch, NULL, &r, &dropped, &err), 0);
	ck_assert_uint_eq(dropped, 1);
	recs = sbx_sweep_results_records(r, &n);
	ck_assert_uint_eq(n, 3);
	sbx_sweep_done_map(p, recs, n, done, attempts);
	/* Only the pass is done: interrupted and infra_error run again, the torn one too. */
	ck_assert(done[0] && !done[1] && !done[2] && !done[3]);
	ck_assert_uint_eq(attempts[1], 1);
	ck_assert_uint_eq(attempts[3], 0);

	/* The torn bytes are gone, and the next line starts on a line of its own. */
	ck_assert_int_eq(sbx_sweep_record_parse(l3, strlen(l3) - 1, &rec, &err), 0);
	ck_assert_int_eq(sbx_sweep_results_append(r, &rec, &err), 0);
	sbx_sweep_record_clear(&rec);
	after = read_all("results.jsonl");
	ck_assert_int_eq(strncmp(after, l0, strlen(l0)), 0);
	ck_assert_str_eq(after + strlen(l0) + strlen(l1) + strlen(l2), l3);
	recs = sbx_sweep_results_records(r, &n);
	ck_assert_uint_eq(n, 4);
	sbx_sweep_done_map(p, recs, n, done, NULL);
	ck_assert(done[3]);
}
END_TEST

START_TEST(results_bad_lines_and_read_only)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *r = NULL;
	_cleanup_free_ char *l0 = line(0, 1, "pass", 1), *all = NULL;
	sbx_error err = SBX_ERROR_INIT;
	sbx_sweep_record rec = {0};
	size_t n;

	ck_assert_int_ge(asprintf(&all, "not json\n{\"episode\":-1}\n\n%s", l0), 0);
	sbx_test_put(sbx_test_scratch, "results.jsonl", all);
	ck_assert_int_eq(sbx_sweep_results_load(sbx_test_scratch, NULL, &r, &err), 0);
	sbx_sweep_results_records(r, &n);
	ck_assert_uint_eq(n, 1);
	/* Read-only results refuse to append. */
	ck_assert_int_eq(sbx_sweep_record_parse(l0, strlen(l0) - 1, &rec, &err), 0);
	ck_assert_int_lt(sbx_sweep_results_append(r, &rec, NULL), 0);
	sbx_sweep_record_clear(&rec);
	ck_assert_int_lt(sbx_sweep_record_parse("{\"episode\":1,\"attempt\":1,\"epoch\":0,"
						"\"status\":\"great\"}",
						53, &rec, NULL),
			 0);
}
END_TEST

START_TEST(results_missing_file)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *r = NULL, *w = NULL;
	size_t n = 99;

	ck_assert_int_eq(sbx_sweep_results_load(sbx_test_scratch, NULL, &r, NULL), 0);
	sbx_sweep_results_records(r, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(sbx_sweep_results_open(sbx_test_scratch, NULL, &w, NULL, NULL), 0);
	/* One sweep at a time appends to a directory. */
	{
		sbx_sweep_results *w2 = NULL;

		ck_assert_int_eq(sbx_sweep_results_open(sbx_test_scratch, NULL, &w2, NULL, NULL),
				 -EBUSY);
		ck_assert_ptr_null(w2);
	}
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/results.jsonl", sbx_test_scratch);
		ck_assert_int_eq(access(path, F_OK), 0);
	}
}
END_TEST

/*
 * A results.jsonl far larger than any sweep writes (a tampered or runaway
 * file): read a line at a time, so the peak RSS of a child that opens (as
 * --resume does) or loads it (as `sweep show` does) and summarises stays
 * under RSS_BOUND whatever the file's size, the summary is still right, and
 * a line over SBX_SWEEP_LINE_MAX is skipped with its line number.
 * Under AddressSanitizer (its quarantine keeps freed memory) the file is
 * smaller and RSS is not asserted.
 */
#define RSS_BOUND_KIB (32 << 10)
#if defined(__SANITIZE_ADDRESS__)
#define BIG_FILE_BYTES ((size_t)8 << 20)
#define CHECK_RSS      0
#else
#define BIG_FILE_BYTES ((size_t)256 << 20)
#define CHECK_RSS      1
#endif
#define BIG_EPISODES 100

/* Runs what in a child; its exit status (0: what held), and its peak RSS in KiB. */
static int in_child(int (*what)(const sbx_sweep_plan *), const sbx_sweep_plan *p, long *rss_kib)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(what(p));
	ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
	*rss_kib = ru.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static size_t big_infra_lines, big_lines;

/* The summary of the big file: every odd episode failed first, every even one passed. */
static int big_summary_right(const sbx_sweep_plan *p, const sbx_sweep_results *r)
{
	_cleanup_(sbx_sweep_summary_freep) sbx_sweep_summary *s = NULL;
	_cleanup_free_ bool *done = calloc(BIG_EPISODES, sizeof(*done));
	_cleanup_free_ unsigned *attempts = calloc(BIG_EPISODES, sizeof(*attempts));
	const char *why = NULL;
	size_t n, line = 0, total = 0;
	const sbx_sweep_record *recs = sbx_sweep_results_records(r, &n);

	if (n > 2 * BIG_EPISODES)
		return 2; /* one result and one infra record per episode: the rest folded */
	if (sbx_sweep_summarise(p, recs, n, &s, NULL) < 0 || s->overall.done != BIG_EPISODES ||
	    s->overall.passed != BIG_EPISODES / 2 || s->overall.infra_attempts != big_infra_lines)
		return 3;
	sbx_sweep_done_map(p, recs, n, done, attempts);
	for (size_t i = 0; i < BIG_EPISODES; i++)
		total += attempts[i];
	if (total != big_lines)
		return 4;
	if (sbx_sweep_results_dropped(r, &line, &why) != 3 || line != BIG_EPISODES + 1 ||
	    strcmp(why, "not a sweep result line") != 0)
		return 5;
	return 0;
}

static int big_load(const sbx_sweep_plan *p)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *r = NULL;

	if (sbx_sweep_results_load(sbx_test_scratch, p, &r, NULL) < 0)
		return 1;
	return big_summary_right(p, r);
}

static int big_open(const sbx_sweep_plan *p)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *r = NULL;
	unsigned dropped = 0;

	if (sbx_sweep_results_open(sbx_test_scratch, p, &r, &dropped, NULL) < 0 || dropped != 3)
		return 1;
	return big_summary_right(p, r);
}

START_TEST(results_big_file_streamed)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = make_plan(1, 1, BIG_EPISODES);
	_cleanup_free_ char *path = NULL, *long_line = malloc(SBX_SWEEP_LINE_MAX + 2);
	struct stat st;
	size_t bytes = 0, torn_at;
	long rss = 0;
	FILE *f;

	ck_assert_int_ge(asprintf(&path, "%s/results.jsonl", sbx_test_scratch), 0);
	f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	big_lines = big_infra_lines = 0;
	for (size_t ep = 0; ep < BIG_EPISODES; ep++, big_lines++) {
		_cleanup_free_ char *l = line(ep, 1, ep % 2 ? "fail" : "pass", ep % 2 ? 0 : 1);

		bytes += fwrite(l, 1, strlen(l), f);
	}
	/* Line 101 is not JSON; line 102 is one byte over the cap. */
	bytes += fwrite("garbage\n", 1, 8, f);
	memset(long_line, 'x', SBX_SWEEP_LINE_MAX + 1);
	long_line[SBX_SWEEP_LINE_MAX + 1] = '\n';
	bytes += fwrite(long_line, 1, SBX_SWEEP_LINE_MAX + 2, f);
	/* Then retries and duplicate results: none changes an episode's result. The
	 * retries carry a 4 KiB error, as an engine's answer can: fewer lines to parse
	 * for the same bytes keeps the test a few seconds. */
	memset(long_line, 'e', 4096);
	long_line[4096] = '\0';
	for (size_t i = 0; bytes < BIG_FILE_BYTES; i++, big_lines++) {
		bool infra = i % 2 == 0;
		_cleanup_free_ char *l = line(i % BIG_EPISODES, (unsigned)(2 + i / BIG_EPISODES),
					      infra ? "infra_error" : "pass", 1);

		big_infra_lines += infra;
		if (infra) /* the line without its "}\n", then the error */
			bytes += (size_t)fprintf(f, "%.*s,\"error\":\"%s\"}\n", (int)strlen(l) - 2,
						 l, long_line);
		else
			bytes += fwrite(l, 1, strlen(l), f);
	}
	torn_at = bytes;
	bytes += fwrite("{\"episode\":1,\"att", 1, 17, f);
	ck_assert_int_eq(fclose(f), 0);

	ck_assert_int_eq(in_child(big_load, p, &rss), 0);
	fprintf(stderr, "big: %zu bytes, %zu lines, load: peak RSS %ld KiB\n", bytes, big_lines,
		rss);
	if (CHECK_RSS)
		ck_assert_int_lt(rss, RSS_BOUND_KIB);
	ck_assert_int_eq(in_child(big_open, p, &rss), 0);
	if (CHECK_RSS)
		ck_assert_int_lt(rss, RSS_BOUND_KIB);
	/* Opening to append cut the torn tail, and only it. */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq((size_t)st.st_size, torn_at);
	ck_assert_int_eq(unlink(path), 0);
}
END_TEST

START_TEST(plan_write_read)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = make_plan(3, 2, 2), *q = NULL;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_sweep_plan_read(sbx_test_scratch, &q, &err), -ENOENT);
	ck_assert_int_eq(sbx_sweep_plan_write(p, sbx_test_scratch, &err), 0);
	ck_assert_int_eq(sbx_sweep_plan_read(sbx_test_scratch, &q, &err), 0);
	ck_assert_uint_eq(sbx_sweep_plan_size(q), 12);
	ck_assert_str_eq(q->agents[1], "agent 1");
}
END_TEST

/* ---- summary ---- */

static sbx_sweep_record rec_of(size_t episode, unsigned attempt, sbx_run_status st, double score)
{
	sbx_sweep_record r = {.episode = episode,
			      .attempt = attempt,
			      .epoch = (unsigned)episode,
			      .status = st,
			      .graded = st != SBX_RUN_INFRA_ERROR && st != SBX_RUN_INTERRUPTED,
			      .score = score,
			      .agent_ms = 100.0 * (double)(episode + 1),
			      .total_ms = 100.0 * (double)(episode + 1) + 50,
			      .tool_calls = -1};

	r.task = strdup("task0");
	r.agent = strdup("agent 0");
	r.run_id = strdup("x");
	return r;
}

START_TEST(summary_counts_each_episode_once)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = make_plan(1, 1, 6);
	_cleanup_(sbx_sweep_summary_freep) sbx_sweep_summary *s = NULL;
	_cleanup_(sbx_buf_free) sbx_buf text = SBX_BUF_INIT(1 << 20);
	_cleanup_free_ char *json = NULL;
	_cleanup_json_ cJSON *j = NULL;
	sbx_sweep_record recs[8];
	const sbx_sweep_cell *c;
	size_t n = 0;

	p->pass_at[p->n_pass_at++] = 2;
	recs[n++] = rec_of(0, 1, SBX_RUN_PASS, 1);
	recs[n++] = rec_of(1, 1, SBX_RUN_INFRA_ERROR, 0); /* retried ... */
	recs[n++] = rec_of(1, 2, SBX_RUN_FAIL, 0.2);	  /* ... and failed */
	recs[n++] = rec_of(2, 1, SBX_RUN_PASS, 1);
	recs[n++] = rec_of(2, 2, SBX_RUN_FAIL, 0); /* a duplicate: the first result counts */
	recs[n++] = rec_of(3, 1, SBX_RUN_AGENT_ERROR, 0);
	recs[n++] = rec_of(4, 1, SBX_RUN_TIMEOUT, 0.5);
	recs[n++] = rec_of(5, 1, SBX_RUN_INTERRUPTED, 0); /* not done */
	recs[4].usage = (sbx_sweep_usage){100, 20, 5};
	recs[4].has_usage = true;
	recs[3].usage = (sbx_sweep_usage){1000, 200, 50};
	recs[3].has_usage = true;
	recs[3].tool_calls = 7;

	ck_assert_int_eq(sbx_sweep_summarise(p, recs, n, &s, NULL), 0);
	c = &s->cells[0];
	ck_assert_uint_eq(c->planned, 6);
	ck_assert_uint_eq(c->done, 5);
	ck_assert_uint_eq(c->not_done, 1);
	ck_assert_uint_eq(c->passed, 2);
	ck_assert_uint_eq(c->infra_attempts, 1);
	ck_assert_uint_eq(c->n_status[SBX_RUN_AGENT_ERROR], 1);
	ck_assert_uint_eq(c->n_status[SBX_RUN_TIMEOUT], 1);
	ck_assert_uint_eq(c->n_status[SBX_RUN_FAIL], 1);
	ck_assert_double_eq_tol(c->pass_rate, 0.4, EPS);
	ck_assert_double_eq_tol(c->pass_lo, 0.11762077423264783, 1e-12);
	ck_assert_double_eq_tol(c->pass_at[0], 0.4, EPS);
	ck_assert_double_eq_tol(c->pass_at[1], 0.7, EPS);
	/* Scores of the five results: 1, 0.2, 1, 0, 0.5. */
	ck_assert_double_eq_tol(c->mean_score, 2.7 / 5, EPS);
	ck_assert(c->score_lo <= c->mean_score && c->score_hi >= c->mean_score);
	/* Agent times 100..500 ms: median 300; overhead 50 each. */
	ck_assert_double_eq_tol(c->agent_ms_p50, 300, EPS);
	ck_assert_double_eq_tol(c->overhead_ms_p50, 50, EPS);
	/* Usage of the duplicate (record 4) is not counted; record 3's is. */
	ck_assert_uint_eq(c->usage_episodes, 1);
	ck_assert_double_eq_tol(c->usage.input_tokens, 1000, EPS);
	ck_assert_double_eq_tol(c->tool_calls_mean, 7, EPS);
	ck_assert_double_eq_tol(s->overall.pass_at[1], 0.7, EPS);

	json = sbx_sweep_summary_json(s, false);
	ck_assert_int_eq(sbx_json_parse(json, strlen(json), &j, NULL), 0);
	ck_assert_double_eq_tol(
		sbx_json_get_number(sbx_json_get(sbx_json_get(j, "overall"), "pass_at"), "2", -1),
		0.7, 1e-6);
	ck_assert_int_eq(sbx_sweep_summary_text(s, &text), 0);
	ck_assert_ptr_nonnull(strstr(sbx_buf_str(&text), "5/6"));
	ck_assert_ptr_nonnull(strstr(sbx_buf_str(&text), "tokens: 1000 in, 200 out"));
	ck_assert_ptr_nonnull(strstr(sbx_buf_str(&text), "1 of 6 episodes have no result"));
	for (size_t i = 0; i < n; i++)
		sbx_sweep_record_clear(&recs[i]);
}
END_TEST

START_TEST(summary_cells_follow_the_plan)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = make_plan(3, 2, 2);
	_cleanup_(sbx_sweep_summary_freep) sbx_sweep_summary *s = NULL;
	sbx_sweep_record recs[12];

	/* Only task 2 with agent 1 passes; episode 0 has no result. */
	for (size_t i = 0; i < 12; i++) {
		sbx_sweep_episode ep;

		sbx_sweep_plan_episode(p, i, &ep);
		recs[i] = rec_of(i, 1,
				 i == 0				 ? SBX_RUN_INTERRUPTED
				 : ep.task == 2 && ep.agent == 1 ? SBX_RUN_PASS
								 : SBX_RUN_FAIL,
				 0);
	}
	ck_assert_int_eq(sbx_sweep_summarise(p, recs, 12, &s, NULL), 0);
	for (size_t t = 0; t < 3; t++)
		for (size_t a = 0; a < 2; a++) {
			const sbx_sweep_cell *c = &s->cells[t * 2 + a];

			ck_assert_str_eq(c->task, p->tasks[t]);
			ck_assert_str_eq(c->agent, p->agents[a]);
			ck_assert_uint_eq(c->planned, 2);
			ck_assert_uint_eq(c->done, t == 0 && a == 0 ? 1 : 2);
			ck_assert_uint_eq(c->passed, t == 2 && a == 1 ? 2 : 0);
		}
	ck_assert_uint_eq(s->agents[0].planned, 6);
	ck_assert_uint_eq(s->agents[0].done, 5);
	ck_assert_uint_eq(s->agents[1].passed, 2);
	/* pass@1 of agent 1: the mean over its tasks of 0, 0, 1. */
	ck_assert_double_eq_tol(s->agents[1].pass_at[0], 1.0 / 3, EPS);
	ck_assert_uint_eq(s->overall.planned, 12);
	ck_assert_uint_eq(s->overall.done, 11);
	for (size_t i = 0; i < 12; i++)
		sbx_sweep_record_clear(&recs[i]);
}
END_TEST

START_TEST(compare_known_p_value)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *pa = make_plan(1, 1, 10),
						       *pb = make_plan(1, 1, 10);
	_cleanup_free_ char *out = NULL, *text = NULL;
	_cleanup_json_ cJSON *j = NULL;
	sbx_sweep_record ra[10], rb[10];
	const cJSON *all;

	/* A passes epoch 0 only; B passes all ten: 0 vs 9 discordant pairs. */
	for (size_t i = 0; i < 10; i++) {
		ra[i] = rec_of(i, 1, i == 0 ? SBX_RUN_PASS : SBX_RUN_FAIL, i == 0 ? 1 : 0);
		rb[i] = rec_of(i, 1, SBX_RUN_PASS, 1);
	}
	ck_assert_int_eq(sbx_sweep_compare(pa, ra, 10, pb, rb, 10, true, &out, NULL), 0);
	ck_assert_int_eq(sbx_json_parse(out, strlen(out), &j, NULL), 0);
	all = sbx_json_get(j, "overall");
	ck_assert_int_eq((int)sbx_json_get_number(all, "pairs", 0), 10);
	ck_assert_int_eq((int)sbx_json_get_number(all, "only_a_passed", -1), 0);
	ck_assert_int_eq((int)sbx_json_get_number(all, "only_b_passed", -1), 9);
	/* 2 × (1/2)^9 */
	ck_assert_double_eq_tol(sbx_json_get_number(all, "p_value", -1), 2.0 / 512, 1e-6);
	ck_assert_double_eq_tol(sbx_json_get_number(all, "score_diff", -1), 0.9, 1e-6);
	ck_assert_int_eq(sbx_sweep_compare(pa, ra, 10, pb, rb, 10, false, &text, NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "0.0039"));
	for (size_t i = 0; i < 10; i++) {
		sbx_sweep_record_clear(&ra[i]);
		sbx_sweep_record_clear(&rb[i]);
	}
}
END_TEST

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

	SBX_TEST_CASE(s, "stats", NULL, NULL, 0, wilson_hand_computed, pass_at_k_unbiased,
		      sign_test_exact, quantiles_and_bootstrap,
		      quantiles_by_selection_match_sorting,
		      bootstrap_hands_over_to_its_normal_limit);

	SBX_TEST_CASE(s, "plan", NULL, NULL, 0, plan_order_is_epoch_major, plan_json_round_trip);

	SBX_TEST_CASE(s, "files", sbx_test_scratch_setup, sbx_test_scratch_teardown, 0,
		      results_torn_last_line, results_bad_lines_and_read_only, results_missing_file,
		      plan_write_read);
	SBX_TEST_CASE(s, "big-file", sbx_test_scratch_setup, sbx_test_scratch_teardown, 60,
		      results_big_file_streamed);

	SBX_TEST_CASE(s, "summary", NULL, NULL, 0, summary_counts_each_episode_once,
		      summary_cells_follow_the_plan, compare_known_p_value);
}

SBX_TEST_MAIN("sweep", add_cases)
