/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Simulated engines behind sbx/backend.h, for tests and benchmarks of what
 * sits above the seam (the sweep scheduler, serve's pool) at a scale no
 * machine here can run: a thousand engines, a million sandboxes. No container
 * is made. Each operation takes a time drawn from the engine's latency
 * distribution (log-normal around a median), slept for real but shrunk by the
 * cluster's time scale, and may fail the ways engines fail:
 *
 *   refused create   create returns -EAGAIN at a drawn rate, or -EBUSY when
 *                    the engine already holds `capacity` sandboxes;
 *   a dying sandbox  status reports it exited (137) at a drawn rate;
 *   a hung engine    from operation `hang_after` on, every call waits the
 *                    operation timeout and returns -ETIMEDOUT;
 *   a dead engine    from operation `fail_after` on, every call returns
 *                    -ECONNREFUSED at once;
 *   a slow engine    speed < 1 stretches every latency.
 *
 * Like tests/run/backend_local.c this isolates nothing and only test and
 * bench binaries link it: no command line can select it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/backend.h"

/* A log-normal latency: median_ms, and sigma of its logarithm (0: always the median). */
typedef struct sim_latency {
	double median_ms;
	double sigma;
} sim_latency;

typedef struct sim_engine_spec {
	double speed;	   /* 1: nominal; every latency is divided by it */
	unsigned capacity; /* sandboxes at once; 0: unlimited */
	sim_latency create, start, copy, exec, remove;
	double p_refuse;      /* a create refused (-EAGAIN) */
	double p_die;	      /* a started sandbox found dead by status */
	int64_t hang_after;   /* operations before it stops answering; <0: never */
	int64_t fail_after;   /* operations before it refuses everything; <0: never */
	double op_timeout_ms; /* what a call to a hung engine waits before -ETIMEDOUT */
} sim_engine_spec;

/* A nominal engine: Docker-like medians (create 60 ms, start 90, copy 8, exec 5, remove 40). */
#define SIM_ENGINE_SPEC_INIT                                                                       \
	{                                                                                          \
		.speed = 1, .create = {60, 0.3}, .start = {90, 0.3}, .copy = {8, 0.4},             \
		.exec = {5, 0.4}, .remove = {40, 0.3}, .hang_after = -1, .fail_after = -1,         \
		.op_timeout_ms = 30000                                                             \
	}

/* What one engine did, read with sim_cluster_stats. */
typedef struct sim_engine_stats {
	uint64_t ops, creates, refused, removed, died, timeouts, failed;
	unsigned live, peak; /* sandboxes now and at most */
	int64_t broken_ms;   /* sbx_now_ms when it first hung or refused everything; 0: never */
} sim_engine_stats;

typedef struct sim_cluster sim_cluster;

/*
 * n engines, each from specs[i] (copied). time_scale multiplies every slept
 * time (1: real time; 0.001: a simulated second takes a millisecond; 0: no
 * sleeping at all). seed makes the draws repeatable for a given order of
 * calls. Returns NULL on OOM.
 */
sim_cluster *sim_cluster_new(const sim_engine_spec *specs, size_t n, double time_scale,
			     uint64_t seed);
void sim_cluster_free(sim_cluster *c);

size_t sim_cluster_size(const sim_cluster *c);
double sim_cluster_speed(const sim_cluster *c, size_t i);
double sim_cluster_time_scale(const sim_cluster *c);

/* A copy of engine i's counters (taken under its lock). */
void sim_cluster_stats(sim_cluster *c, size_t i, sim_engine_stats *out);

/*
 * The engine an engine URL names: "sim://<index>". -EINVAL for anything
 * else or an index out of range.
 */
int sim_cluster_engine_index(const sim_cluster *c, const char *url, size_t *out);

/*
 * An sbx_run_backend_fn: a backend holding one simulated sandbox on the
 * engine `engine` names ("sim://<i>"; NULL: engine 0). userdata is the
 * sim_cluster. Free with b->ops->free(b), after destroy.
 */
int sim_backend_new(sbx_backend **out, const char *engine, void *userdata, sbx_error *err);

/* A draw from U[0,1) on the calling thread's generator (seeded from the cluster's seed). */
double sim_uniform(sim_cluster *c);

/* A log-normal draw around l, in milliseconds, not divided by any speed. */
double sim_draw_ms(sim_cluster *c, const sim_latency *l);

/* Sleeps ms simulated milliseconds (times the cluster's time scale). */
void sim_sleep_ms(const sim_cluster *c, double ms);
