/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/sweep.h"
#include "view-internal.h"

#define HIST_BINS 12

static int pct(sbx_buf *out, double v)
{
	return isnan(v) ? sbx_buf_puts(out, "—") : sbx_buf_printf(out, "%.1f%%", v * 100);
}

static int cell_row(sbx_buf *out, const sbx_sweep_plan *p, const sbx_sweep_cell *c)
{
	unsigned errors = c->n_status[SBX_RUN_AGENT_ERROR] + c->n_status[SBX_RUN_SANDBOX_FAILED] +
			  c->n_status[SBX_RUN_TIMEOUT];
	int r;

	r = sbx_buf_puts(out, "<tr><td>");
	r = r < 0 ? r : sbx_html_escape(out, c->task ? c->task : "(all tasks)");
	r = r < 0 ? r : sbx_buf_puts(out, "</td><td>");
	r = r < 0 ? r : sbx_html_escape(out, c->agent ? c->agent : "(all agents)");
	r = r < 0 ? r
		  : sbx_buf_printf(out,
				   "</td><td class=\"num\">%u/%u</td><td class=\"num "
				   "rate\">",
				   c->done, c->planned);
	r = r < 0 ? r : pct(out, c->done ? c->pass_rate : NAN);
	r = r < 0 ? r : sbx_buf_puts(out, " <span class=\"dim\">[");
	r = r < 0 ? r : pct(out, c->done ? c->pass_lo : NAN);
	r = r < 0 ? r : sbx_buf_puts(out, ", ");
	r = r < 0 ? r : pct(out, c->done ? c->pass_hi : NAN);
	r = r < 0 ? r : sbx_buf_puts(out, "]</span></td><td class=\"num\">");
	r = r < 0 ? r
		  : (c->scored ? sbx_buf_printf(out, "%.3f <span class=\"dim\">[%.3f, %.3f]</span>",
						c->mean_score, c->score_lo, c->score_hi)
			       : sbx_buf_puts(out, "—"));
	for (size_t k = 0; r >= 0 && k < p->n_pass_at; k++) {
		r = sbx_buf_puts(out, "</td><td class=\"num\">");
		r = r < 0 ? r : pct(out, c->pass_at[k]);
	}
	r = r < 0 ? r
		  : sbx_buf_printf(out, "</td><td class=\"num%s\">%u</td><td class=\"num\">%u</td>",
				   errors ? " errtext" : "", errors, c->infra_attempts);
	r = r < 0 ? r : sbx_buf_puts(out, "<td class=\"num\">");
	r = r < 0 ? r : sbx_view__put_ms(out, c->agent_ms_p50);
	r = r < 0 ? r : sbx_buf_puts(out, " / ");
	r = r < 0 ? r : sbx_view__put_ms(out, c->agent_ms_p95);
	r = r < 0 ? r : sbx_buf_puts(out, "</td><td class=\"num\">");
	r = r < 0 ? r : sbx_view__put_ms(out, c->overhead_ms_p50);
	return r < 0 ? r : sbx_buf_puts(out, "</td></tr>\n");
}

/* Pass rate per task × agent as bars, the Wilson interval as a whisker. */
static int bars(sbx_buf *out, const sbx_sweep_summary *s)
{
	size_t n = s->n_cells, h = n * 24 + 30;
	int r;

	r = sbx_buf_printf(out,
			   "<h2>Pass rate</h2><svg class=\"bars\" viewBox=\"0 0 1000 %zu\" "
			   "role=\"img\" aria-label=\"pass rate per task and agent\">",
			   h);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		const sbx_sweep_cell *c = &s->cells[i];
		double y = (double)i * 24 + 4, w = c->done ? c->pass_rate * 600 : 0;

		r = sbx_buf_printf(out, "<text x=\"0\" y=\"%.0f\">", y + 13);
		r = r < 0 ? r : sbx_html_escape(out, c->task);
		r = r < 0 ? r : sbx_buf_puts(out, " · ");
		r = r < 0 ? r : sbx_html_escape(out, c->agent);
		r = r < 0 ? r
			  : sbx_buf_printf(out,
					   "</text><rect class=\"bar\" x=\"300\" y=\"%.0f\" "
					   "width=\"%.1f\" height=\"16\"><title>",
					   y, w);
		r = r < 0 ? r : pct(out, c->done ? c->pass_rate : NAN);
		r = r < 0 ? r : sbx_buf_puts(out, "</title></rect>");
		if (r >= 0 && c->done)
			r = sbx_buf_printf(
				out,
				"<line class=\"whisker\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
				"y2=\"%.0f\"/><line class=\"whisker\" x1=\"%.1f\" "
				"x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\"/><line "
				"class=\"whisker\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
				"y2=\"%.0f\"/><text x=\"910\" y=\"%.0f\">%.0f%%</text>",
				300 + c->pass_lo * 600, 300 + c->pass_hi * 600, y + 8, y + 8,
				300 + c->pass_lo * 600, 300 + c->pass_lo * 600, y + 3, y + 13,
				300 + c->pass_hi * 600, 300 + c->pass_hi * 600, y + 3, y + 13,
				y + 13, c->pass_rate * 100);
	}
	return r < 0 ? r
		     : sbx_buf_printf(out,
				      "<line class=\"axis\" x1=\"300\" x2=\"900\" y1=\"%zu\" "
				      "y2=\"%zu\"/><text x=\"300\" y=\"%zu\">0%%</text><text "
				      "x=\"880\" y=\"%zu\">100%%</text></svg>",
				      h - 22, h - 22, h - 6, h - 6);
}

static int histogram(sbx_buf *out, const sbx_sweep_record *recs, size_t n)
{
	unsigned bins[HIST_BINS] = {0}, top = 1;
	double max = 0;
	int r;

	for (size_t i = 0; i < n; i++)
		if (sbx_sweep_record_done(&recs[i]) && recs[i].total_ms > max &&
		    recs[i].total_ms < 1e15)
			max = recs[i].total_ms;
	if (max <= 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t b;

		if (!sbx_sweep_record_done(&recs[i]))
			continue;
		b = (size_t)sbx_view__clamp(recs[i].total_ms / max * HIST_BINS, 0, HIST_BINS - 1);
		b = b >= HIST_BINS ? HIST_BINS - 1 : b;
		if (++bins[b] > top)
			top = bins[b];
	}
	r = sbx_buf_puts(out, "<h2>Episode time</h2><svg class=\"hist\" viewBox=\"0 0 1000 180\" "
			      "role=\"img\" aria-label=\"episode time histogram\">");
	for (size_t b = 0; r >= 0 && b < HIST_BINS; b++) {
		double hgt = (double)bins[b] / top * 130;

		r = sbx_buf_printf(
			out,
			"<rect class=\"bar\" x=\"%zu\" y=\"%.1f\" width=\"%u\" "
			"height=\"%.1f\"><title>%u episodes, %.0f–%.0f ms</title></rect>",
			40 + b * 78, 140 - hgt, 72, hgt, bins[b], max * b / HIST_BINS,
			max * (b + 1) / HIST_BINS);
	}
	return r < 0 ? r
		     : sbx_buf_printf(out,
				      "<text x=\"40\" y=\"170\">0</text><text x=\"900\" "
				      "y=\"170\">%.0f ms</text></svg>",
				      max);
}

/* The episodes that did not pass, grouped by why (the summary's reasons). */
static int reasons(sbx_buf *out, const sbx_sweep_summary *s)
{
	int r;

	if (!s->n_reasons)
		return 0;
	r = sbx_buf_puts(out, "<h2>Not passed, by reason</h2><table class=\"list\" "
			      "id=\"reasons\"><thead><tr><th>episodes</th><th>reason</th>"
			      "</tr></thead><tbody>");
	for (size_t i = 0; r >= 0 && i < s->n_reasons; i++) {
		r = sbx_buf_printf(out, "<tr><td class=\"num\">%u</td><td>",
				   s->reasons[i].episodes);
		r = r < 0 ? r : sbx_html_escape(out, s->reasons[i].reason);
		r = r < 0 ? r : sbx_buf_puts(out, "</td></tr>");
	}
	return r < 0 ? r : sbx_buf_puts(out, "</tbody></table>");
}

static int episodes(const sbx_view_ctx *ctx, size_t root, const char *rel, sbx_buf *out,
		    const sbx_sweep_record *recs, size_t n)
{
	int r = sbx_buf_puts(out,
			     "<h2>Episodes</h2><table class=\"list\" id=\"episodes\"><thead><tr>"
			     "<th>#</th><th>status</th><th>score</th><th>run</th><th>task</th>"
			     "<th>agent</th><th>epoch</th><th>time</th></tr></thead><tbody>");

	for (size_t i = 0; r >= 0 && i < n; i++) {
		const sbx_sweep_record *e = &recs[i];
		_cleanup_free_ char *run = NULL;

		if (e->run_id && !strchr(e->run_id, '/') &&
		    asprintf(&run, "%s%sruns/%s", rel, *rel ? "/" : "", e->run_id) < 0)
			return -ENOMEM;
		r = sbx_buf_printf(out, "<tr><td>%zu.%u</td><td>", e->episode, e->attempt);
		r = r < 0 ? r : sbx_view__put_status(out, sbx_run_status_name(e->status));
		r = r < 0 ? r : sbx_buf_puts(out, "</td><td class=\"num\">");
		r = r < 0 ? r : pct(out, e->graded ? e->score : NAN);
		r = r < 0 ? r : sbx_buf_puts(out, "</td><td>");
		if (r >= 0 && run) {
			r = sbx_buf_puts(out, "<a href=\"");
			r = r < 0 ? r : sbx_view__href(ctx, out, 'r', root, run);
			r = r < 0 ? r : sbx_buf_puts(out, "\">");
			r = r < 0 ? r : sbx_html_escape(out, e->run_id);
			r = r < 0 ? r : sbx_buf_puts(out, "</a>");
		}
		if (r >= 0 && e->error) {
			r = sbx_buf_puts(out, " <span class=\"errtext\">");
			r = r < 0 ? r : sbx_html_escape(out, e->error);
			r = r < 0 ? r : sbx_buf_puts(out, "</span>");
		}
		r = r < 0 ? r : sbx_buf_puts(out, "</td><td>");
		r = r < 0 ? r : sbx_html_escape(out, e->task);
		r = r < 0 ? r : sbx_buf_puts(out, "</td><td>");
		r = r < 0 ? r : sbx_html_escape(out, e->agent);
		r = r < 0 ? r
			  : sbx_buf_printf(out, "</td><td class=\"num\">%u</td><td class=\"num\">",
					   e->epoch + 1);
		r = r < 0 ? r : sbx_view__put_ms(out, e->total_ms);
		r = r < 0 ? r : sbx_buf_puts(out, "</td></tr>\n");
	}
	return r < 0 ? r : sbx_buf_puts(out, "</tbody></table>");
}

int sbx_view__sweep_load(int rootfd, const char *rel, sbx_sweep_plan **plan_out,
			 sbx_sweep_record **recs_out, size_t *n_out, sbx_error *err)
{
	_cleanup_free_ char *path = sbx_view__join(rel, "sweep.json"), *text = NULL;
	sbx_sweep_plan *plan = NULL;
	size_t len;
	int r;

	if (!path)
		return -ENOMEM;
	r = sbx_view_read(rootfd, path, SBX_VIEW_JSON_MAX, &text, &len, err);
	if (r < 0)
		return r;
	r = sbx_sweep_plan_parse(text, len, &plan, err);
	if (r < 0)
		return r;
	r = sbx_view__load_records(rootfd, rel, recs_out, n_out, err);
	if (r < 0) {
		sbx_sweep_plan_free(plan);
		return r;
	}
	*plan_out = plan;
	return 0;
}

void sbx_view__records_free(sbx_sweep_record *recs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbx_sweep_record_clear(&recs[i]);
	free(recs);
}

int sbx_view__summary_table(sbx_buf *out, const sbx_sweep_plan *plan, const sbx_sweep_summary *sum,
			    const char *id)
{
	int r = sbx_buf_printf(out, "<table class=\"list\" id=\"%s\"><thead><tr><th>", id);

	r = r < 0 ? r
		  : sbx_buf_puts(out, "task</th><th>agent</th><th>done</th><th>pass rate [95% "
				      "CI]</th><th>mean score [95% CI]</th>");
	for (size_t k = 0; r >= 0 && k < plan->n_pass_at; k++)
		r = sbx_buf_printf(out, "<th>pass@%u</th>", plan->pass_at[k]);
	r = r < 0 ? r
		  : sbx_buf_puts(out, "<th>errors</th><th>infra</th><th>agent p50 / p95</th>"
				      "<th>overhead p50</th></tr></thead><tbody>");
	for (size_t i = 0; r >= 0 && i < sum->n_cells; i++)
		r = cell_row(out, plan, &sum->cells[i]);
	for (size_t i = 0; r >= 0 && plan->n_tasks > 1 && i < plan->n_agents; i++)
		r = cell_row(out, plan, &sum->agents[i]);
	r = r < 0 ? r : cell_row(out, plan, &sum->overall);
	return r < 0 ? r : sbx_buf_puts(out, "</tbody></table>");
}

/* A form naming every other sweep: compare this one with it (works without JS). */
static int compare_form(const sbx_view_ctx *ctx, size_t root, const char *rel, sbx_buf *out)
{
	sbx_view_entry *v = NULL;
	size_t n = 0, others = 0, mark;
	int r;

	if (ctx->report || sbx_view_scan(ctx->rootfds, ctx->n_roots, 500, &v, &n, NULL) < 0)
		return 0;
	mark = out->len;
	r = sbx_buf_puts(out, "<form class=\"compare\" method=\"get\" action=\"");
	r = r < 0 ? r : sbx_view__href(ctx, out, 'c', root, rel);
	r = r < 0 ? r : sbx_buf_puts(out, "\">compare with <select name=\"with\">");
	for (size_t i = 0; r >= 0 && i < n; i++) {
		_cleanup_(sbx_buf_free) sbx_buf val = SBX_BUF_INIT(8192);

		if (v[i].kind != SBX_VIEW_SWEEP ||
		    (v[i].root == root && strcmp(v[i].rel, rel) == 0))
			continue;
		others++;
		r = sbx_buf_printf(&val, "%zu/%s", v[i].root, v[i].rel);
		r = r < 0 ? r : sbx_buf_puts(out, "<option value=\"");
		r = r < 0 ? r : sbx_html_escape(out, sbx_buf_str(&val));
		r = r < 0 ? r : sbx_buf_puts(out, "\">");
		r = r < 0 ? r : sbx_html_escape(out, v[i].id);
		r = r < 0 ? r : sbx_buf_puts(out, "</option>");
	}
	r = r < 0 ? r : sbx_buf_puts(out, "</select> <button>compare</button></form>");
	sbx_view_entries_free(v, n);
	if (r >= 0 && !others) { /* nothing to compare with: no form */
		out->len = mark;
		out->data[mark] = 0;
	}
	return r;
}

int sbx_view_page_sweep(const sbx_view_ctx *ctx, size_t root, const char *rel, sbx_buf *out,
			sbx_error *err)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *plan = NULL;
	_cleanup_(sbx_sweep_summary_freep) sbx_sweep_summary *sum = NULL;
	sbx_sweep_record *recs = NULL;
	sbx_view_entry e = {0};
	size_t n = 0;
	int r;

	if (root >= ctx->n_roots)
		return sbx_error_set(err, -ENOENT, "no such sweep");
	r = sbx_view_entry_load(ctx->rootfds[root], root, rel, &e, err);
	if (r < 0 || e.kind != SBX_VIEW_SWEEP) {
		sbx_view_entry_clear(&e);
		return sbx_error_set(err, -ENOENT, "'%s': not a sweep directory", rel);
	}
	r = sbx_view__sweep_load(ctx->rootfds[root], rel, &plan, &recs, &n, err);
	if (r >= 0)
		r = sbx_sweep_summarise(plan, recs, n, &sum, err);
	if (r < 0) {
		sbx_view_entry_clear(&e);
		sbx_view__records_free(recs, n);
		return r;
	}
	r = sbx_view__entry_begin(ctx, out, &e, root, rel);
	r = r < 0 ? r : sbx_buf_puts(out, "\"><h1>sweep <span id=\"sweep-id\">");
	r = r < 0 ? r : sbx_html_escape(out, e.id);
	r = r < 0 ? r
		  : sbx_buf_printf(out,
				   "</span></h1><p class=\"why\">%u of %u episodes done, "
				   "%u epochs; ",
				   sum->overall.done, sum->overall.planned, plan->epochs);
	r = r < 0 ? r : sbx_html_escape(out, e.date);
	r = r < 0 ? r : sbx_buf_puts(out, "; image ");
	r = r < 0 ? r : sbx_html_escape(out, plan->image_id ? plan->image_id : "?");
	r = r < 0 ? r : sbx_buf_puts(out, "</p>");
	r = r < 0 ? r : compare_form(ctx, root, rel, out);
	r = r < 0 ? r : sbx_view__summary_table(out, plan, sum, "summary");
	r = r < 0 ? r : reasons(out, sum);
	r = r < 0 ? r : bars(out, sum);
	r = r < 0 ? r : histogram(out, recs, n);
	r = r < 0 ? r : episodes(ctx, root, rel, out, recs, n);
	r = r < 0 ? r : sbx_buf_puts(out, "</section>");
	if (r >= 0 && !ctx->report)
		r = sbx_view__page_end(ctx, out);
	sbx_view_entry_clear(&e);
	sbx_view__records_free(recs, n);
	return r < 0 ? sbx_error_set(err, r, "'%s': the sweep page: %s", rel, strerror(-r)) : 0;
}
