/* SPDX-License-Identifier: MIT */
/*
 * The episode's state machine: prepare → launch → wait → finish, one file
 * per phase (lifecycle_prepare.c, lifecycle_launch.c, lifecycle_wait.c,
 * lifecycle_finish.c); this file holds the flow that runs them in turn and
 * the run object's accessors. Every failure after the sandbox exists still
 * reaches finish, which removes it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/log.h"
#include "sbx/run.h"
#include "sbx/warm.h"

const sbx_run_result *sbx_run_get_result(const sbx_run *run)
{
	return &run->res;
}

const sbx_task *sbx_run_get_task(const sbx_run *run)
{
	return run->task;
}

sbx_relay *sbx_run_get_relay(sbx_run *run)
{
	return run->relay;
}

const char *sbx_run_get_url(const sbx_run *run)
{
	return run->url;
}

/*
 * sweep --reuse: the slot's sandbox when it fits, else a new one made for
 * reuse with this run's image and limits, else (GUI, published) a cold
 * launch as always.
 */
static int launch_reused(sbx_run *run, const sbx_run_opts *opts, sbx_error *err)
{
	sbx_warm *w = TAKE_PTR(*opts->reuse_slot);
	const sbx_run_limits *l = &run->res.limits;
	int r;

	if (w && !sbx_run_warm_fits(run, w))
		sbx_warm_free(TAKE_PTR(w));
	if (!w && !run->task->gui && !run->task->harbor && !l->published &&
	    !l->resolved.engine_seccomp) {
		sbx_warm_opts wo = SBX_WARM_OPTS_INIT;
		sbx_error werr = SBX_ERROR_INIT;

		wo.image = run->res.image;
		wo.id = run->res.run_id;
		wo.engine = opts->engine;
		wo.ttl_s = l->resolved.timeout_s + l->resolved.grace_s + 60;
		wo.test = opts->test;
		wo.limits = l->resolved;
		wo.backend = opts->backend;
		wo.backend_userdata = opts->backend_userdata;
		wo.reuse = opts->reuse;
		r = sbx_warm_new(&w, &wo, &werr);
		if (r < 0) {
			/* -ENOTSUP (an image without reset in place) is said once, by warm.c. */
			if (r != -ENOTSUP)
				sbx_log_warning("reuse: %s; a single-use sandbox instead",
						sbx_error_message(&werr));
			w = NULL;
		} else if (!sbx_run_warm_fits(run, w)) {
			sbx_warm_free(TAKE_PTR(w));
		}
	}
	return w ? sbx_run_launch_warm(run, w, err) : sbx_run_launch(run, err);
}

int sbx_run_execute(const sbx_run_opts *opts, sbx_run **out, sbx_error *err)
{
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	sbx_error lerr = SBX_ERROR_INIT;
	sbx_run_end end;
	int r;

	r = sbx_run_prepare(&run, opts, err);
	if (r < 0)
		return r;
	if (opts->on_prepared)
		opts->on_prepared(run, opts->on_ready_userdata);
	if (opts->interrupted && *opts->interrupted) {
		/* Interrupted while preparing (a task's generator): no sandbox for it. */
		end = SBX_END_INTERRUPTED;
	} else if ((r = opts->reuse > 1 && opts->reuse_slot ? launch_reused(run, opts, &lerr)
							    : sbx_run_launch(run, &lerr)) < 0) {
		bool stopped = opts->interrupted && *opts->interrupted;

		/* Every launch failure reaches result.json: a step that did not record
		 * its own (first wins) is recorded here. */
		if (!stopped)
			sbx_run__fail(run, r, "launch", &lerr);
		end = stopped ? SBX_END_INTERRUPTED : SBX_END_NONE;
	} else {
		end = sbx_run_wait(run);
	}
	r = sbx_run_finish(run, end, err);
	if (opts->reuse > 1 && opts->reuse_slot)
		*opts->reuse_slot = sbx_run_take_warm(run);
	*out = TAKE_PTR(run);
	return r < 0 ? r : 0;
}

void sbx_run_free(sbx_run *run)
{
	if (!run)
		return;
	sbx_run__verifier_discard(run);
	if (run->agent_started && run->agent.pid > 0)
		sbx_agent__stop(&run->agent, 500);
	sbx_warm_free(run->kept_warm);
	sbx_relay_free(run->relay);
	if (run->backend) {
		if (run->backend->id && !run->o.keep)
			run->backend->ops->destroy(run->backend, NULL);
		run->backend->ops->free(run->backend);
	}
	sbx_task_free(run->task);
	sbx_free_all(run->url, run->connection, run->owner, run->res.run_id, run->res.run_dir,
		     run->unix_socket, run->res.task, run->res.error, run->res.error_kind,
		     run->res.reset_found, run->res.agent, run->res.agent_tail, run->res.image,
		     run->res.image_id, run->res.sandbox_id, run->res.backend, run->res.published,
		     run->res.endpoint, run->res.trajectory_error, run->res.verifier.rewards_json,
		     run->res.verifier.output_tail, run->res.verifier.error);
	sbx_run_grade_clear(&run->res.grade);
	sbx_provenance_clear(&run->res.provenance);
	free(run);
}
