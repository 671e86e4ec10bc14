/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "view-internal.h"

#define INDEX_MAX 5000 /* entries listed */

static bool keep(const char *field, const char *filter)
{
	return !filter || !*filter || (field && strstr(field, filter));
}

static int filter_input(sbx_buf *out, const char *name, const char *value)
{
	int r = sbx_buf_printf(out, "<label>%s <input name=\"%s\" value=\"", name, name);

	r = r < 0 ? r : sbx_html_escape(out, value ? value : "");
	return r < 0 ? r : sbx_buf_puts(out, "\"></label> ");
}

static int row(const sbx_view_ctx *ctx, const sbx_view_entry *e, sbx_buf *out)
{
	char kind = e->kind == SBX_VIEW_SWEEP ? 's' : 'r';
	int r;

	r = sbx_view__put_escaped(out, "<tr data-task=\"", e->task ? e->task : "");
	r = r < 0 ? r : sbx_view__put_escaped(out, "\" data-agent=\"", e->agent ? e->agent : "");
	r = r < 0 ? r : sbx_view__put_escaped(out, "\" data-status=\"", e->status);
	r = r < 0 ? r : sbx_buf_puts(out, "\"><td>");
	r = r < 0 ? r : sbx_view__put_status(out, e->kind == SBX_VIEW_SWEEP ? "sweep" : e->status);
	if (r >= 0 && e->kind == SBX_VIEW_SWEEP)
		r = sbx_view__put_escaped(out, " ", e->status + strlen("sweep "));
	r = r < 0 ? r : sbx_buf_puts(out, "</td><td class=\"num\">");
	if (r >= 0)
		r = isnan(e->score) ? sbx_buf_puts(out, "—")
				    : sbx_buf_printf(out, "%.1f%%", e->score * 100);
	r = r < 0 ? r : sbx_buf_puts(out, "</td><td><a href=\"");
	r = r < 0 ? r : sbx_view__href(ctx, out, kind, e->root, e->rel);
	r = r < 0 ? r : sbx_view__put_escaped(out, "\">", e->id);
	r = r < 0 ? r : sbx_view__put_escaped(out, "</a></td><td>", e->task ? e->task : "—");
	r = r < 0 ? r : sbx_view__put_escaped(out, "</td><td>", e->agent ? e->agent : "—");
	r = r < 0 ? r : sbx_view__put_escaped(out, "</td><td>", e->model ? e->model : "");
	r = r < 0 ? r : sbx_buf_puts(out, "</td><td class=\"num\">");
	r = r < 0 ? r : sbx_view__put_ms(out, e->total_ms);
	r = r < 0 ? r : sbx_view__put_escaped(out, "</td><td>", e->date);
	return r < 0 ? r : sbx_buf_puts(out, "</td></tr>\n");
}

int sbx_view_page_index(const sbx_view_ctx *ctx, const char *filter_task, const char *filter_agent,
			const char *filter_status, sbx_buf *out, sbx_error *err)
{
	sbx_view_entry *v = NULL;
	size_t n = 0, shown = 0;
	int r;

	r = sbx_view_scan(ctx->rootfds, ctx->n_roots, INDEX_MAX, &v, &n, err);
	if (r < 0)
		return r;
	r = sbx_view__page_begin(ctx, out, "runs and sweeps", "");
	r = r < 0 ? r : sbx_buf_puts(out, "<h1>Runs and sweeps</h1><p class=\"dim\">");
	for (size_t i = 0; r >= 0 && i < ctx->n_roots; i++) {
		r = sbx_buf_puts(out, i ? ", " : "from ");
		r = r < 0 ? r : sbx_buf_puts(out, "<code>");
		r = r < 0 ? r : sbx_html_escape(out, ctx->root_names[i]);
		r = r < 0 ? r : sbx_buf_puts(out, "</code>");
	}
	/* A plain GET form: filtering works with JavaScript off; the script filters as you type. */
	r = r < 0 ? r : sbx_buf_puts(out, "</p><form id=\"filter\" method=\"get\">");
	r = r < 0 ? r : filter_input(out, "task", filter_task);
	r = r < 0 ? r : filter_input(out, "agent", filter_agent);
	r = r < 0 ? r : filter_input(out, "status", filter_status);
	r = r < 0 ? r
		  : sbx_buf_puts(out, "<button>filter</button></form>"
				      "<table id=\"runs\" class=\"list\"><thead><tr><th>status</th>"
				      "<th>score</th><th>run</th><th>task</th><th>agent</th>"
				      "<th>model</th><th>duration</th><th>date</th></tr></thead>"
				      "<tbody>\n");
	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (!keep(v[i].task, filter_task) || !keep(v[i].agent, filter_agent) ||
		    !keep(v[i].status, filter_status))
			continue;
		r = row(ctx, &v[i], out);
		shown++;
	}
	r = r < 0 ? r
		  : sbx_buf_printf(out,
				   "</tbody></table><p class=\"dim\" id=\"count\">%zu of %zu</p>",
				   shown, n);
	r = r < 0 ? r : sbx_view__page_end(ctx, out);
	sbx_view_entries_free(v, n);
	return r < 0 ? sbx_error_set(err, r, "the runs list: %s", strerror(-r)) : 0;
}
