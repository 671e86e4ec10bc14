/* SPDX-License-Identifier: MIT */
/*
 * The episode's last phase: the agent stopped, the outputs collected and
 * graded, the logs saved, the relay closed, the sandbox removed (or reset
 * for its next episode), the trajectory and result.json written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "run-internal.h"
#include "rundir.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/log.h"
#include "sbx/run.h"

/* How long an agent may take to exit by itself after complete_task. */
#define AGENT_EXIT_GRACE_MS 500

/* The last n non-empty lines of agent.log, joined by " | ", or NULL. */
static char *agent_log_tail(const char *run_dir, int n)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	sbx_error e = SBX_ERROR_INIT;
	size_t len, end, start;
	int lines = 0;
	char *out;

	if (asprintf(&path, "%s/agent.log", run_dir) < 0 ||
	    sbx_file_read_capped(AT_FDCWD, path, 16 << 20, &text, &len, &e) < 0)
		return NULL;
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	end = len;
	start = len;
	while (start > 0 && lines < n) {
		start--;
		if (text[start] == '\n' && start + 1 < end)
			lines++;
	}
	if (lines == n)
		start++;
	out = strndup(text + start, end - start);
	for (char *p = out; p && *p; p++)
		if (*p == '\n')
			*p = '|';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' '; /* the agent's bytes go to a terminal */
	return out;
}

/* ---- finish ----------------------------------------------------------------- */

/* The outputs into runs/<id>/outputs, then the grade; failures are recorded in res. */
static void collect_and_grade(sbx_run *run, sbx_run_end end)
{
	_cleanup_free_ char *outdir = NULL;
	sbx_error e = SBX_ERROR_INIT;
	double t;
	int r;

	if (run->task->harbor) {
		sbx_run__verify(run);
		return;
	}
	/* PID 1 restarts Calc only while the sandbox is not stopping. */
	if (run->task->gui)
		sbx_run__save_screenshot(run,
					 end == SBX_END_COMPLETE_TASK || end == SBX_END_AGENT_EXIT);
	t = sbx_now_msf();
	if (asprintf(&outdir, "%s/outputs", run->res.run_dir) < 0) {
		outdir = NULL;
		sbx_run__fail(run, sbx_error_set(&e, -ENOMEM, "out of memory"), "host", &e);
		return;
	}
	/*
	 * Through the server on a warm stream; the exec'd tar when that fails,
	 * or straight away past the deadline: the server may be what hung, and
	 * the host does not wait on it again.
	 */
	r = end == SBX_END_DEADLINE ? -ETIMEDOUT
	    : run->status_api != SBX_STATUS_CONTROL
		    ? -ENOTSUP /* an older image: no /control */
		    : sbx_collect__outputs(run->relay, run->task, outdir, &e);
	if (r < 0) {
		sbx_log_debug("collecting through the server: %s; using tar",
			      sbx_error_message(&e));
		sbx_error_clear(&e);
		r = run->backend->ops->copy_out(run->backend, SBX_SANDBOX_WORKSPACE, outdir, &e);
	}
	sbx_run__phase_end(run, SBX_PHASE_COPY_OUT, t, 0, NULL, NULL);
	if (r == -EFBIG || r == -E2BIG) {
		/* Outputs over the caps: what the agent left, not a fault of ours. */
		sbx_run__set_sandbox_failed(run, "outputs_too_large", &e);
	} else if (r < 0 && r != -EPERM) {
		/* A refused entry is the agent's doing (below); a dead sandbox is
		 * the sandbox's, anything else ours. */
		if (!sbx_run__sandbox_dead(run, &e))
			sbx_run__fail(run, r, "copy_out", &e);
	} else if (r == -EPERM) {
		sbx_log_warning("copy out: %s", sbx_error_message(&e));
	}
	if (!run->res.error)
		sbx_run__grade(run);
}

/* After the relay is closed, so the transcript is complete. Not fatal: result.json says why. */
static void write_trajectory(sbx_run *run)
{
	sbx_trajectory_info ti = {
		.run_dir = run->res.run_dir,
		.session_id = run->res.run_id,
		.prompt = run->task && run->task->prompt ? run->task->prompt : "",
		.agent = run->res.agent ? run->res.agent : "external",
		.started_at = run->res.started_at,
	};
	sbx_error e = SBX_ERROR_INIT;

	if (sbx_run_trajectory_write(&ti, &e) < 0)
		run->res.trajectory_error = strdup(e.msg);
	else
		run->res.trajectory = true;
}

/* The run's status from how it ended and its grade, unless a failure already set it. */
static void set_status(sbx_run *run, sbx_run_end end)
{
	if (!run->res.error) {
		if (end == SBX_END_INTERRUPTED)
			run->res.status = SBX_RUN_INTERRUPTED;
		else if (end == SBX_END_DEADLINE)
			run->res.status = SBX_RUN_TIMEOUT;
		else if (!run->res.grade.graded)
			run->res.status = SBX_RUN_FAIL;
		else if (run->res.grade.status == SBX_GRADE_PASS)
			run->res.status = SBX_RUN_PASS;
		else if (run->res.grade.status == SBX_GRADE_PARTIAL)
			run->res.status = SBX_RUN_PARTIAL;
		else
			run->res.status = SBX_RUN_FAIL;
		/* Exited non-zero (or could not start: 126, 127) before complete_task:
		 * graded, but not a real attempt, and never mixed with one. */
		if (end == SBX_END_AGENT_EXIT && run->res.agent_exit != 0 &&
		    run->res.agent_exit != -1) {
			run->res.status = SBX_RUN_AGENT_ERROR;
			run->res.agent_tail = agent_log_tail(run->res.run_dir, 3);
		}
	} else if (end == SBX_END_INTERRUPTED) {
		run->res.status = SBX_RUN_INTERRUPTED;
	}
}

int sbx_run_finish(sbx_run *run, sbx_run_end end, sbx_error *err)
{
	_cleanup_free_ char *json = NULL;
	bool alive = run->launched && run->backend && run->backend->id && !run->res.error;
	double t;
	int r;

	if (run->finished)
		return 0;
	run->finished = true;
	run->res.end = end;
	if (run->agent_started) {
		/* An agent that called complete_task usually exits right after: let it,
		 * so a clean agent is not recorded as killed. */
		if (end == SBX_END_COMPLETE_TASK)
			sbx_agent__wait(&run->agent, AGENT_EXIT_GRACE_MS);
		sbx_agent__stop(&run->agent, 2000);
		run->res.agent_exit = run->agent.exit_code;
		run->res.agent_stopped = run->agent.stopped;
	}
	if (run->relay)
		sbx_relay_close_listener(run->relay);

	if (alive && end != SBX_END_INTERRUPTED && end != SBX_END_SANDBOX_DIED)
		collect_and_grade(run, end);
	sbx_run__trace(run, "outputs graded");
	if (run->backend && run->backend->id)
		sbx_run__save_logs(run);
	sbx_run__trace(run, "logs saved");
	if (run->relay) {
		sbx_relay *relay = run->relay;

		sbx_relay_get_stats(relay, &run->res.relay);
		run->relay = NULL;
		sbx_relay_free(relay);
		sbx_run__trace(run, "relay closed");
	}
	if (run->backend && run->backend->id) {
		if (run->o.keep) {
			run->res.kept = true;
		} else if (alive && !run->res.error && end != SBX_END_INTERRUPTED &&
			   end != SBX_END_SANDBOX_DIED && run->res.warm &&
			   run->res.reused + 1 < run->warm_info.reuse &&
			   !(run->o.interrupted && *run->o.interrupted)) {
			sbx_run__reset_in_place(run);
		} else {
			sbx_error de = SBX_ERROR_INIT;

			t = sbx_now_msf();
			r = run->backend->ops->destroy(run->backend, &de);
			sbx_run__phase_end(run, SBX_PHASE_REMOVE, t, r, "remove", &de);
		}
	}

	/* The verifier's sandbox: its removal joined, or made ahead and not used. */
	sbx_run__verifier_discard(run);
	write_trajectory(run);
	sbx_run__trace(run, "trajectory written");

	set_status(run, end);
	/* Not graded (fail, or timeout, agent_error as ended), and the reason said. */
	if (!run->res.error && run->res.grade.error) {
		run->res.error = strdup(run->res.grade.error);
		run->res.error_kind = strdup("grade_error");
	}
	run->res.finished_at = sbx_run__real_ms();
	run->res.total_ms = (double)(sbx_now_ms() - run->t0);
	json = sbx_run_result_json(&run->res);
	if (!json)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return sbx_rundir__write(run->res.run_dir, "result.json", json, strlen(json), err);
}
