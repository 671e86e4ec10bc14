/* SPDX-License-Identifier: MIT */
/*
 * Two sweeps side by side. Episodes pair by task and epoch (and seed, when
 * both sweeps were seeded): the same task instance under A and under B, so a
 * difference is the agents', not the draw's. Pass/fail gets the exact sign
 * test on the discordant pairs; scores a paired bootstrap of the differences.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/sweep.h"

#define BOOTSTRAP_ITERS 2000
#define BOOTSTRAP_SEED	0xc0ffeeULL

typedef struct row {
	const char *task; /* NULL: overall */
	unsigned pairs, a_pass, b_pass, only_a, only_b, scored;
	double p_value, diff, diff_lo, diff_hi;
} row;

/* The first result of (task, agent, epoch) among recs, or NULL. */
static const sbx_sweep_record *find(const sbx_sweep_record *recs, size_t n, const char *task,
				    const char *agent, unsigned epoch)
{
	for (size_t i = 0; i < n; i++)
		if (sbx_sweep_record_done(&recs[i]) && recs[i].epoch == epoch &&
		    strcmp(recs[i].task, task) == 0 && strcmp(recs[i].agent, agent) == 0)
			return &recs[i];
	return NULL;
}

static bool same_agents(const sbx_sweep_plan *a, const sbx_sweep_plan *b)
{
	if (a->n_agents != b->n_agents)
		return false;
	for (size_t i = 0; i < a->n_agents; i++)
		if (strcmp(a->agents[i], b->agents[i]) != 0)
			return false;
	return true;
}

static void finish_row(row *r, double *diffs)
{
	r->p_value = sbx_sweep_sign_test(r->only_a, r->only_b);
	if (r->scored) {
		double sum = 0;

		for (unsigned i = 0; i < r->scored; i++)
			sum += diffs[i];
		r->diff = sum / r->scored;
		sbx_sweep_bootstrap_mean(diffs, r->scored, BOOTSTRAP_ITERS, BOOTSTRAP_SEED,
					 &r->diff_lo, &r->diff_hi);
	} else {
		r->diff = r->diff_lo = r->diff_hi = NAN;
	}
}

static void add_num(cJSON *o, const char *k, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, round(v * 1e6) / 1e6);
}

static cJSON *row_json(const row *r)
{
	cJSON *o = cJSON_CreateObject();

	if (r->task)
		cJSON_AddStringToObject(o, "task", r->task);
	cJSON_AddNumberToObject(o, "pairs", r->pairs);
	cJSON_AddNumberToObject(o, "a_passed", r->a_pass);
	cJSON_AddNumberToObject(o, "b_passed", r->b_pass);
	cJSON_AddNumberToObject(o, "only_a_passed", r->only_a);
	cJSON_AddNumberToObject(o, "only_b_passed", r->only_b);
	add_num(o, "p_value", r->p_value);
	cJSON_AddStringToObject(o, "test", "exact_sign");
	cJSON_AddNumberToObject(o, "scored_pairs", r->scored);
	add_num(o, "score_diff", r->diff);
	add_num(o, "score_diff_lo", r->diff_lo);
	add_num(o, "score_diff_hi", r->diff_hi);
	return o;
}

static int row_text(sbx_buf *b, const row *r)
{
	int rc = sbx_buf_printf(b, "%-24.24s %5u %6u %6u %5u %5u %8.4f",
				r->task ? r->task : "overall", r->pairs, r->a_pass, r->b_pass,
				r->only_a, r->only_b, r->p_value);

	if (rc >= 0)
		rc = isnan(r->diff) ? sbx_buf_puts(b, "        -\n")
				    : sbx_buf_printf(b, " %+8.3f [%+.3f,%+.3f]\n", r->diff,
						     r->diff_lo, r->diff_hi);
	return rc;
}

/*
 * Which agents the rows pair: every agent of both when the sweeps have the
 * same ones (not only the first, as "A: <first agent>" said), else the first
 * of each.
 */
static int header_text(sbx_buf *b, const sbx_sweep_plan *pa, const sbx_sweep_plan *pb,
		       bool by_agent)
{
	int rc;

	if (!by_agent || pa->n_agents == 1) {
		rc = sbx_buf_printf(b, "A: %s\nB: %s\n", pa->agents[0], pb->agents[0]);
		if (rc >= 0 && !by_agent && (pa->n_agents > 1 || pb->n_agents > 1))
			rc = sbx_buf_puts(b, "(the sweeps' agents differ: only their first agents "
					     "are paired)\n");
		return rc;
	}
	rc = sbx_buf_printf(b, "A, B: the same %zu agents, paired agent by agent:", pa->n_agents);
	for (size_t i = 0; rc >= 0 && i < pa->n_agents; i++)
		rc = sbx_buf_printf(b, "%s %s", i ? "," : "", pa->agents[i]);
	return rc < 0 ? rc : sbx_buf_putc(b, '\n');
}

int sbx_sweep_compare(const sbx_sweep_plan *pa, const sbx_sweep_record *ra, size_t na,
		      const sbx_sweep_plan *pb, const sbx_sweep_record *rb, size_t nb, bool json,
		      char **out, sbx_error *err)
{
	bool by_agent = same_agents(pa, pb);
	size_t n_agents = by_agent ? pa->n_agents : 1;
	unsigned epochs = pa->epochs < pb->epochs ? pa->epochs : pb->epochs;
	size_t cap = na < nb ? na : nb;
	_cleanup_free_ row *rows = calloc(pa->n_tasks + 1, sizeof(*rows));
	_cleanup_free_ double *diffs = calloc(cap ? cap : 1, sizeof(*diffs));
	_cleanup_free_ double *all_diffs = calloc(cap ? cap : 1, sizeof(*all_diffs));
	row *all;
	size_t n_rows = 0;

	if (!rows || !diffs || !all_diffs)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	all = &rows[pa->n_tasks];
	for (size_t t = 0; t < pa->n_tasks; t++) {
		row *r = &rows[n_rows];
		bool in_b = false;

		for (size_t j = 0; j < pb->n_tasks; j++)
			in_b = in_b || strcmp(pb->tasks[j], pa->tasks[t]) == 0;
		if (!in_b)
			continue;
		r->task = pa->tasks[t];
		for (size_t ag = 0; ag < n_agents; ag++)
			for (unsigned e = 0; e < epochs; e++) {
				const sbx_sweep_record *x =
					find(ra, na, pa->tasks[t], pa->agents[ag], e);
				const sbx_sweep_record *y =
					find(rb, nb, pa->tasks[t], pb->agents[ag], e);
				bool px, py;

				if (!x || !y || x->seeded != y->seeded ||
				    (x->seeded && x->seed != y->seed))
					continue; /* not the same instance */
				px = x->status == SBX_RUN_PASS;
				py = y->status == SBX_RUN_PASS;
				r->pairs++;
				r->a_pass += px;
				r->b_pass += py;
				r->only_a += px && !py;
				r->only_b += py && !px;
				if (x->graded && y->graded && r->scored < cap) {
					diffs[r->scored++] = y->score - x->score;
					all_diffs[all->scored++] = y->score - x->score;
				}
			}
		all->pairs += r->pairs;
		all->a_pass += r->a_pass;
		all->b_pass += r->b_pass;
		all->only_a += r->only_a;
		all->only_b += r->only_b;
		finish_row(r, diffs);
		n_rows++;
	}
	finish_row(all, all_diffs);

	if (json) {
		_cleanup_json_ cJSON *o = cJSON_CreateObject();
		cJSON *a;

		if (!o)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		cJSON_AddStringToObject(o, "pairing",
					by_agent ? "task, agent, epoch, seed"
						 : "task, epoch, seed (first agents)");
		cJSON_AddItemToObject(o, "overall", row_json(all));
		a = cJSON_AddArrayToObject(o, "tasks");
		for (size_t i = 0; a && i < n_rows; i++)
			cJSON_AddItemToArray(a, row_json(&rows[i]));
		*out = cJSON_Print(o);
	} else {
		_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(64 << 20);
		int rc = header_text(&b, pa, pb, by_agent);

		if (rc >= 0)
			rc = sbx_buf_printf(&b, "%-24s %5s %6s %6s %5s %5s %8s %9s\n", "task",
					    "pairs", "A_pass", "B_pass", "A>B", "B>A", "p",
					    "B-A score");
		for (size_t i = 0; rc >= 0 && i < n_rows; i++)
			rc = row_text(&b, &rows[i]);
		if (rc >= 0)
			rc = row_text(&b, all);
		if (rc < 0)
			return sbx_error_set(err, rc, "out of memory");
		*out = sbx_buf_steal(&b, NULL);
	}
	if (!*out)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return 0;
}
