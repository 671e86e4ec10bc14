/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A stand-in for one episode on a simulated engine, for sbx_sweep_opts.attempt:
 * the sandbox's life is real calls on the simulated backend (create, start,
 * copy in, status, copy out, destroy: their latencies and failures are the
 * engine's), the agent and the grade are draws (the agent's time from a
 * log-normal stretched by the engine's speed, a pass at a fixed rate). The
 * scheduler, the results file and the summary above it are the real ones.
 */

#include <stdatomic.h>
#include <stdint.h>

#include "sbx/sweep.h"
#include "sim_backend.h"

typedef struct sim_episode_config {
	sim_cluster *cluster;
	sim_latency agent; /* the agent phase on a nominal engine */
	double p_pass;	   /* the chance an episode that ran passes */
	/* Filled while it runs (arrays of sim_cluster_size entries, caller-allocated). */
	atomic_uint_fast64_t *results_on;     /* episodes with a result, per engine */
	atomic_int_fast64_t *last_attempt_ms; /* per engine: when its last attempt ended */
	atomic_uint_fast64_t attempts;
	atomic_uint_fast64_t cpu_ns; /* the stand-in's own CPU time, to tell it apart */
} sim_episode_config;

/* An sbx_sweep_attempt_fn; userdata is a sim_episode_config. */
int sim_episode_attempt(const sbx_sweep_attempt *a, sbx_sweep_record *out, void *userdata,
			sbx_error *err);

/*
 * A plan of n_tasks × n_agents × epochs episodes named "task<i>" and
 * "agent<j>", with a fresh id and pass@1, for a simulated sweep. NULL on OOM.
 */
sbx_sweep_plan *sim_plan_new(size_t n_tasks, size_t n_agents, unsigned epochs, unsigned retries);

/*
 * A prepared run of banking_reserve (from $SBX_SOURCE_ROOT/tasks, else
 * ./tasks) on the image "sim-image" with a 60 s timeout, its directory under
 * runs_dir: what serve's pool needs to ask whether a warm sandbox fits.
 */
int sim_fit_run(sbx_run **out, const char *runs_dir, const char *run_id, sbx_error *err);
