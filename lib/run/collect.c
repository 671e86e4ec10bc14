/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "collect.h"
#include "run-internal.h"
#include "rundir.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/path.h"

#define FILE_TIMEOUT_MS 30000

static int read_one(sbx_relay *relay, const char *rel, const char *outdir, sbx_error *err)
{
	_cleanup_free_ char *path = sbx_run__url_with("/control/file/", rel);
	_cleanup_json_ cJSON *j = NULL;
	sbx_relay_response resp = {0};
	int r;

	if (!path)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_relay_request(relay, "GET", path, NULL, NULL, 0, false, FILE_TIMEOUT_MS, &resp,
			      err);
	if (r < 0)
		return r;
	if (resp.status == 200) {
		r = sbx_path_write_beneath(outdir, rel, resp.body, resp.len, err);
	} else if (resp.status == 404 && sbx_json_parse(resp.body, resp.len, &j, NULL) == 0 &&
		   strncmp(sbx_json_get_string(j, "error", ""), "File not found", 14) == 0) {
		/* Not there: the agent did not write it; the grader says so. */
		r = 0;
	} else {
		/* Over the server's 16 MiB (413), refused (422: a symlink out, a FIFO),
		 * or no control API at all: the exec'd tar, with its own caps and
		 * confinement, decides, so a large output is neither lost nor "not found". */
		r = sbx_error_set(err, -EPROTO, "GET /control/file '%s': HTTP %d", rel,
				  resp.status);
	}
	sbx_relay_response_free(&resp);
	return r;
}

int sbx_collect__outputs(sbx_relay *relay, const sbx_task *task, const char *outdir, sbx_error *err)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < task->n_outputs; i++)
		r = read_one(relay, task->outputs[i], outdir, err);
	return r;
}

/* What sandbox-init logs once the firewall is set and every capability is gone. */
#define SBX_INIT_DROPPED "every capability dropped (bounding set included)"
/* Its next line: "sandbox-init: kernel gVisor, seccomp mode 0: verified CapInh ... refused". */
#define SBX_INIT_VERIFIED "\nsandbox-init: kernel "

/*
 * The kernel (Linux or gVisor only), the seccomp mode (one digit) and what
 * PID 1 verified under them, from its log; left empty when the line is not
 * exactly that.
 */
static void read_verified(sbx_run_result *res, const char *log, size_t len)
{
	static const char mode[] = ", seccomp mode ";
	const char *p = memmem(log, len, SBX_INIT_VERIFIED, sizeof(SBX_INIT_VERIFIED) - 1);
	const char *end = log + len, *comma, *colon, *nl;
	size_t n;

	if (!p)
		return;
	p += sizeof(SBX_INIT_VERIFIED) - 1;
	nl = memchr(p, '\n', (size_t)(end - p));
	end = nl ? nl : end;
	comma = memmem(p, (size_t)(end - p), mode, sizeof(mode) - 1);
	if (!comma || !((comma - p == 5 && memcmp(p, "Linux", 5) == 0) ||
			(comma - p == 6 && memcmp(p, "gVisor", 6) == 0)))
		return;
	colon = comma + sizeof(mode) - 1;
	if (end - colon < 12 || *colon < '0' || *colon > '9' ||
	    memcmp(colon + 1, ": verified ", 11) != 0)
		return;
	res->pid1_seccomp = *colon - '0';
	colon++;
	n = (size_t)(end - (colon + 11));
	if (n >= sizeof(res->pid1_verified))
		return;
	for (const char *c = colon + 11; c < end; c++)
		if (*c < 0x20 || *c > 0x7e)
			return;
	snprintf(res->pid1_kernel, sizeof(res->pid1_kernel), "%.*s", (int)(comma - p), p);
	snprintf(res->pid1_verified, sizeof(res->pid1_verified), "%.*s", (int)n, colon + 11);
}

void sbx_run__save_logs(sbx_run *run)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(16 * 1024 * 1024);
	sbx_error e = SBX_ERROR_INIT;

	if (run->backend->ops->logs(run->backend, &b, &e) < 0)
		sbx_log_warning("container log: %s", sbx_error_message(&e));
	/* PID 1 refuses to run when it cannot drop them, so a ready server implies this line. */
	if (b.data && memmem(b.data, b.len, SBX_INIT_DROPPED, sizeof(SBX_INIT_DROPPED) - 1))
		run->res.privileges_dropped = true;
	if (b.data)
		read_verified(&run->res, b.data, b.len);
	sbx_rundir__write(run->res.run_dir, "container.log", b.data ? b.data : "", b.len, NULL);
}

void sbx_run__save_screenshot(sbx_run *run, bool show_saved)
{
	sbx_relay_response resp = {0};

	/* Calc's restart on the saved file takes a few seconds of this. */
	if (sbx_relay_request(run->relay, "GET",
			      show_saved ? "/control/screenshot?show_saved=1"
					 : "/control/screenshot",
			      NULL, NULL, 0, false, 30000, &resp, NULL) < 0)
		return;
	if (resp.status == 200 && resp.len > 0) {
		run->res.screenshot_reloaded = resp.reloaded;
		if (sbx_rundir__write(run->res.run_dir, "screenshot.png", resp.body, resp.len,
				      NULL) == 0)
			run->res.screenshot = true;
	}
	sbx_relay_response_free(&resp);
}

void sbx_run__grade(sbx_run *run)
{
	_cleanup_free_ char *outdir = NULL, *log = NULL;
	sbx_error e = SBX_ERROR_INIT;
	double t = sbx_now_msf();
	int r;

	if (asprintf(&outdir, "%s/outputs", run->res.run_dir) < 0)
		return;
	if (run->o.grader) {
		/* Test-only faults, for runs labelled as tests (--test-label) only. */
		const char *fault = run->o.test ? getenv("SBX_TEST_GRADER_FAULT") : NULL;
		sbx_run_grader_opts go = {.fault = fault && *fault ? fault : NULL};

		if (asprintf(&log, "%s/grader.log", run->res.run_dir) >= 0)
			go.log_path = log;
		else
			log = NULL;
		r = sbx_run_grade_isolated(run->o.grader, run->task, outdir, &go, &run->res.grade,
					   &e);
	} else {
		r = sbx_run_grade_outputs(run->task, outdir, &run->res.grade, &e);
	}
	if (sbx_run__phase_end(run, SBX_PHASE_GRADE, t, r, "grader", &e) < 0)
		return;
	if (run->res.grade.error) {
		/* The commands print it with the result (run's summary, sweep's line). */
		sbx_log_debug("run '%s': %s", run->res.run_id, run->res.grade.error);
		return;
	}
	if (run->res.grade.report_text)
		sbx_rundir__write(run->res.run_dir, "grade.txt", run->res.grade.report_text,
				  strlen(run->res.grade.report_text), NULL);
	if (run->res.grade.report) {
		_cleanup_free_ char *json = sbx_json_print(run->res.grade.report);

		if (json)
			sbx_rundir__write(run->res.run_dir, "grade.json", json, strlen(json), NULL);
	}
}
