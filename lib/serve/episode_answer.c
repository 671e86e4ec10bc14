/* SPDX-License-Identifier: MIT */
/*
 * The answers' JSON: what a claim hands the client (the agent's URLs, the
 * prompt, the deadline) and what finish reports (result.json's facts, as a
 * reward). Built once per episode and kept, so a late GET or a second finish
 * answers the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "service.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

static double phase_ms(const sbx_run_result *r, sbx_run_phase p)
{
	return r->phase_done[p] ? r->phase_ms[p] : 0;
}

static void add_tags(cJSON *o, const char *tags_json)
{
	cJSON *t = tags_json ? cJSON_Parse(tags_json) : NULL;

	if (t)
		cJSON_AddItemToObject(o, "tags", t);
}

/* The finish answer, from result.json's facts. */
char *sbx_serve__result_answer(const episode *e, const sbx_run_result *r)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	cJSON *g, *t;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "id", e->id);
	cJSON_AddStringToObject(o, "task", e->task);
	cJSON_AddNumberToObject(o, "reward", r->grade.graded ? r->grade.score : 0);
	cJSON_AddStringToObject(o, "status", sbx_run_status_name(r->status));
	cJSON_AddBoolToObject(o, "passed", r->status == SBX_RUN_PASS);
	cJSON_AddStringToObject(o, "ended_by", sbx_run_end_name(r->end));
	if (r->error) {
		cJSON_AddStringToObject(o, "error", r->error);
		cJSON_AddStringToObject(o, "error_kind", r->error_kind ? r->error_kind : "");
	}
	g = cJSON_AddObjectToObject(o, "grade");
	cJSON_AddBoolToObject(g, "graded", r->grade.graded);
	if (r->grade.graded) {
		cJSON *rep = r->grade.report ? cJSON_Duplicate(r->grade.report, true) : NULL;

		cJSON_AddStringToObject(g, "status", sbx_grade_status_name(r->grade.status));
		cJSON_AddNumberToObject(g, "score", r->grade.score);
		/* A Harbor task's reward is its verifier's: no cells (as in result.json). */
		if (!r->verifier.harbor) {
			cJSON_AddNumberToObject(g, "cells_graded", (double)r->grade.cells_graded);
			cJSON_AddNumberToObject(g, "cells_matched", (double)r->grade.cells_matched);
		}
		if (rep)
			cJSON_AddItemToObject(g, "report", rep);
	}
	cJSON_AddStringToObject(o, "run_dir", r->run_dir);
	cJSON_AddBoolToObject(o, "warm", r->warm);
	cJSON_AddNumberToObject(o, "reused", r->reused);
	cJSON_AddStringToObject(o, "sandbox_id", r->sandbox_id ? r->sandbox_id : "");
	if (r->reset_after)
		cJSON_AddBoolToObject(o, "retired", r->retired);
	if (r->seeded)
		cJSON_AddNumberToObject(o, "seed", (double)r->seed);
	t = cJSON_AddObjectToObject(o, "timings_ms");
	if (r->reused)
		cJSON_AddNumberToObject(t, "reset", r->reset_ms);
	cJSON_AddNumberToObject(t, "claim", e->claim_ms);
	for (int p = 0; p < SBX_PHASE_COUNT; p++)
		if (r->phase_done[p])
			cJSON_AddNumberToObject(t, sbx_run_phase_name((sbx_run_phase)p),
						phase_ms(r, (sbx_run_phase)p));
	cJSON_AddNumberToObject(t, "total", r->total_ms);
	add_tags(o, e->tags_json);
	return cJSON_PrintUnformatted(o);
}

char *sbx_serve__claim_answer(const episode *e, sbx_run *run)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject(), *conn = NULL;
	const sbx_run_result *r = sbx_run_get_result(run);
	const char *c = sbx_run_get_connection(run);

	if (!o || !c || sbx_json_parse(c, strlen(c), &conn, NULL) < 0)
		return NULL;
	cJSON_AddStringToObject(o, "id", e->id);
	cJSON_AddStringToObject(o, "task", e->task);
	cJSON_AddStringToObject(o, "mcp_url", sbx_json_get_string(conn, "mcp_url", ""));
	cJSON_AddStringToObject(o, "sse_url", sbx_json_get_string(conn, "sse_url", ""));
	cJSON_AddStringToObject(o, "rest_url", sbx_json_get_string(conn, "rest_url", ""));
	cJSON_AddStringToObject(o, "authorization", sbx_json_get_string(conn, "authorization", ""));
	cJSON_AddStringToObject(o, "engine", e->engine_url);
	cJSON_AddStringToObject(o, "prompt",
				sbx_run_get_task(run)->prompt ? sbx_run_get_task(run)->prompt : "");
	cJSON_AddNumberToObject(o, "deadline", (double)r->deadline);
	cJSON_AddNumberToObject(o, "timeout", r->limits.resolved.timeout_s);
	cJSON_AddBoolToObject(o, "warm", r->warm);
	cJSON_AddNumberToObject(o, "reused", r->reused);
	cJSON_AddNumberToObject(o, "claim_ms", e->claim_ms);
	cJSON_AddStringToObject(o, "run_dir", r->run_dir);
	if (r->seeded)
		cJSON_AddNumberToObject(o, "seed", (double)r->seed);
	add_tags(o, e->tags_json);
	return cJSON_PrintUnformatted(o);
}
