/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "view-internal.h"

/* connection.json holds a live run's relay token: a key to the sandbox, never shown. */
static bool is_secret(const char *name)
{
	return strcmp(name, "connection.json") == 0;
}

/* A table of an object's scalar members (nested objects: one level, "a.b"). */
static int kv_table(sbx_buf *out, const cJSON *obj, const char *prefix)
{
	const cJSON *it;
	int r = 0;

	if (!prefix && (r = sbx_buf_puts(out, "<table class=\"kv\">")) < 0)
		return r;
	cJSON_ArrayForEach (it, obj) {
		_cleanup_free_ char *text = NULL;

		if (cJSON_IsObject(it) && !prefix) {
			r = kv_table(out, it, it->string);
			if (r < 0)
				return r;
			continue;
		}
		text = cJSON_IsString(it) ? strdup(it->valuestring) : sbx_json_print(it);
		r = sbx_buf_puts(out, "<tr><th>");
		if (r >= 0 && prefix) {
			r = sbx_html_escape(out, prefix);
			r = r < 0 ? r : sbx_buf_putc(out, '.');
		}
		r = r < 0 ? r : sbx_html_escape(out, it->string);
		r = r < 0 ? r : sbx_buf_puts(out, "</th><td>");
		r = r < 0 ? r : sbx_html_escape(out, text ? text : "?");
		r = r < 0 ? r : sbx_buf_puts(out, "</td></tr>");
		if (r < 0)
			return r;
	}
	return prefix ? 0 : sbx_buf_puts(out, "</table>");
}

/*
 * The phases to scale. copy_in and ready overlap (files go in while the
 * server starts), so ready is drawn from where copy_in starts.
 */
static int timeline(sbx_buf *out, const cJSON *timings)
{
	static const char *const phases[] = {"create", "start",	   "copy_in", "ready",
					     "agent",  "copy_out", "grade",   "remove"};
	double at = 0, total = sbx_json_get_number(timings, "total", NAN), start[8], len[8];
	int r;

	if (!cJSON_IsObject(timings))
		return 0;
	for (size_t i = 0; i < SBX_ELEMENTSOF(phases); i++) {
		len[i] = sbx_json_get_number(timings, phases[i], 0);
		if (len[i] < 0 || isnan(len[i]))
			len[i] = 0;
		if (i == 3) {
			start[i] = start[2];
			at = fmax(start[2] + len[2], start[3] + len[3]);
			continue;
		}
		start[i] = at;
		at += len[i];
	}
	if (isnan(total) || total < at)
		total = at;
	if (total <= 0)
		return 0;
	r = sbx_buf_puts(out, "<h2>Timeline</h2><svg class=\"timeline\" viewBox=\"0 0 1000 "
			      "190\" role=\"img\" aria-label=\"phase timeline\">");
	for (size_t i = 0; r >= 0 && i < SBX_ELEMENTSOF(phases); i++) {
		double x = start[i] / total * 800, w = fmax(len[i] / total * 800, 1);

		r = sbx_buf_printf(out,
				   "<text x=\"0\" y=\"%zu\">%s</text><rect class=\"ph ph-%s\" "
				   "x=\"%.1f\" y=\"%zu\" width=\"%.1f\" height=\"14\"><title>%s "
				   "%.1f ms</title></rect><text x=\"%.1f\" y=\"%zu\" "
				   "class=\"dim\">%.0f ms</text>",
				   i * 22 + 16, phases[i], phases[i], 80 + x, i * 22 + 4, w,
				   phases[i], len[i], 80 + x + w + 4, i * 22 + 16, len[i]);
	}
	return r < 0 ? r : sbx_buf_printf(out, "</svg><p class=\"dim\">total %.0f ms</p>", total);
}

/* Every file of the run directory, linked (reports name them only); subdirectories nested. */
static int raw_files(const sbx_view_ctx *ctx, size_t root, const char *rel, unsigned depth,
		     sbx_buf *out)
{
	int dfd = sbx_view_open(ctx->rootfds[root], rel, O_RDONLY | O_DIRECTORY, NULL);
	unsigned listed = 0;
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	r = sbx_buf_puts(out, depth ? "<ul>" : "<h2>Files</h2><ul class=\"files\">");
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_free_ char *path = NULL;
		bool dir = de->d_type == DT_DIR;

		if (de->d_name[0] == '.' || is_secret(de->d_name))
			continue;
		if (listed++ >= 200) {
			r = sbx_buf_puts(out, "<li>…</li>");
			break;
		}
		path = sbx_view__join(rel, de->d_name);
		if (!path) {
			r = -ENOMEM;
			break;
		}
		r = sbx_buf_puts(out, "<li>");
		if (r >= 0 && !ctx->report && !dir) {
			r = sbx_buf_puts(out, "<a href=\"");
			r = r < 0 ? r : sbx_view__href(ctx, out, 'f', root, path);
			r = r < 0 ? r : sbx_buf_puts(out, "\">");
		}
		r = r < 0 ? r : sbx_html_escape(out, de->d_name);
		r = r < 0 ? r : sbx_buf_puts(out, dir ? "/" : ctx->report ? "" : "</a>");
		if (r >= 0 && dir && depth < 2)
			r = raw_files(ctx, root, path, depth + 1, out);
		r = r < 0 ? r : sbx_buf_puts(out, "</li>");
	}
	closedir(d);
	return r < 0 ? r : sbx_buf_puts(out, "</ul>");
}

static int summary(sbx_buf *out, const cJSON *res, const char *id)
{
	const cJSON *agent = sbx_json_get(res, "agent"), *grade = sbx_json_get(res, "grade");
	const char *error = sbx_json_get_string(res, "error", NULL);
	const char *reason = sbx_json_get_string(res, "reason", NULL);
	int r;

	r = sbx_buf_puts(out, "<h1>");
	r = r < 0 ? r : sbx_view__put_status(out, sbx_json_get_string(res, "status", "running"));
	r = r < 0 ? r : sbx_buf_puts(out, " <span id=\"run-id\">");
	r = r < 0 ? r : sbx_html_escape(out, id);
	r = r < 0 ? r : sbx_buf_puts(out, "</span></h1>");
	/* Why it did not pass, first: the crash, the gate, the deadline, not a grid. */
	if (r >= 0 && reason) {
		r = sbx_buf_puts(out, "<p class=\"reason\" id=\"reason\">");
		r = r < 0 ? r : sbx_html_escape(out, reason);
		r = r < 0 ? r : sbx_buf_puts(out, "</p>");
	}
	r = r < 0 ? r : sbx_buf_puts(out, "<p class=\"why\">");
	if (r >= 0 && res) {
		r = sbx_buf_puts(out, "ended by <b>");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(res, "ended_by", "?"));
		r = r < 0 ? r : sbx_buf_puts(out, "</b>; task <b>");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(res, "task", "?"));
		r = r < 0 ? r : sbx_buf_puts(out, "</b>; agent <b>");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(agent, "kind", "?"));
		r = r < 0 ? r : sbx_buf_puts(out, "</b>");
		if (r >= 0 && sbx_json_get_string(agent, "model", NULL)) {
			r = sbx_buf_puts(out, " (model <b>");
			r = r < 0 ? r
				  : sbx_html_escape(out, sbx_json_get_string(agent, "model", ""));
			r = r < 0 ? r : sbx_buf_puts(out, "</b>)");
		}
		if (r >= 0 && sbx_json_get_bool(grade, "graded", false))
			r = sbx_buf_printf(out, "; score <b>%.2f%%</b> (%.0f/%.0f cells)",
					   sbx_json_get_number(res, "score", 0) * 100,
					   sbx_json_get_number(grade, "cells_matched", 0),
					   sbx_json_get_number(grade, "cells_graded", 0));
		r = r < 0 ? r : sbx_buf_puts(out, "; started ");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(res, "started_at", "?"));
	} else if (r >= 0)
		r = sbx_buf_puts(out, "still running: no result.json yet");
	r = r < 0 ? r : sbx_buf_puts(out, "</p>");
	if (r >= 0 && error) {
		r = sbx_buf_puts(out, "<p class=\"err\">");
		r = r < 0 ? r : sbx_html_escape(out, error);
		r = r < 0 ? r : sbx_buf_puts(out, "</p>");
	}
	return r;
}

/* serve --reuse: how many episodes the sandbox served before, the reset before, the one after. */
static int reuse_tables(sbx_buf *out, const cJSON *sandbox)
{
	const cJSON *reused = sbx_json_get(sandbox, "reused");
	int r;

	if (!cJSON_IsNumber(reused))
		return 0;
	r = sbx_buf_printf(out,
			   "<h2>Reuse</h2><table class=\"kv\"><tr><th>reused</th><td>%d</td></tr>",
			   (int)reused->valuedouble);
	/* "found" names paths inside the sandbox: kv_table escapes every value. */
	if (r >= 0 && sbx_json_get(sandbox, "reset_before_ms"))
		r = kv_table(out, sbx_json_get(sandbox, "reset_before_ms"), "reset_before_ms");
	if (r >= 0 && sbx_json_get(sandbox, "reset_after"))
		r = kv_table(out, sbx_json_get(sandbox, "reset_after"), "reset_after");
	return r < 0 ? r : sbx_buf_puts(out, "</table>");
}

/*
 * A Harbor task's verifier (result.json's "verifier"): its reward, exit, the
 * workdir it was given and its timings, then the tail of what test.sh printed.
 * All of it comes from the task's tests and the agent's workdir: every value
 * is escaped, as kv_table does.
 */
static int verifier(sbx_buf *out, const cJSON *v)
{
	const char *tail = sbx_json_get_string(v, "output_tail", NULL);
	_cleanup_json_ cJSON *rest = NULL;
	int r;

	if (!cJSON_IsObject(v))
		return 0;
	rest = cJSON_Duplicate(v, 1);
	if (!rest)
		return -ENOMEM;
	cJSON_DeleteItemFromObject(rest, "output_tail");
	r = sbx_buf_puts(out, "<h2>Verifier</h2>");
	r = r < 0 ? r : kv_table(out, rest, NULL);
	if (r >= 0 && tail && *tail) {
		r = sbx_buf_puts(out, "<h3>test.sh's output (tail)</h3><pre class=\"verifier\">");
		r = r < 0 ? r : sbx_html_escape(out, tail);
		r = r < 0 ? r : sbx_buf_puts(out, "</pre>");
	}
	return r;
}

int sbx_view_page_run(const sbx_view_ctx *ctx, size_t root, const char *rel, sbx_buf *out,
		      sbx_error *err)
{
	_cleanup_json_ cJSON *res = NULL, *grade = NULL;
	_cleanup_free_ char *shot = NULL;
	sbx_view_entry e;
	const cJSON *agent, *sandbox;
	int rootfd, r;

	if (root >= ctx->n_roots)
		return sbx_error_set(err, -ENOENT, "no such run");
	rootfd = ctx->rootfds[root];
	r = sbx_view_entry_load(rootfd, root, rel, &e, err);
	if (r < 0 || e.kind != SBX_VIEW_RUN) {
		if (r >= 0)
			sbx_view_entry_clear(&e);
		return sbx_error_set(err, -ENOENT, "'%s': not a run directory", rel);
	}
	res = sbx_view__load_json(rootfd, rel, "result.json", SBX_VIEW_JSON_MAX, NULL);
	grade = sbx_view__load_json(rootfd, rel, "grade.json", SBX_VIEW_JSON_MAX, NULL);
	agent = sbx_json_get(res, "agent");
	sandbox = sbx_json_get(res, "sandbox");

	r = sbx_view__entry_begin(ctx, out, &e, root, rel);
	r = r < 0 ? r : sbx_buf_puts(out, "\">");
	r = r < 0 ? r : summary(out, res, e.id);
	r = r < 0 ? r : timeline(out, sbx_json_get(res, "timings_ms"));
	if (r >= 0 && grade) {
		r = sbx_buf_puts(out, "<h2>Grading</h2>");
		r = r < 0 ? r : sbx_view__grid(ctx, rootfd, rel, grade, out);
	}
	r = r < 0 ? r : verifier(out, sbx_json_get(res, "verifier"));
	shot = sbx_view__join(rel, "screenshot.png");
	if (r >= 0 && shot && sbx_view__exists(rootfd, shot)) {
		r = sbx_buf_puts(out, "<h2>Final screen</h2>");
		r = r < 0 ? r : sbx_view__image(ctx, root, shot, "the final screenshot", out);
	}
	r = r < 0 ? r : sbx_view__filmstrip(ctx, root, rel, out);
	r = r < 0 ? r : sbx_buf_puts(out, "<h2>Transcript</h2>");
	r = r < 0 ? r : sbx_view__transcript(ctx, rootfd, rel, out);
	if (r >= 0 && cJSON_IsObject(sbx_json_get(agent, "usage"))) {
		r = sbx_buf_puts(out, "<h2>Model</h2>");
		r = r < 0 ? r : kv_table(out, agent, NULL);
	}
	r = r < 0 ? r : sbx_view__model_turns(rootfd, rel, out);
	r = r < 0 ? r : sbx_view__trajectory(rootfd, rel, out);
	if (r >= 0 && res) {
		r = sbx_buf_puts(out, "<div class=\"cols\"><div><h2>Limits</h2>");
		r = r < 0 ? r : kv_table(out, sbx_json_get(res, "limits"), NULL);
		r = r < 0 ? r : sbx_buf_puts(out, "</div><div><h2>Hardening</h2>");
		r = r < 0 ? r : kv_table(out, sbx_json_get(sandbox, "hardening"), NULL);
		r = r < 0 ? r : reuse_tables(out, sandbox);
		r = r < 0 ? r : sbx_buf_puts(out, "</div><div><h2>Provenance</h2>");
		r = r < 0 ? r : kv_table(out, sbx_json_get(res, "provenance"), NULL);
		r = r < 0 ? r : sbx_buf_puts(out, "<table class=\"kv\"><tr><th>image</th><td>");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(sandbox, "image", "?"));
		r = r < 0 ? r : sbx_buf_puts(out, "</td></tr><tr><th>image_id</th><td>");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(sandbox, "image_id", "?"));
		r = r < 0 ? r : sbx_buf_puts(out, "</td></tr></table></div></div>");
	}
	r = r < 0 ? r : raw_files(ctx, root, rel, 0, out);
	r = r < 0 ? r : sbx_buf_puts(out, "</section>");
	if (r >= 0 && !ctx->report)
		r = sbx_view__page_end(ctx, out);
	sbx_view_entry_clear(&e);
	return r < 0 ? sbx_error_set(err, r, "'%s': the run page: %s", rel, strerror(-r)) : 0;
}
