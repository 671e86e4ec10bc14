/* SPDX-License-Identifier: MIT */
/*
 * The plan's order and sweep.json, results.jsonl (torn last line, append, a
 * big file streamed), resume's view of what is done, the summary and compare
 * on synthetic results.
 */
#include "test_sweep.h"

/* ---- the plan ---- */

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

void sweep_results_cases(Suite *s)
{
	SBX_TEST_CASE(s, "plan", NULL, NULL, 0, plan_order_is_epoch_major, plan_json_round_trip);

	SBX_TEST_CASE(s, "files", sbx_test_scratch_setup, sbx_test_scratch_teardown, 0,
		      results_torn_last_line, results_bad_lines_and_read_only, results_missing_file,
		      plan_write_read);
	SBX_TEST_CASE(s, "big-file", sbx_test_scratch_setup, sbx_test_scratch_teardown, 60,
		      results_big_file_streamed);

	SBX_TEST_CASE(s, "summary", NULL, NULL, 0, summary_counts_each_episode_once,
		      summary_cells_follow_the_plan, compare_known_p_value);
}
