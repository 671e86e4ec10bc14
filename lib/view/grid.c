/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/sheet.h"
#include "sbx/sheet_ref.h"
#include "sbx/task.h"
#include "view-internal.h"

#define BOOK_MAX       (64u << 20)
#define SHEETS_MAX     4  /* sheets drawn per case */
#define MISMATCHES_MAX 20 /* listed under the grid */

SBX_DEFINE_CLEANUP(sbx_task, sbx_task_free)

/* Opens rel beneath rootfd as a workbook: read confined, parsed from memory. */
static sbx_book *open_book(int rootfd, const char *rel)
{
	_cleanup_free_ char *data = NULL;
	sbx_book *b = NULL;
	size_t len;

	if (sbx_view_read(rootfd, rel, BOOK_MAX, &data, &len, NULL) < 0)
		return NULL;
	if (sbx_book_open_memory(data, len, rel, NULL, &b, NULL) < 0)
		return NULL;
	return b;
}

static void col_name(uint32_t col, char buf[8])
{
	char tmp[8];
	size_t n = 0, i = 0;

	col++;
	while (col && n < sizeof(tmp)) {
		tmp[n++] = (char)('A' + (col - 1) % 26);
		col = (col - 1) / 26;
	}
	while (n)
		buf[i++] = tmp[--n];
	buf[i] = 0;
}

static int put_cell_text(sbx_buf *out, const sbx_cell *c)
{
	_cleanup_(sbx_buf_free) sbx_buf t = SBX_BUF_INIT(SBX_VIEW_TEXT_MAX);
	int r = sbx_cell_to_text(c, &t);

	return r < 0 ? sbx_buf_puts(out, "…") : sbx_html_escape(out, sbx_buf_str(&t));
}

static int put_json_text(sbx_buf *out, const cJSON *v)
{
	_cleanup_free_ char *s = NULL;

	if (cJSON_IsString(v))
		return sbx_html_escape(out, v->valuestring);
	s = v ? sbx_json_print(v) : strdup("(empty)");
	return sbx_html_escape(out, s ? s : "?");
}

static const cJSON *find_mismatch(const cJSON *mismatches, const char *addr)
{
	const cJSON *m;

	cJSON_ArrayForEach (m, mismatches)
		if (strcmp(sbx_json_get_string(m, "cell", ""), addr) == 0)
			return m;
	return NULL;
}

/* Is (row, col) of sheet in one of the case's ranges (no ranges: every cell)? */
static bool in_ranges(const sbx_grading_case *gc, const char *sheet, uint32_t row, uint32_t col)
{
	if (!gc || !gc->opts.n_ranges)
		return true;
	for (size_t i = 0; i < gc->opts.n_ranges; i++) {
		const sbx_grading_range *g = &gc->opts.ranges[i];

		if ((!g->sheet || strcmp(g->sheet, sheet) == 0) && row >= g->first_row &&
		    row <= g->last_row && col >= g->first_col && col <= g->last_col)
			return true;
	}
	return false;
}

static int sheet_grid(sbx_buf *out, const sbx_sheet *got, const sbx_sheet *want,
		      const sbx_grading_case *gc, const cJSON *mismatches)
{
	const char *name = sbx_sheet_name(want ? want : got);
	uint32_t rows = 0, cols = 0, r2 = 0, c2 = 0;
	bool skip_empty = gc ? gc->opts.skip_empty : true;
	int r;

	if (got)
		sbx_sheet_used_range(got, &rows, &cols);
	if (want)
		sbx_sheet_used_range(want, &r2, &c2);
	rows = rows > r2 ? rows : r2;
	cols = cols > c2 ? cols : c2;
	r = sbx_buf_puts(out, "<div class=\"gridwrap\"><table class=\"grid\"><caption>");
	r = r < 0 ? r : sbx_html_escape(out, name);
	if (r >= 0 && (rows > SBX_VIEW_GRID_ROWS || cols > SBX_VIEW_GRID_COLS))
		r = sbx_buf_printf(out, " (first %u × %u of %u × %u)",
				   rows > SBX_VIEW_GRID_ROWS ? SBX_VIEW_GRID_ROWS : rows,
				   cols > SBX_VIEW_GRID_COLS ? SBX_VIEW_GRID_COLS : cols, rows,
				   cols);
	r = r < 0 ? r : sbx_buf_puts(out, "</caption><tr><th></th>");
	if (rows > SBX_VIEW_GRID_ROWS)
		rows = SBX_VIEW_GRID_ROWS;
	if (cols > SBX_VIEW_GRID_COLS)
		cols = SBX_VIEW_GRID_COLS;
	for (uint32_t c = 0; r >= 0 && c < cols; c++) {
		char cn[8];

		col_name(c, cn);
		r = sbx_buf_printf(out, "<th>%s</th>", cn);
	}
	r = r < 0 ? r : sbx_buf_puts(out, "</tr>");
	for (uint32_t row = 0; r >= 0 && row < rows; row++) {
		r = sbx_buf_printf(out, "<tr><th>%u</th>", row + 1);
		for (uint32_t col = 0; r >= 0 && col < cols; col++) {
			_cleanup_(sbx_buf_free) sbx_buf addr = SBX_BUF_INIT(512);
			sbx_cell g = SBX_CELL_INIT, w = SBX_CELL_INIT;
			const cJSON *m;
			bool graded;
			char cn[8];

			col_name(col, cn);
			if (got)
				sbx_sheet_get(got, row, col, &g);
			if (want)
				sbx_sheet_get(want, row, col, &w);
			if (sbx_buf_printf(&addr, "%s!%s%u", name, cn, row + 1) < 0)
				return -ENOMEM;
			m = find_mismatch(mismatches, sbx_buf_str(&addr));
			graded = m || (want && in_ranges(gc, name, row, col) &&
				       (!skip_empty || !sbx_cell_is_empty(&w)));
			r = sbx_buf_printf(out, "<td class=\"%s\" data-cell=\"",
					   m	    ? "bad"
					   : graded ? "ok"
						    : "");
			r = r < 0 ? r : sbx_html_escape(out, sbx_buf_str(&addr));
			r = r < 0 ? r : sbx_buf_puts(out, "\"");
			if (r >= 0 && m) {
				r = sbx_buf_puts(out, " title=\"expected ");
				r = r < 0 ? r : put_json_text(out, sbx_json_get(m, "expected"));
				r = r < 0 ? r : sbx_buf_puts(out, ", got ");
				r = r < 0 ? r : put_json_text(out, sbx_json_get(m, "got"));
				r = r < 0 ? r : sbx_buf_puts(out, " (");
				r = r < 0 ? r
					  : sbx_html_escape(out,
							    sbx_json_get_string(m, "reason", "?"));
				r = r < 0 ? r : sbx_buf_puts(out, ")\"");
			} else if (r >= 0 && graded) {
				r = sbx_buf_puts(out, " title=\"expected ");
				r = r < 0 ? r : put_cell_text(out, &w);
				r = r < 0 ? r : sbx_buf_puts(out, ", got ");
				r = r < 0 ? r : put_cell_text(out, &g);
				r = r < 0 ? r : sbx_buf_puts(out, "\"");
			}
			r = r < 0 ? r : sbx_buf_puts(out, ">");
			r = r < 0 ? r : put_cell_text(out, &g);
			r = r < 0 ? r : sbx_buf_puts(out, "</td>");
		}
		r = r < 0 ? r : sbx_buf_puts(out, "</tr>\n");
	}
	return r < 0 ? r : sbx_buf_puts(out, "</table></div>");
}

static int mismatch_list(sbx_buf *out, const cJSON *cs)
{
	const cJSON *mm = sbx_json_get(cs, "mismatches"), *m;
	unsigned shown = 0;
	int r;

	if (!cJSON_GetArraySize(mm))
		return 0;
	r = sbx_buf_puts(out, "<table class=\"list mism\"><thead><tr><th>cell</th><th>reason</th>"
			      "<th>expected</th><th>got</th></tr></thead><tbody>");
	cJSON_ArrayForEach (m, mm) {
		if (r < 0 || shown++ >= MISMATCHES_MAX)
			break;
		r = sbx_buf_puts(out, "<tr><td>");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(m, "cell", "?"));
		r = r < 0 ? r : sbx_buf_puts(out, "</td><td>");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(m, "reason", "?"));
		r = r < 0 ? r : sbx_buf_puts(out, "</td><td>");
		r = r < 0 ? r : put_json_text(out, sbx_json_get(m, "expected"));
		r = r < 0 ? r : sbx_buf_puts(out, "</td><td class=\"errtext\">");
		r = r < 0 ? r : put_json_text(out, sbx_json_get(m, "got"));
		r = r < 0 ? r : sbx_buf_puts(out, "</td></tr>");
	}
	return r < 0 ? r
		     : sbx_buf_printf(out, "</tbody></table><p class=\"dim\">%.0f mismatches%s</p>",
				      sbx_json_get_number(cs, "mismatches_total", 0),
				      shown > MISMATCHES_MAX ? " (first ones listed)" : "");
}

/* The task as it was run (runs/<id>/task/task.yaml), for the ranges each case grades. */
static sbx_task *load_task(int rootfd, const char *rel)
{
	_cleanup_free_ char *path = sbx_view__join(rel, "task/task.yaml"), *text = NULL;
	sbx_task *t = NULL;
	size_t len;

	if (!path || sbx_view_read(rootfd, path, SBX_VIEW_JSON_MAX, &text, &len, NULL) < 0)
		return NULL;
	if (sbx_task_parse("task.yaml", NULL, text, len, &t, NULL) < 0)
		return NULL;
	return t;
}

int sbx_view__grid(const sbx_view_ctx *ctx, int rootfd, const char *rel, const cJSON *grade,
		   sbx_buf *out)
{
	_cleanup_(sbx_task_freep) sbx_task *task = load_task(rootfd, rel);
	const cJSON *cs;
	size_t i = 0;
	int r;

	/* grade.json is the run directory's, so anyone's: its text is escaped like the rest. */
	r = sbx_buf_puts(out, "<p>");
	r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(grade, "status", "?"));
	r = r < 0 ? r
		  : sbx_buf_printf(out, ": %.0f of %.0f cells matched</p>",
				   sbx_json_get_number(grade, "matched", 0),
				   sbx_json_get_number(grade, "graded", 0));
	cJSON_ArrayForEach (cs, sbx_json_get(grade, "cases")) {
		_cleanup_(sbx_book_freep) sbx_book *got = NULL;
		_cleanup_(sbx_book_freep) sbx_book *want = NULL;
		_cleanup_free_ char *out_rel = NULL, *oracle_rel = NULL;
		const char *output = sbx_json_get_string(cs, "output", NULL);
		const char *oracle = sbx_json_get_string(cs, "oracle", NULL);
		const sbx_grading_case *gc =
			task && i < task->grading.n_cases ? &task->grading.cases[i] : NULL;
		const cJSON *mm = sbx_json_get(cs, "mismatches");
		size_t drawn = 0;

		i++;
		if (r < 0)
			break;
		r = sbx_buf_puts(out, "<h3>");
		r = r < 0 ? r : sbx_view__put_status(out, sbx_json_get_string(cs, "status", "?"));
		r = r < 0 ? r : sbx_buf_puts(out, " ");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(cs, "name", "?"));
		r = r < 0 ? r
			  : sbx_buf_printf(out, " <span class=\"dim\">%.0f/%.0f%s</span></h3>",
					   sbx_json_get_number(cs, "matched", 0),
					   sbx_json_get_number(cs, "graded", 0),
					   sbx_json_get_bool(cs, "gate", false) ? ", gate" : "");
		if (r >= 0 && sbx_json_get_string(cs, "failure", NULL)) {
			r = sbx_buf_puts(out, "<p class=\"err\">");
			r = r < 0 ? r
				  : sbx_html_escape(out, sbx_json_get_string(cs, "failure", ""));
			r = r < 0 ? r : sbx_buf_puts(out, "</p>");
		}
		r = r < 0 ? r : mismatch_list(out, cs);
		if (r < 0 || !output)
			continue;
		/* Only files inside the run directory: the oracle path in grade.json is the host's.
		 */
		if (asprintf(&out_rel, "%s%soutputs/%s", rel, *rel ? "/" : "", output) < 0)
			return -ENOMEM;
		got = open_book(rootfd, out_rel);
		if (oracle) {
			const char *base = strrchr(oracle, '/');

			if (asprintf(&oracle_rel, "%s%stask/oracle/%s", rel, *rel ? "/" : "",
				     base ? base + 1 : oracle) < 0)
				return -ENOMEM;
			want = open_book(rootfd, oracle_rel);
		}
		if (!got && !want) {
			r = sbx_buf_puts(out, "<p class=\"dim\">the output cannot be read</p>");
			continue;
		}
		for (size_t s = 0; r >= 0 && s < sbx_book_sheet_count(want ? want : got); s++) {
			const sbx_sheet *ws = want ? sbx_book_sheet(want, s) : NULL;
			const sbx_sheet *gs = got ? (ws ? sbx_book_find(got, sbx_sheet_name(ws))
							: sbx_book_sheet(got, s))
						  : NULL;

			/* A CSV's one sheet is named after its file: pair the only sheets. */
			if (!gs && got && sbx_book_sheet_count(got) == 1 &&
			    sbx_book_sheet_count(want) == 1)
				gs = sbx_book_sheet(got, 0);

			if (drawn++ >= SHEETS_MAX)
				break;
			r = sheet_grid(out, gs, ws, gc, mm);
		}
	}
	(void)ctx;
	return r;
}
