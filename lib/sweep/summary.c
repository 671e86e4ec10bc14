/* SPDX-License-Identifier: MIT */
/* The summary: per task × agent, per agent, overall; as JSON and as a table. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/sweep.h"
#include "sweep-internal.h"

#define BOOTSTRAP_ITERS 2000
#define BOOTSTRAP_SEED	0x5eed5eedULL
#define Z95		1.959963984540054
#define ANY		SIZE_MAX

typedef struct ctx {
	const sbx_sweep_plan *p;
	const sbx_sweep_record **best; /* per episode: its result, or NULL */
	unsigned *infra;	       /* per episode: infra_error attempts */
	double *buf;		       /* scratch, one per episode */
	size_t *idx;		       /* scratch: the cell's episode indices */
} ctx;

static void fill_cell(const ctx *c, sbx_sweep_cell *cell, size_t task, size_t agent,
		      const sbx_sweep_cell *subcells)
{
	size_t n, n_idx;
	double calls = 0;
	unsigned n_calls = 0;

	cell->task = task == ANY ? NULL : c->p->tasks[task];
	cell->agent = agent == ANY ? NULL : c->p->agents[agent];
	/* The cell's episodes, straight from the plan's layout (sbx_sweep_plan_episode):
	 * the work is the cell's size, not the sweep's, for each of the cells. */
	n_idx = 0;
	for (unsigned e = 0; e < c->p->epochs; e++)
		for (size_t t = task == ANY ? 0 : task;
		     t < (task == ANY ? c->p->n_tasks : task + 1); t++)
			for (size_t a = agent == ANY ? 0 : agent;
			     a < (agent == ANY ? c->p->n_agents : agent + 1); a++)
				c->idx[n_idx++] = (e * c->p->n_tasks + t) * c->p->n_agents + a;
	for (size_t j = 0; j < n_idx; j++) {
		size_t i = c->idx[j];
		const sbx_sweep_record *r = c->best[i];

		cell->planned++;
		cell->infra_attempts += c->infra[i];
		if (!r) {
			cell->not_done++;
			continue;
		}
		cell->done++;
		cell->n_status[r->status]++;
		/* Only a grade error leaves an error on a fail, timeout or agent_error. */
		if (r->error && (r->status == SBX_RUN_FAIL || r->status == SBX_RUN_TIMEOUT ||
				 r->status == SBX_RUN_AGENT_ERROR))
			cell->grade_errors++;
		if (r->status == SBX_RUN_PASS)
			cell->passed++;
		if (r->tool_calls >= 0) {
			calls += r->tool_calls;
			n_calls++;
		}
		if (r->has_usage) {
			cell->usage_episodes++;
			cell->usage.input_tokens += r->usage.input_tokens;
			cell->usage.output_tokens += r->usage.output_tokens;
			cell->usage.cached_tokens += r->usage.cached_tokens;
		}
	}
	cell->pass_rate = cell->done ? (double)cell->passed / cell->done : NAN;
	sbx_sweep_wilson(cell->passed, cell->done, Z95, &cell->pass_lo, &cell->pass_hi);
	cell->tool_calls_mean = n_calls ? calls / n_calls : NAN;

	/* Scores, then agent time, then overhead, each through the scratch buffer. */
	for (int what = 0; what < 3; what++) {
		n = 0;
		for (size_t j = 0; j < n_idx; j++) {
			const sbx_sweep_record *r = c->best[c->idx[j]];

			if (!r)
				continue;
			if (what == 0 && r->graded)
				c->buf[n++] = r->score;
			else if (what == 1)
				c->buf[n++] = r->agent_ms;
			else if (what == 2)
				c->buf[n++] = fmax(0, r->total_ms - r->agent_ms);
		}
		if (what == 0) {
			double sum = 0;

			for (size_t i = 0; i < n; i++)
				sum += c->buf[i];
			cell->scored = (unsigned)n;
			cell->mean_score = n ? sum / (double)n : NAN;
			sbx_sweep_bootstrap_mean(c->buf, n, BOOTSTRAP_ITERS, BOOTSTRAP_SEED,
						 &cell->score_lo, &cell->score_hi);
		} else if (what == 1) {
			cell->agent_ms_p50 = sbx_sweep_quantile(c->buf, n, 0.5);
			cell->agent_ms_p95 = sbx_sweep_quantile(c->buf, n, 0.95);
		} else {
			cell->overhead_ms_p50 = sbx_sweep_quantile(c->buf, n, 0.5);
			cell->overhead_ms_p95 = sbx_sweep_quantile(c->buf, n, 0.95);
		}
	}

	/* pass@k: per task × agent from its samples; above that the mean over those cells. */
	for (size_t k = 0; k < c->p->n_pass_at; k++) {
		if (!subcells) {
			cell->pass_at[k] =
				sbx_sweep_pass_at_k(cell->done, cell->passed, c->p->pass_at[k]);
			continue;
		}
		double sum = 0;
		unsigned m = 0;

		for (size_t t = 0; t < c->p->n_tasks; t++)
			for (size_t a = 0; a < c->p->n_agents; a++) {
				const sbx_sweep_cell *s = &subcells[t * c->p->n_agents + a];

				if ((agent != ANY && a != agent) || isnan(s->pass_at[k]))
					continue;
				sum += s->pass_at[k];
				m++;
			}
		cell->pass_at[k] = m ? sum / m : NAN;
	}
}

int sbx_sweep_summarise(const sbx_sweep_plan *p, const sbx_sweep_record *recs, size_t n,
			sbx_sweep_summary **out, sbx_error *err)
{
	_cleanup_(sbx_sweep_summary_freep) sbx_sweep_summary *s = NULL;
	size_t size = sbx_sweep_plan_size(p);
	_cleanup_free_ const sbx_sweep_record **best = calloc(size ? size : 1, sizeof(*best));
	_cleanup_free_ unsigned *infra = calloc(size ? size : 1, sizeof(*infra));
	_cleanup_free_ double *buf = calloc(size ? size : 1, sizeof(*buf));
	_cleanup_free_ size_t *idx = calloc(size ? size : 1, sizeof(*idx));
	ctx c = {.p = p, .best = best, .infra = infra, .buf = buf, .idx = idx};

	s = calloc(1, sizeof(*s));
	if (!s || !best || !infra || !buf || !idx)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	s->plan = p;
	s->n_cells = p->n_tasks * p->n_agents;
	s->cells = calloc(s->n_cells, sizeof(*s->cells));
	s->agents = calloc(p->n_agents, sizeof(*s->agents));
	if (!s->cells || !s->agents)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	/* An episode's result is its first done line; a duplicate would not count twice. */
	for (size_t i = 0; i < n; i++) {
		if (recs[i].episode >= size)
			continue;
		if (recs[i].status == SBX_RUN_INFRA_ERROR)
			infra[recs[i].episode] += sbx_sweep__lines(&recs[i]);
		if (sbx_sweep_record_done(&recs[i]) && !best[recs[i].episode])
			best[recs[i].episode] = &recs[i];
	}
	for (size_t t = 0; t < p->n_tasks; t++)
		for (size_t a = 0; a < p->n_agents; a++)
			fill_cell(&c, &s->cells[t * p->n_agents + a], t, a, NULL);
	for (size_t a = 0; a < p->n_agents; a++)
		fill_cell(&c, &s->agents[a], ANY, a, s->cells);
	fill_cell(&c, &s->overall, ANY, ANY, s->cells);
	*out = TAKE_PTR(s);
	return 0;
}

void sbx_sweep_summary_free(sbx_sweep_summary *s)
{
	if (!s)
		return;
	free(s->cells);
	free(s->agents);
	free(s);
}

/* NaN has no JSON spelling: null. */
static void add_num(cJSON *o, const char *k, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, round(v * 1e6) / 1e6);
}

static cJSON *cell_json(const sbx_sweep_plan *p, const sbx_sweep_cell *c)
{
	cJSON *o = cJSON_CreateObject(), *x;

	if (!o)
		return NULL;
	if (c->task)
		cJSON_AddStringToObject(o, "task", c->task);
	if (c->agent)
		cJSON_AddStringToObject(o, "agent", c->agent);
	cJSON_AddNumberToObject(o, "planned", c->planned);
	cJSON_AddNumberToObject(o, "episodes", c->done);
	cJSON_AddNumberToObject(o, "not_done", c->not_done);
	x = cJSON_AddObjectToObject(o, "status");
	for (int i = 0; i <= SBX_RUN_SANDBOX_FAILED; i++)
		if (i != SBX_RUN_INTERRUPTED && i != SBX_RUN_INFRA_ERROR)
			cJSON_AddNumberToObject(x, sbx_run_status_name(i), c->n_status[i]);
	cJSON_AddNumberToObject(o, "infra_errors", c->infra_attempts);
	cJSON_AddNumberToObject(o, "agent_errors", c->n_status[SBX_RUN_AGENT_ERROR]);
	cJSON_AddNumberToObject(o, "timeouts", c->n_status[SBX_RUN_TIMEOUT]);
	cJSON_AddNumberToObject(o, "grade_errors", c->grade_errors);
	x = cJSON_AddObjectToObject(o, "pass_rate");
	add_num(x, "value", c->pass_rate);
	add_num(x, "lo", c->pass_lo);
	add_num(x, "hi", c->pass_hi);
	cJSON_AddStringToObject(x, "interval", "wilson95");
	x = cJSON_AddObjectToObject(o, "score");
	cJSON_AddNumberToObject(x, "scored", c->scored);
	add_num(x, "mean", c->mean_score);
	add_num(x, "lo", c->score_lo);
	add_num(x, "hi", c->score_hi);
	cJSON_AddStringToObject(x, "interval", "bootstrap95");
	x = cJSON_AddObjectToObject(o, "pass_at");
	for (size_t k = 0; x && k < p->n_pass_at; k++) {
		char key[16];

		snprintf(key, sizeof(key), "%u", p->pass_at[k]);
		add_num(x, key, c->pass_at[k]);
	}
	x = cJSON_AddObjectToObject(o, "agent_ms");
	add_num(x, "p50", c->agent_ms_p50);
	add_num(x, "p95", c->agent_ms_p95);
	x = cJSON_AddObjectToObject(o, "overhead_ms");
	add_num(x, "p50", c->overhead_ms_p50);
	add_num(x, "p95", c->overhead_ms_p95);
	add_num(o, "tool_calls_per_episode", c->tool_calls_mean);
	if (c->usage_episodes) {
		x = cJSON_AddObjectToObject(o, "usage");
		cJSON_AddNumberToObject(x, "episodes", c->usage_episodes);
		cJSON_AddNumberToObject(x, "input_tokens", c->usage.input_tokens);
		cJSON_AddNumberToObject(x, "output_tokens", c->usage.output_tokens);
		cJSON_AddNumberToObject(x, "cached_tokens", c->usage.cached_tokens);
	} else {
		cJSON_AddNullToObject(o, "usage");
	}
	return o;
}

char *sbx_sweep_summary_json(const sbx_sweep_summary *s, bool pretty)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	cJSON *a;

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "schema_version", 1);
	cJSON_AddNumberToObject(o, "epochs", s->plan->epochs);
	cJSON_AddItemToObject(o, "overall", cell_json(s->plan, &s->overall));
	a = cJSON_AddArrayToObject(o, "agents");
	for (size_t i = 0; a && i < s->plan->n_agents; i++)
		cJSON_AddItemToArray(a, cell_json(s->plan, &s->agents[i]));
	a = cJSON_AddArrayToObject(o, "cells");
	for (size_t i = 0; a && i < s->n_cells; i++)
		cJSON_AddItemToArray(a, cell_json(s->plan, &s->cells[i]));
	return pretty ? cJSON_Print(o) : cJSON_PrintUnformatted(o);
}

static void pct(char *out, size_t size, double v)
{
	if (isnan(v))
		snprintf(out, size, "-");
	else
		snprintf(out, size, "%.1f%%", v * 100);
}

/* The table's columns; the header and every row use the same widths. */
#define ROW_FMT "%-24.24s %9s %7s %-13s %6s"

static int text_row(sbx_buf *b, const sbx_sweep_plan *p, const char *name, const sbx_sweep_cell *c)
{
	char done[32], rate[16], ci[32] = "", score[16] = "-";
	int r;

	snprintf(done, sizeof(done), "%u/%u", c->done, c->planned);
	pct(rate, sizeof(rate), c->pass_rate);
	if (!isnan(c->pass_rate))
		snprintf(ci, sizeof(ci), "[%.1f,%.1f]", c->pass_lo * 100, c->pass_hi * 100);
	if (!isnan(c->mean_score))
		snprintf(score, sizeof(score), "%.3f", c->mean_score);
	r = sbx_buf_printf(b, ROW_FMT, name, done, rate, ci, score);
	for (size_t k = 0; r >= 0 && k < p->n_pass_at; k++) {
		char v[16];

		pct(v, sizeof(v), c->pass_at[k]);
		r = sbx_buf_printf(b, " %7s", v);
	}
	if (r >= 0)
		r = sbx_buf_printf(b, " %5u %5u %5u", c->n_status[SBX_RUN_AGENT_ERROR],
				   c->n_status[SBX_RUN_TIMEOUT], c->infra_attempts);
	if (r >= 0)
		r = isnan(c->agent_ms_p50)
			    ? sbx_buf_printf(b, " %8s %8s", "-", "-")
			    : sbx_buf_printf(b, " %8.2f %8.2f", c->agent_ms_p50 / 1000,
					     c->overhead_ms_p50 / 1000);
	return r < 0 ? r : sbx_buf_putc(b, '\n');
}

int sbx_sweep_summary_text(const sbx_sweep_summary *s, sbx_buf *b)
{
	const sbx_sweep_plan *p = s->plan;
	int r;

	r = sbx_buf_printf(b, ROW_FMT, "task", "done", "pass", "95% CI", "score");
	for (size_t k = 0; r >= 0 && k < p->n_pass_at; k++) {
		char h[16];

		snprintf(h, sizeof(h), "pass@%u", p->pass_at[k]);
		r = sbx_buf_printf(b, " %7s", h);
	}
	if (r >= 0)
		r = sbx_buf_printf(b, " %5s %5s %5s %8s %8s\n", "a_err", "tmout", "infra",
				   "agent_s", "ovhd_s");
	for (size_t a = 0; r >= 0 && a < p->n_agents; a++) {
		const sbx_sweep_cell *ac = &s->agents[a];

		r = sbx_buf_printf(b, "agent %zu: %s\n", a + 1, p->agents[a]);
		for (size_t t = 0; r >= 0 && t < p->n_tasks; t++)
			r = text_row(b, p, p->tasks[t], &s->cells[t * p->n_agents + a]);
		if (r >= 0 && p->n_tasks > 1)
			r = text_row(b, p, "(all tasks)", ac);
		if (r >= 0 && ac->usage_episodes)
			r = sbx_buf_printf(b,
					   "  tokens: %.0f in, %.0f out, %.0f cached over %u "
					   "episodes\n",
					   ac->usage.input_tokens, ac->usage.output_tokens,
					   ac->usage.cached_tokens, ac->usage_episodes);
		if (r >= 0 && !isnan(ac->tool_calls_mean))
			r = sbx_buf_printf(b, "  tool calls per episode: %.1f\n",
					   ac->tool_calls_mean);
	}
	if (r >= 0 && p->n_agents > 1)
		r = text_row(b, p, "overall", &s->overall);
	if (r >= 0 && s->overall.not_done)
		r = sbx_buf_printf(b,
				   "%u of %u episodes have no result yet (resume with --resume)\n",
				   s->overall.not_done, s->overall.planned);
	return r;
}

int sbx_sweep_summary_write(const sbx_sweep_summary *s, const char *dir, sbx_error *err)
{
	_cleanup_free_ char *text = sbx_sweep_summary_json(s, true);

	if (!text)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return sbx_sweep__write_atomic(dir, "summary.json", text, strlen(text), err);
}
