/* SPDX-License-Identifier: MIT */
/*
 * One sweep record: a results.jsonl line as JSON and back (a line that is
 * not one is refused, never half read), and a record made from a run's
 * result.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/sweep.h"
#include "sweep-internal.h"

static const char *const status_names[] = {
	[SBX_RUN_PASS] = "pass",
	[SBX_RUN_PARTIAL] = "partial",
	[SBX_RUN_FAIL] = "fail",
	[SBX_RUN_TIMEOUT] = "timeout",
	[SBX_RUN_INTERRUPTED] = "interrupted",
	[SBX_RUN_INFRA_ERROR] = "infra_error",
	[SBX_RUN_AGENT_ERROR] = "agent_error",
	[SBX_RUN_SANDBOX_FAILED] = "sandbox_failed",
};

void sbx_sweep_record_clear(sbx_sweep_record *r)
{
	if (!r)
		return;
	sbx_free_all(r->run_id, r->task, r->agent, r->engine, r->error, r->reason);
	*r = (sbx_sweep_record){0};
}

bool sbx_sweep_record_done(const sbx_sweep_record *r)
{
	return r->status != SBX_RUN_INTERRUPTED && r->status != SBX_RUN_INFRA_ERROR;
}

char *sbx_sweep_record_json(const sbx_sweep_record *r)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "episode", (double)r->episode);
	cJSON_AddNumberToObject(o, "attempt", r->attempt);
	cJSON_AddStringToObject(o, "task", r->task ? r->task : "");
	cJSON_AddStringToObject(o, "agent", r->agent ? r->agent : "");
	cJSON_AddNumberToObject(o, "epoch", r->epoch);
	if (r->seeded)
		cJSON_AddNumberToObject(o, "seed", (double)r->seed);
	else
		cJSON_AddNullToObject(o, "seed");
	cJSON_AddStringToObject(o, "run_id", r->run_id ? r->run_id : "");
	cJSON_AddStringToObject(o, "status", status_names[r->status]);
	if (r->graded)
		cJSON_AddNumberToObject(o, "score", r->score);
	else
		cJSON_AddNullToObject(o, "score");
	cJSON_AddNumberToObject(o, "agent_ms", round(r->agent_ms * 1000) / 1000);
	cJSON_AddNumberToObject(o, "total_ms", round(r->total_ms * 1000) / 1000);
	if (r->tool_calls >= 0)
		cJSON_AddNumberToObject(o, "tool_calls", r->tool_calls);
	if (r->has_usage) {
		cJSON *u = cJSON_AddObjectToObject(o, "usage");

		cJSON_AddNumberToObject(u, "input_tokens", r->usage.input_tokens);
		cJSON_AddNumberToObject(u, "output_tokens", r->usage.output_tokens);
		cJSON_AddNumberToObject(u, "cached_tokens", r->usage.cached_tokens);
	}
	if (r->engine)
		cJSON_AddStringToObject(o, "engine", r->engine);
	if (r->error)
		cJSON_AddStringToObject(o, "error", r->error);
	if (r->reason)
		cJSON_AddStringToObject(o, "reason", r->reason);
	return cJSON_PrintUnformatted(o);
}

static int parse_status(const char *s, sbx_run_status *out)
{
	for (size_t i = 0; i < SBX_ELEMENTSOF(status_names); i++)
		if (strcmp(s, status_names[i]) == 0) {
			*out = (sbx_run_status)i;
			return 0;
		}
	return -EINVAL;
}

static bool whole_number(const cJSON *v, double max)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= max &&
	       v->valuedouble == (double)(uint64_t)v->valuedouble;
}

/* tool_calls and usage, from a results line or result.json's "agent" object. */
static void read_agent_counts(sbx_sweep_record *r, const cJSON *o)
{
	const cJSON *u = sbx_json_get(o, "usage");

	r->tool_calls = sbx_json_get_number(o, "tool_calls", -1);
	if (cJSON_IsObject(u)) {
		r->has_usage = true;
		r->usage.input_tokens = sbx_json_get_number(u, "input_tokens", 0);
		r->usage.output_tokens = sbx_json_get_number(u, "output_tokens", 0);
		r->usage.cached_tokens = sbx_json_get_number(u, "cached_tokens", 0);
	}
}

/* The members of a results line that parsing reads, in one pass over the object. */
enum line_key {
	K_EPISODE,
	K_ATTEMPT,
	K_EPOCH,
	K_STATUS,
	K_SEED,
	K_SCORE,
	K_AGENT_MS,
	K_TOTAL_MS,
	K_TASK,
	K_AGENT,
	K_RUN_ID,
	K_ENGINE,
	K_ERROR,
	K_TOOL_CALLS,
	K_USAGE,
	K_REASON,
	N_KEYS
};

static const char *const line_keys[N_KEYS] = {
	[K_EPISODE] = "episode",   [K_ATTEMPT] = "attempt",
	[K_EPOCH] = "epoch",	   [K_STATUS] = "status",
	[K_SEED] = "seed",	   [K_SCORE] = "score",
	[K_AGENT_MS] = "agent_ms", [K_TOTAL_MS] = "total_ms",
	[K_TASK] = "task",	   [K_AGENT] = "agent",
	[K_RUN_ID] = "run_id",	   [K_ENGINE] = "engine",
	[K_ERROR] = "error",	   [K_TOOL_CALLS] = "tool_calls",
	[K_USAGE] = "usage",	   [K_REASON] = "reason",
};

/*
 * Each known member of o, found in one walk over its children (the first of
 * a repeated name, as cJSON's own lookup finds): a million lines looked up
 * member by member spent most of their time comparing names.
 */
static void line_members(const cJSON *o, const cJSON *m[N_KEYS])
{
	memset(m, 0, N_KEYS * sizeof(*m));
	for (const cJSON *c = o->child; c; c = c->next) {
		if (!c->string)
			continue;
		for (size_t k = 0; k < N_KEYS; k++)
			if (!m[k] && c->string[0] == line_keys[k][0] &&
			    strcmp(c->string, line_keys[k]) == 0) {
				m[k] = c;
				break;
			}
	}
}

static double number_or(const cJSON *v, double dflt)
{
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *string_or(const cJSON *v, const char *dflt)
{
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : dflt;
}

int sbx_sweep_record_parse(const char *line, size_t len, sbx_sweep_record *out, sbx_error *err)
{
	_cleanup_json_ cJSON *j = NULL;
	sbx_sweep_record r = {0};
	const cJSON *m[N_KEYS];
	int rc;

	rc = sbx_json_parse(line, len, &j, err);
	if (rc < 0)
		return rc;
	if (!cJSON_IsObject(j))
		return sbx_error_set(err, -EINVAL, "not a sweep result line");
	line_members(j, m);
	if (!whole_number(m[K_EPISODE], SBX_SWEEP_MAX_EPISODES) ||
	    !whole_number(m[K_ATTEMPT], 1e6) || !whole_number(m[K_EPOCH], SBX_SWEEP_MAX_EPOCHS) ||
	    parse_status(string_or(m[K_STATUS], ""), &r.status) < 0)
		return sbx_error_set(err, -EINVAL, "not a sweep result line");
	r.episode = (size_t)m[K_EPISODE]->valuedouble;
	r.attempt = (unsigned)m[K_ATTEMPT]->valuedouble;
	r.epoch = (unsigned)m[K_EPOCH]->valuedouble;
	if (whole_number(m[K_SEED], 9007199254740991.0)) {
		r.seeded = true;
		r.seed = (uint64_t)m[K_SEED]->valuedouble;
	}
	if (cJSON_IsNumber(m[K_SCORE])) {
		r.graded = true;
		r.score = m[K_SCORE]->valuedouble;
	}
	r.agent_ms = number_or(m[K_AGENT_MS], 0);
	r.total_ms = number_or(m[K_TOTAL_MS], 0);
	r.tool_calls = number_or(m[K_TOOL_CALLS], -1);
	if (cJSON_IsObject(m[K_USAGE])) {
		r.has_usage = true;
		r.usage.input_tokens = sbx_json_get_number(m[K_USAGE], "input_tokens", 0);
		r.usage.output_tokens = sbx_json_get_number(m[K_USAGE], "output_tokens", 0);
		r.usage.cached_tokens = sbx_json_get_number(m[K_USAGE], "cached_tokens", 0);
	}
	r.task = sbx_sweep__strdup0(string_or(m[K_TASK], ""));
	r.agent = sbx_sweep__strdup0(string_or(m[K_AGENT], ""));
	r.run_id = sbx_sweep__strdup0(string_or(m[K_RUN_ID], ""));
	r.engine = sbx_sweep__strdup0(string_or(m[K_ENGINE], NULL));
	r.error = sbx_sweep__strdup0(string_or(m[K_ERROR], NULL));
	r.reason = sbx_sweep__strdup0(string_or(m[K_REASON], NULL));
	if (!r.task || !r.agent || !r.run_id || (string_or(m[K_ENGINE], NULL) && !r.engine) ||
	    (string_or(m[K_ERROR], NULL) && !r.error) ||
	    (string_or(m[K_REASON], NULL) && !r.reason)) {
		sbx_sweep_record_clear(&r);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	sbx_sweep_record_clear(out);
	*out = r;
	return 0;
}

int sbx_sweep_record_from_run(const sbx_run_result *res, const sbx_sweep_plan *p,
			      const sbx_sweep_episode *ep, unsigned attempt, const char *engine,
			      sbx_sweep_record *out)
{
	/* result.json's own view (usage, tool calls) is the one other tools read too. */
	_cleanup_json_ cJSON *j = sbx_run_result_tree(res);
	sbx_sweep_record r = {0};

	r.episode = ep->index;
	r.attempt = attempt;
	r.epoch = ep->epoch;
	r.seeded = ep->seeded;
	r.seed = ep->seed;
	r.status = res->status;
	r.graded = res->grade.graded && res->status != SBX_RUN_INFRA_ERROR &&
		   res->status != SBX_RUN_INTERRUPTED;
	r.score = r.graded ? res->grade.score : 0;
	r.agent_ms = res->phase_done[SBX_PHASE_AGENT] ? res->phase_ms[SBX_PHASE_AGENT] : 0;
	r.total_ms = res->total_ms;
	read_agent_counts(&r, sbx_json_get(j, "agent"));
	r.task = strdup(p->tasks[ep->task]);
	r.agent = strdup(p->agents[ep->agent]);
	r.run_id = strdup(res->run_id ? res->run_id : "");
	r.engine = sbx_sweep__strdup0(engine);
	r.error = sbx_sweep__strdup0(res->error);
	r.reason = sbx_run_result_reason(res);
	if (!r.task || !r.agent || !r.run_id || (engine && !r.engine) || (res->error && !r.error) ||
	    (res->status != SBX_RUN_PASS && !r.reason)) {
		sbx_sweep_record_clear(&r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}
