/* SPDX-License-Identifier: MIT */
/*
 * What every file of the lifecycle shares about a run: its phases, its
 * failures, the server's view of its task. lifecycle*.c drive the steps and
 * call the others (inputs, agents, collect, gui, record, warm); they call
 * only this, so lib/run's files form a one-way graph.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "run-internal.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

#define STATUS_BUDGET_MS	5000 /* one status read, whole */
#define STATUS_PAST_DEADLINE_MS 1000

int64_t sbx_run__real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Records an infrastructure failure; the first one wins. */
static void set_infra(sbx_run *run, const char *kind, const sbx_error *err)
{
	if (run->res.error)
		return; /* the first failure is the one that matters */
	run->res.status = SBX_RUN_INFRA_ERROR;
	run->res.error = strdup(sbx_error_message(err));
	run->res.error_kind = strdup(kind);
}

int sbx_run__phase_end(sbx_run *run, sbx_run_phase p, double since, int r, const char *kind,
		       const sbx_error *err)
{
	if (p != SBX_RUN__UNTIMED) {
		run->res.phase_ms[p] += sbx_now_msf() - since;
		run->res.phase_done[p] = true;
	}
	if (r < 0 && kind)
		set_infra(run, kind, err);
	return r;
}

void sbx_run__set_sandbox_failed(sbx_run *run, const char *kind, const sbx_error *err)
{
	if (!run->ready) {
		set_infra(run, kind, err);
		return;
	}
	if (run->res.error)
		return;
	run->res.status = SBX_RUN_SANDBOX_FAILED;
	run->res.error = strdup(sbx_error_message(err));
	run->res.error_kind = strdup(kind);
}

void sbx_run__ready_pause(long *pause_ms, int64_t waited_ms)
{
	struct timespec ts;
	long next = *pause_ms <= 0 ? READY_PAUSE_FIRST_MS : *pause_ms + (*pause_ms + 1) / 2;

	if (waited_ms < READY_WINDOW_MS && next > READY_PAUSE_EARLY_MS)
		next = READY_PAUSE_EARLY_MS;
	else if (waited_ms >= READY_WINDOW_MS && *pause_ms > 0)
		next = *pause_ms * 2;
	*pause_ms = next > READY_PAUSE_MAX_MS ? READY_PAUSE_MAX_MS : next;
	ts.tv_sec = 0;
	ts.tv_nsec = *pause_ms * 1000000L;
	nanosleep(&ts, NULL);
}

char *sbx_run__url_with(const char *prefix, const char *s)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(16384);

	if (sbx_buf_puts(&b, prefix) < 0)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int r;

		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
			r = sbx_buf_putc(&b, (char)*p);
		else
			r = sbx_buf_printf(&b, "%%%02X", *p);
		if (r < 0)
			return NULL;
	}
	return sbx_buf_steal(&b, NULL);
}

const char *sbx_run__base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The status path for the server the image has (run-internal.h: status_api). */
static int status_path(const sbx_run *run, int wait_ms, char *out, size_t size)
{
	switch (run->status_api) {
	case SBX_STATUS_CONTROL:
		if (run->status_version >= 0)
			return snprintf(out, size, "/control/status?since=%ld&wait=%d",
					run->status_version, wait_ms);
		return snprintf(out, size, "/control/status");
	case SBX_STATUS_V1:
		return snprintf(out, size, "/v1/task/status");
	default:
		return snprintf(out, size, "/task/status");
	}
}

/*
 * 1: completed, 2: timed out (server side), 0: running, <0: no answer.
 * GET /control/status answers at once when the task changed since the
 * version we last saw, else on the change or after wait_ms. A server
 * without it (404) is an older image: /v1/task/status, which always
 * answers 200, then the reference's /task/status (404 once completed), both
 * at once whatever wait_ms.
 */
int sbx_run__task_state(sbx_run *run, int wait_ms)
{
	sbx_relay_response resp = {0};
	_cleanup_json_ cJSON *j = NULL;
	int64_t left = run->deadline_ms - sbx_now_ms() + STATUS_PAST_DEADLINE_MS;
	int budget = left < STATUS_BUDGET_MS ? (int)(left > 250 ? left : 250) : STATUS_BUDGET_MS;
	const char *st;
	char path[96];
	int r;

	/* The whole read is bounded, and never far past the deadline: a server that
	 * drips its answer cannot keep the episode alive. A long-poll adds its wait. */
	status_path(run, wait_ms, path, sizeof(path));
	r = sbx_relay_request(run->relay, "GET", path, NULL, NULL, 0, false,
			      budget + (run->status_api == SBX_STATUS_CONTROL ? wait_ms : 0), &resp,
			      NULL);
	if (r >= 0 && resp.status == 404 && run->status_api != SBX_STATUS_REFERENCE) {
		sbx_relay_response_free(&resp);
		run->status_api++;
		return sbx_run__task_state(run, wait_ms);
	}
	if (r < 0 || resp.status != 200 || sbx_json_parse(resp.body, resp.len, &j, NULL) < 0) {
		sbx_relay_response_free(&resp);
		return r < 0 ? r : -EPROTO;
	}
	if (cJSON_IsNumber(sbx_json_get(j, "version")))
		run->status_version = (long)sbx_json_get_number(j, "version", -1);
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

/*
 * POST /v1/task/start once the episode's files are in: a client polling the
 * reference's /task/status (404 "No active task" while the task is pending)
 * sees it running from the start of the episode, not from its first tool
 * call. /v1/ keeps a task already running; not recorded (the transcript is
 * the agent's). A failure costs only that: the first tool call starts it.
 */
void sbx_run__start_task(sbx_run *run)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	_cleanup_free_ char *body = NULL;
	sbx_relay_response resp = {0};
	sbx_error err = SBX_ERROR_INIT;
	int r;

	if (!o || !cJSON_AddStringToObject(o, "task_id", run->task->id) ||
	    !(body = cJSON_PrintUnformatted(o)))
		return;
	r = sbx_relay_request(run->relay, "POST", "/v1/task/start",
			      "Content-Type: application/json\r\n", body, strlen(body), false,
			      STATUS_BUDGET_MS, &resp, &err);
	/* 404: an older image without /v1 (its first tool call starts the task). */
	if (r < 0 || (resp.status != 200 && resp.status != 404))
		sbx_log_warning("run: starting the task's session: %s",
				r < 0 ? sbx_error_message(&err) : "refused by the server");
	sbx_relay_response_free(&resp);
}
