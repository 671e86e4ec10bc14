/* SPDX-License-Identifier: MIT */
/*
 * The episode's third phase: the agent started (or the oracle run), then
 * the wait for its end: complete_task, the deadline, the agent's exit, an
 * interrupt or the sandbox's death.
 */
#include <time.h>

#include "run-internal.h"
#include "sbx/run.h"

#define STATUS_POLL_MS 200
#define TICK_MS	       10
/* The longest one status long-poll holds the wait: an agent's exit, an
 * interrupt or a frame due are seen at most this late. */
#define WAIT_SLICE_MS 250

bool sbx_run__sandbox_dead(sbx_run *run, sbx_error *err)
{
	sbx_sandbox_status st;
	sbx_error e2 = SBX_ERROR_INIT;

	if (run->backend->ops->status(run->backend, &st, &e2) < 0)
		return false;
	if (st.running)
		return false;
	if (st.oom_killed) {
		sbx_error_replace(err, -ENOMEM, "sandbox '%s' was killed: out of memory",
				  run->backend->id);
		sbx_run__set_sandbox_failed(run, "oom", err);
	} else {
		sbx_error_replace(err, -ECHILD, "sandbox '%s' exited with status %d%s%s",
				  run->backend->id, st.exit_code, st.detail[0] ? ": " : "",
				  st.detail);
		sbx_run__set_sandbox_failed(run, "sandbox_died", err);
	}
	return true;
}

/*
 * One look at the episode. wait_ms > 0 lets the status request wait that
 * long for a change (the server's long-poll), so a waiting loop needs no
 * sleep of its own; 0 answers at once and asks the server at most every
 * STATUS_POLL_MS.
 */
static sbx_run_end check(sbx_run *run, int wait_ms)
{
	int64_t now = sbx_now_ms();

	if (run->o.interrupted && *run->o.interrupted)
		return SBX_END_INTERRUPTED;
	if (now >= run->deadline_ms)
		return SBX_END_DEADLINE;
	if (run->agent_started && sbx_agent__poll(&run->agent)) {
		run->res.agent_exit = run->agent.exit_code;
		/* It may have completed just before exiting. */
		return sbx_run__task_state(run, 0) == 1 ? SBX_END_COMPLETE_TASK
							: SBX_END_AGENT_EXIT;
	}
	if (wait_ms > 0 || now >= run->next_poll_ms) {
		int s = sbx_run__task_state(run, wait_ms);
		sbx_error e = SBX_ERROR_INIT;

		run->next_poll_ms = sbx_now_ms() + STATUS_POLL_MS;
		if (s == 1)
			return SBX_END_COMPLETE_TASK;
		if (s == 2)
			return SBX_END_DEADLINE;
		if (s < 0 && sbx_run__sandbox_dead(run, &e))
			return SBX_END_SANDBOX_DIED;
		if (s < 0 && wait_ms > 0) {
			/* No answer is no wait: keep the loop's pace, not a burst of execs. */
			struct timespec ts = {wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	return SBX_END_NONE;
}

sbx_run_end sbx_run_poll(sbx_run *run)
{
	return check(run, 0);
}

/* How long the next status request may wait: the slice, cut at the deadline and the next frame. */
static int wait_slice(const sbx_run *run)
{
	int64_t now = sbx_now_ms(), until = now + WAIT_SLICE_MS;

	if (run->deadline_ms < until)
		until = run->deadline_ms;
	if (sbx_run__recording(run) && run->next_frame_ms < until)
		until = run->next_frame_ms;
	return until > now ? (int)(until - now) : 1;
}

bool sbx_run_completed(sbx_run *run)
{
	return run->relay && run->ready && sbx_run__task_state(run, 0) == 1;
}

sbx_run_end sbx_run_wait(sbx_run *run)
{
	sbx_error err = SBX_ERROR_INIT;
	double t = sbx_now_msf();
	sbx_run_end end;
	int r;

	r = sbx_run__is_oracle(run) ? sbx_run__oracle_agent(run, &err)
	    : run->o.agent	    ? sbx_run__start_agent(run, &err)
				    : 0;
	if (r < 0) {
		sbx_run__phase_end(run, SBX_PHASE_AGENT, t, r, "agent", &err);
		return SBX_END_AGENT_EXIT;
	}
	/* The status long-poll is the wait; an older image's server answers at once, so
	 * then a short tick paces the loop. */
	while ((end = check(run, run->status_api == SBX_STATUS_CONTROL ? wait_slice(run) : 0)) ==
	       SBX_END_NONE) {
		sbx_run__record_frame(run);
		if (run->status_api != SBX_STATUS_CONTROL) {
			struct timespec ts = {0, TICK_MS * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	sbx_run__phase_end(run, SBX_PHASE_AGENT, t, 0, NULL, NULL);
	return end;
}
