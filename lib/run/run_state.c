/* SPDX-License-Identifier: MIT */
/*
 * What every file of the lifecycle shares about a run: its phases, its
 * failures, the server's view of its task. lifecycle.c drives the steps and
 * calls the others (inputs, agents, collect, gui, record, warm); they call
 * only this, so lib/run's files form a one-way graph.
 */
#include <string.h>

#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

#define STATUS_BUDGET_MS	5000 /* one status read, whole */
#define STATUS_PAST_DEADLINE_MS 1000

void sbx_run__phase_done(sbx_run *run, sbx_run_phase p, double since)
{
	run->res.phase_ms[p] += sbx_run__mono_msf() - since;
	run->res.phase_done[p] = true;
}

void sbx_run__set_infra(sbx_run *run, const char *kind, const sbx_error *err)
{
	if (run->res.error)
		return; /* the first failure is the one that matters */
	run->res.status = SBX_RUN_INFRA_ERROR;
	run->res.error = strdup(sbx_error_message(err));
	run->res.error_kind = strdup(kind);
}

const char *sbx_run__base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/*
 * 1: completed, 2: timed out (server side), 0: running, <0: no answer.
 * Our /v1/task/status always answers 200; the reference-compatible
 * /task/status is 404 once completed, so it is only the fallback for an
 * image whose server has no /v1 yet.
 */
int sbx_run__task_state(sbx_run *run)
{
	sbx_relay_response resp = {0};
	_cleanup_json_ cJSON *j = NULL;
	int64_t left = run->deadline_ms - sbx_run__mono_ms() + STATUS_PAST_DEADLINE_MS;
	int budget = left < STATUS_BUDGET_MS ? (int)(left > 250 ? left : 250) : STATUS_BUDGET_MS;
	const char *st;
	int r;

	/* The whole read is bounded, and never far past the deadline: a server that
	 * drips its answer cannot keep the episode alive. */
	r = sbx_relay_request(run->relay, "GET",
			      run->legacy_status ? "/task/status" : "/v1/task/status", NULL, NULL,
			      0, false, budget, &resp, NULL);
	if (r >= 0 && resp.status == 404 && !run->legacy_status) {
		sbx_relay_response_free(&resp);
		run->legacy_status = true;
		return sbx_run__task_state(run);
	}
	if (r < 0 || resp.status != 200 || sbx_json_parse(resp.body, resp.len, &j, NULL) < 0) {
		sbx_relay_response_free(&resp);
		return r < 0 ? r : -EPROTO;
	}
	sbx_relay_response_free(&resp);
	st = sbx_json_get_string(j, "status", "");
	if (strcmp(st, "completed") == 0) {
		/* complete_task says how it computed formula values (result.json grade.recalc). */
		const cJSON *rc = sbx_json_get(j, "recalc");
		if (cJSON_IsObject(rc)) {
			snprintf(run->res.sandbox_recalc, sizeof(run->res.sandbox_recalc), "%s",
				 sbx_json_get_string(rc, "method", ""));
			run->res.sandbox_recalc_native =
				(uint64_t)sbx_json_get_number(rc, "native", 0);
			run->res.sandbox_recalc_office =
				(uint64_t)sbx_json_get_number(rc, "libreoffice", 0);
		}
		return 1;
	}
	if (strcmp(st, "timed_out") == 0)
		return 2;
	return 0;
}
