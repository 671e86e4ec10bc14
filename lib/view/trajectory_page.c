/* SPDX-License-Identifier: MIT */
/*
 * The run page's trajectory section: trajectory.json (ATIF) as one row per
 * step: who, when, the tools called and what came back, each cut short. The
 * file is read with a cap and every string is escaped; the full text is in
 * the file itself and in the transcript above.
 */
#include <string.h>

#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/utf8.h"
#include "view-internal.h"

#define SHOWN_BYTES 160 /* of a message or a result, per cell */

/* The head of s (valid UTF-8, at most SHOWN_BYTES bytes), escaped, "…" when cut. */
static int put_head(sbx_buf *out, const char *s)
{
	size_t len = strlen(s), i = 0;
	int r = 0;

	while (i < len && i < SHOWN_BYTES) {
		size_t k = sbx_utf8_seq((const unsigned char *)s + i, len - i);

		if (!k || i + k > SHOWN_BYTES)
			break;
		i += k;
	}
	r = sbx_html_escape_n(out, s, i);
	return r < 0 || i == len ? r : sbx_buf_puts(out, "…");
}

static int step_row(sbx_buf *out, const cJSON *step, unsigned *calls, unsigned *unanswered)
{
	const cJSON *tc, *res = sbx_json_get(sbx_json_get(step, "observation"), "results");
	int r;

	r = sbx_buf_printf(out, "<tr><td>%.0f</td><td>", sbx_json_get_number(step, "step_id", 0));
	r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(step, "source", "?"));
	r = r < 0 ? r : sbx_buf_puts(out, "</td><td class=\"dim\">");
	r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(step, "timestamp", ""));
	r = r < 0 ? r : sbx_buf_puts(out, "</td><td>");
	r = r < 0 ? r : put_head(out, sbx_json_get_string(step, "message", ""));
	cJSON_ArrayForEach (tc, sbx_json_get(step, "tool_calls")) {
		const char *id = sbx_json_get_string(tc, "tool_call_id", "");
		const cJSON *o, *answer = NULL;

		(*calls)++;
		cJSON_ArrayForEach (o, res)
			if (strcmp(sbx_json_get_string(o, "source_call_id", ""), id) == 0)
				answer = o;
		r = r < 0 ? r : sbx_buf_puts(out, "<div class=\"tcall\"><b>");
		r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(tc, "function_name", "?"));
		r = r < 0 ? r : sbx_buf_puts(out, "</b> → ");
		if (!answer)
			(*unanswered)++;
		r = r < 0    ? r
		    : answer ? put_head(out, sbx_json_get_string(answer, "content", ""))
			     : sbx_buf_puts(out, "<span class=\"errtext\">no result</span>");
		r = r < 0 ? r : sbx_buf_puts(out, "</div>");
	}
	return r < 0 ? r : sbx_buf_puts(out, "</td></tr>");
}

int sbx_view__trajectory(int rootfd, const char *rel, sbx_buf *out)
{
	_cleanup_json_ cJSON *t =
		sbx_view__load_json(rootfd, rel, "trajectory.json", SBX_VIEW_TRAJECTORY_MAX, NULL);
	const cJSON *step, *fm, *steps;
	unsigned shown = 0, calls = 0, unanswered = 0;
	int r;

	if (!cJSON_IsObject(t))
		return 0; /* older runs have none */
	steps = sbx_json_get(t, "steps");
	fm = sbx_json_get(t, "final_metrics");
	r = sbx_buf_puts(out, "<h2>Trajectory</h2><table class=\"kv\" id=\"trajectory\">"
			      "<tr><th>step</th><th>source</th><th>time</th><th>message, tool "
			      "calls → results</th></tr>");
	cJSON_ArrayForEach (step, steps) {
		if (shown++ >= SBX_VIEW_TURNS_MAX)
			break;
		r = r < 0 ? r : step_row(out, step, &calls, &unanswered);
	}
	r = r < 0 ? r : sbx_buf_puts(out, "</table><p class=\"dim\" id=\"tjstats\">");
	r = r < 0 ? r : sbx_html_escape(out, sbx_json_get_string(t, "schema_version", "?"));
	r = r < 0 ? r
		  : sbx_buf_printf(out, ", %d steps, %u tool calls", cJSON_GetArraySize(steps),
				   calls);
	if (r >= 0 && unanswered)
		r = sbx_buf_printf(out, " (<span class=\"errtext\">%u without a result</span>)",
				   unanswered);
	if (r >= 0 && sbx_json_get(fm, "total_prompt_tokens"))
		r = sbx_buf_printf(out, ", %.0f prompt / %.0f completion / %.0f cached tokens",
				   sbx_json_get_number(fm, "total_prompt_tokens", 0),
				   sbx_json_get_number(fm, "total_completion_tokens", 0),
				   sbx_json_get_number(fm, "total_cached_tokens", 0));
	if (r >= 0 && sbx_json_get(sbx_json_get(t, "extra"), "truncated"))
		r = sbx_buf_puts(out, "; long contents were cut (see its extra.truncated)");
	if (r >= 0 && shown > SBX_VIEW_TURNS_MAX)
		r = sbx_buf_puts(out, "; only the first steps shown");
	return r < 0 ? r : sbx_buf_puts(out, "; the whole file: trajectory.json</p>");
}
