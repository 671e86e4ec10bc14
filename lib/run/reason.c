/* SPDX-License-Identifier: MIT */
/*
 * Why an episode did not pass, in one line: what result.json's "reason", the
 * CLI's verdict and the run page say first. Built from the result alone (the
 * grade's JSON report, the agent's log tail, the infrastructure error), so
 * anything that reads a result.json can say the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/result.h"

/* Cell values come from the agent's outputs: short, and quoted as JSON would. */
#define VALUE_MAX 40
/* A log line is the agent's too: the whole reason is cut at this many bytes. */
#define REASON_MAX 300

/* A mismatch's value as the reason shows it: "text" (cut), 12.5, or empty. */
static void value_text(char *buf, size_t size, const cJSON *m, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);

	if (cJSON_IsString(v) && v->valuestring) {
		const char *t = v->valuestring;
		size_t n = strnlen(t, VALUE_MAX + 1), cut = n > VALUE_MAX ? VALUE_MAX : n;

		/* Cut on a character boundary: the reason goes into JSON and HTML. */
		while (cut > 0 && cut < n && ((unsigned char)t[cut] & 0xc0) == 0x80)
			cut--;
		snprintf(buf, size, "\"%.*s%s\"", (int)cut, t, cut < n ? "…" : "");
	} else if (cJSON_IsNumber(v))
		snprintf(buf, size, "%.15g", v->valuedouble);
	else if (cJSON_IsBool(v))
		snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "TRUE" : "FALSE");
	else
		snprintf(buf, size, "empty");
}

/* The first grading case that did not pass, gates first (a failed gate zeroes the score). */
static const cJSON *first_failed_case(const cJSON *report, bool gate)
{
	const cJSON *c;

	cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
		const char *st = sbx_json_get_string(c, "status", "");

		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "gate")) == gate &&
		    strcmp(st, "PASS") != 0)
			return c;
	}
	return NULL;
}

/* "gate 'inputs unchanged' failed: Sheet1!A2 changed (...)", "case 'x': ...". */
static char *grade_reason(const sbx_run_result *r)
{
	const cJSON *report = r->grade.report;
	const cJSON *c, *m;
	const char *name, *failure, *cell;
	char want[VALUE_MAX + 16], got[VALUE_MAX + 16], more[48] = "";
	double total;
	char *out = NULL;
	bool gate;

	if (!r->grade.graded) {
		const char *why = r->grade.error ? r->grade.error : r->error;

		/* A grade error: the grader crashed, ran past a limit or failed. */
		if (why && asprintf(&out, "grading failed: %s", why) < 0)
			out = NULL;
		return why ? out : strdup("not graded");
	}
	gate = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "gate_failed"));
	c = first_failed_case(report, gate);
	if (!c)
		goto cells;
	name = sbx_json_get_string(c, "name", "?");
	failure = sbx_json_get_string(c, "failure", NULL);
	m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "mismatches"), 0);
	cell = sbx_json_get_string(m, "cell", NULL);
	total = sbx_json_get_number(c, "mismatches_total", 0);
	if (failure) {
		if (asprintf(&out, "%s '%s' failed: %s", gate ? "gate" : "case", name, failure) < 0)
			out = NULL;
		return out;
	}
	if (!cell)
		goto cells;
	value_text(want, sizeof(want), m, "expected");
	value_text(got, sizeof(got), m, "got");
	if (total > 1)
		snprintf(more, sizeof(more), "; %.0f more cell(s)", total - 1);
	if (asprintf(&out, "%s '%s' failed: %s %s (expected %s, got %s)%s", gate ? "gate" : "case",
		     name, cell, gate ? "changed" : "wrong", want, got, more) < 0)
		out = NULL;
	return out;
cells:
	if (r->verifier.harbor) {
		if (asprintf(&out, "test.sh gave reward %g (%s, exit %d)", r->verifier.reward,
			     r->verifier.reward_source, r->verifier.exit_code) < 0)
			out = NULL;
		return out;
	}
	if (asprintf(&out, "%llu of %llu graded cells matched",
		     (unsigned long long)r->grade.cells_matched,
		     (unsigned long long)r->grade.cells_graded) < 0)
		out = NULL;
	return out;
}

/* The last line of the agent's log tail (its lines are joined by " | "). */
static const char *last_log_line(const char *tail)
{
	const char *p = tail, *next;

	if (!tail)
		return NULL;
	while ((next = strstr(p, " | ")))
		p = next + 3;
	return *p ? p : NULL;
}

/* One line, at most REASON_MAX bytes: cut on a character boundary, "…" after. */
static char *capped(char *s)
{
	size_t cut = REASON_MAX - 3; /* room for "…" within what s holds */

	if (!s || strlen(s) <= REASON_MAX)
		return s;
	while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	memcpy(s + cut, "…", sizeof("…"));
	return s;
}

static char *reason(const sbx_run_result *r)
{
	const char *line;
	char *out = NULL;
	int n = 0;

	switch (r->status) {
	case SBX_RUN_PASS:
		return NULL;
	case SBX_RUN_PARTIAL:
	case SBX_RUN_FAIL:
		return grade_reason(r);
	case SBX_RUN_AGENT_ERROR:
		line = last_log_line(r->agent_tail);
		n = asprintf(&out, "agent exited %d%s%s%s", r->agent_exit,
			     r->agent_exit == 127 ? " (command not found)" : "", line ? ": " : "",
			     line ? line : " before complete_task");
		break;
	case SBX_RUN_TIMEOUT:
		n = asprintf(&out, "deadline %u s passed during the agent phase",
			     r->limits.resolved.timeout_s);
		break;
	case SBX_RUN_INTERRUPTED:
		return strdup("interrupted before the episode ended (a signal or an abort)");
	case SBX_RUN_SANDBOX_FAILED:
	case SBX_RUN_INFRA_ERROR:
		n = asprintf(&out, "%s failed: %s%s%s",
			     r->status == SBX_RUN_SANDBOX_FAILED ? "sandbox" : "infrastructure",
			     r->error_kind ? r->error_kind : "error", r->error ? ": " : "",
			     r->error ? r->error : "");
		break;
	}
	return n < 0 ? NULL : out;
}

char *sbx_run_result_reason(const sbx_run_result *r)
{
	return capped(reason(r));
}
