/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/sweep.h"
#include "view-internal.h"

typedef struct side {
	sbx_sweep_plan *plan;
	sbx_sweep_record *recs;
	size_t n;
	sbx_sweep_summary *sum;
	sbx_view_entry e;
} side;

static void side_clear(side *s)
{
	sbx_sweep_summary_free(s->sum);
	sbx_view__records_free(s->recs, s->n);
	sbx_sweep_plan_free(s->plan);
	sbx_view_entry_clear(&s->e);
}

static int side_load(const sbx_view_ctx *ctx, size_t root, const char *rel, side *s, sbx_error *err)
{
	int r;

	if (root >= ctx->n_roots)
		return sbx_error_set(err, -ENOENT, "no such sweep");
	r = sbx_view_entry_load(ctx->rootfds[root], root, rel, &s->e, err);
	if (r < 0 || s->e.kind != SBX_VIEW_SWEEP)
		return sbx_error_set(err, -ENOENT, "'%s': not a sweep directory", rel);
	r = sbx_view__sweep_load(ctx->rootfds[root], rel, &s->plan, &s->recs, &s->n, err);
	return r < 0 ? r : sbx_sweep_summarise(s->plan, s->recs, s->n, &s->sum, err);
}

static int paired_row(sbx_buf *out, const cJSON *row)
{
	const char *task = sbx_json_get_string(row, "task", "(overall)");
	double p = sbx_json_get_number(row, "p_value", NAN);
	int r;

	r = sbx_buf_puts(out, "<tr><td>");
	r = r < 0 ? r : sbx_html_escape(out, task);
	r = r < 0 ? r
		  : sbx_buf_printf(out,
				   "</td><td class=\"num\">%.0f</td><td class=\"num\">%.0f</td><td "
				   "class=\"num\">%.0f</td><td class=\"num\">%.0f / %.0f</td><td "
				   "class=\"num%s\">%.3g</td><td class=\"num\">%+.3f <span "
				   "class=\"dim\">[%+.3f, %+.3f]</span></td></tr>",
				   sbx_json_get_number(row, "pairs", 0),
				   sbx_json_get_number(row, "a_passed", 0),
				   sbx_json_get_number(row, "b_passed", 0),
				   sbx_json_get_number(row, "only_a_passed", 0),
				   sbx_json_get_number(row, "only_b_passed", 0),
				   p < 0.05 ? " errtext" : "", p,
				   sbx_json_get_number(row, "score_diff", NAN),
				   sbx_json_get_number(row, "score_diff_lo", NAN),
				   sbx_json_get_number(row, "score_diff_hi", NAN));
	return r;
}

int sbx_view_page_compare(const sbx_view_ctx *ctx, size_t root_a, const char *rel_a, size_t root_b,
			  const char *rel_b, sbx_buf *out, sbx_error *err)
{
	side a = {0}, b = {0};
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ cJSON *cmp = NULL;
	const cJSON *row;
	int r;

	r = side_load(ctx, root_a, rel_a, &a, err);
	r = r < 0 ? r : side_load(ctx, root_b, rel_b, &b, err);
	r = r < 0 ? r
		  : sbx_sweep_compare(a.plan, a.recs, a.n, b.plan, b.recs, b.n, true, &text, err);
	r = r < 0 ? r : sbx_json_parse(text, strlen(text), &cmp, err);
	if (r < 0)
		goto done;
	r = sbx_view__page_begin(ctx, out, "compare", NULL);
	r = r < 0 ? r : sbx_buf_puts(out, "<h1>compare <a href=\"");
	r = r < 0 ? r : sbx_view__href(ctx, out, 's', root_a, rel_a);
	r = r < 0 ? r : sbx_buf_puts(out, "\">A ");
	r = r < 0 ? r : sbx_html_escape(out, a.e.id);
	r = r < 0 ? r : sbx_buf_puts(out, "</a> with <a href=\"");
	r = r < 0 ? r : sbx_view__href(ctx, out, 's', root_b, rel_b);
	r = r < 0 ? r : sbx_buf_puts(out, "\">B ");
	r = r < 0 ? r : sbx_html_escape(out, b.e.id);
	r = r < 0 ? r : sbx_buf_puts(out, "</a></h1><p class=\"why\">paired by ");
	r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(cmp, "pairing", "?"));
	r = r < 0 ? r
		  : sbx_buf_puts(out,
				 "; p: the exact sign test on the discordant pairs; score "
				 "difference B − A with a paired bootstrap 95% interval</p>"
				 "<table class=\"list\" id=\"paired\"><thead><tr><th>task</th>"
				 "<th>pairs</th><th>A passed</th><th>B passed</th><th>only A / "
				 "only B</th><th>p</th><th>score B − A</th></tr></thead><tbody>");
	cJSON_ArrayForEach (row, sbx_json_get(cmp, "tasks"))
		if (r >= 0)
			r = paired_row(out, row);
	r = r < 0 ? r : paired_row(out, sbx_json_get(cmp, "overall"));
	r = r < 0 ? r : sbx_buf_puts(out, "</tbody></table><div class=\"cols\"><div><h2>A</h2>");
	r = r < 0 ? r : sbx_view__summary_table(out, a.plan, a.sum, "summary-a");
	r = r < 0 ? r : sbx_buf_puts(out, "</div><div><h2>B</h2>");
	r = r < 0 ? r : sbx_view__summary_table(out, b.plan, b.sum, "summary-b");
	r = r < 0 ? r : sbx_buf_puts(out, "</div></div>");
	r = r < 0 ? r : sbx_view__page_end(ctx, out);
	if (r < 0)
		sbx_error_set(err, r, "the compare page: %s", strerror(-r));
done:
	side_clear(&a);
	side_clear(&b);
	return r;
}
