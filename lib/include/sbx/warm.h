/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Warm sandboxes (`sandboxctl serve`'s pool, `sweep --reuse`): started
 * ahead of any task, then claimed by an episode (sbx_run_launch_warm) or
 * used as they stand (/v1/sandboxes).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/backend.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/error.h"
#include "sbx/task.h"

typedef struct sbx_run sbx_run;

/*
 * A sandbox created and started ahead of any task, its server answering,
 * waiting to be claimed by one episode (never reused). Its PID 1 ends it at
 * its deadline on its own, so a killed service leaves nothing running.
 */
typedef struct sbx_warm sbx_warm;

#define SBX_WARM_OPTS_VERSION 1

typedef struct sbx_warm_opts {
	unsigned version;
	const char *image;  /* required */
	const char *id;	    /* its sandboxctl.run-id label, required (e.g. "<service>-pool-3") */
	const char *engine; /* as sbx_run_opts.engine */
	uint32_t ttl_s;	    /* PID 1's deadline, from now; 0: 600 */
	uint32_t ready_timeout_s; /* 0: 30 */
	bool test;
	/* The limits it is created with (memory, CPUs, pids, runtime, seccomp); 0/"":
	 * the defaults (as sbx_run_prepare's). Its deadline is ttl_s, not timeout_s. */
	sbx_limits limits;
	/* As sbx_run_opts.backend: the Docker backend unless a test passes another. */
	sbx_run_backend_fn backend;
	void *backend_userdata;
	/*
	 * Episodes it may serve (0, 1: one, the default): past the first, each is
	 * preceded by a reset in place (PID 1 and the spawner, checked), and a
	 * sandbox whose reset fails or finds anything is removed, never served.
	 */
	uint32_t reuse;
} sbx_warm_opts;

#define SBX_WARM_OPTS_INIT                                                                         \
	{                                                                                          \
		.version = SBX_WARM_OPTS_VERSION                                                   \
	}

typedef struct sbx_warm_info {
	char image[256];
	char id[160];
	char container[80]; /* the engine's id of the sandbox, once created */
	/* Memory, CPUs, pids, runtime and seccomp profile it was created with (no
	 * deadline: an episode brings its own). */
	sbx_limits limits;
	int64_t created, deadline; /* unix seconds */
	double create_ms, start_ms, ready_ms;
	uint32_t reuse;	 /* episodes it may serve (sbx_warm_opts.reuse, at least 1) */
	uint32_t reused; /* episodes it has served */
	/* The last reset (reused > 0): the host's whole round trip and PID 1's parts. */
	double reset_ms, reset_kill_ms, reset_agent_ms, reset_clean_ms, reset_verify_ms;
} sbx_warm_info;

/*
 * Creates and starts a hardened sandbox with no task and waits until its
 * server answers /health. Blocks (hundreds of ms). On failure nothing is
 * left behind. Free (and remove) with sbx_warm_free. -ENOTSUP: reuse > 1 on
 * an image built before reset in place (a warning says so once per image).
 */
int sbx_warm_new(sbx_warm **out, const sbx_warm_opts *opts, sbx_error *err);
const sbx_warm_info *sbx_warm_get_info(const sbx_warm *w);
/* Removes the sandbox (unless claimed) and frees. Accepts NULL. */
void sbx_warm_free(sbx_warm *w);
SBX_DEFINE_CLEANUP(sbx_warm, sbx_warm_free)

/*
 * A warm sandbox used as it stands, with no task (`serve`'s /v1/sandboxes):
 * true when w has this image and these limits (runtime NULL: the engine's
 * default), the engine's seccomp profile not asked for, and PID 1's
 * deadline at or after until_s (unix seconds).
 */
bool sbx_warm_fits(const sbx_warm *w, const char *image, uint64_t memory, double cpus,
		   uint32_t pids, const char *runtime, int64_t until_s);

/*
 * Removes the sandbox now, while other threads may still be in
 * sbx_warm_request on it (theirs then fail); sbx_warm_free frees it later.
 */
void sbx_warm_destroy(sbx_warm *w);

/*
 * One HTTP request to w's server (the sandbox's /control API) on one of its
 * open bridge streams (kept between calls, at most 8 idle; a new one is a
 * docker exec). body (len bytes, NULL: none) is sent as is; the answer's
 * body is appended to answer (NULL: dropped; -EFBIG past its max);
 * timeout_ms bounds the exchange. 0 with *status, or a negative errno.
 * Thread-safe.
 */
int sbx_warm_request(sbx_warm *w, const char *method, const char *path, const void *body,
		     size_t len, int timeout_ms, int *status, sbx_buf *answer, sbx_error *err);

/*
 * Resets w in place for its next user (`serve`'s /v1/sandboxes, whose
 * sandboxes have no run): as between two episodes (sbx_warm_opts.reuse),
 * PID 1 kills every process of the sandbox's users, empties the writable
 * places, starts a fresh server and verifies; its idle streams carry the
 * order and then reach the new server. No request may be under way on w.
 * 0 clean (info.reused counted); < 0 the reset failed, found residue or
 * w's reuse is spent (-ESTALE): the caller removes w (sbx_warm_free).
 */
int sbx_warm_reset(sbx_warm *w, sbx_error *err);

/* True when w can serve run: same image and limits, and its deadline covers the run's. */
bool sbx_run_warm_fits(const sbx_run *run, const sbx_warm *w);

/*
 * launch for a prepared run on a warm sandbox that fits (sbx_run_warm_fits):
 * takes w (freed here, whatever happens), opens the relay, copies the files
 * in and waits for the server, ending where sbx_run_launch ends. The run's
 * deadline counts from now; the sandbox's PID 1 keeps the pool's (later)
 * one. Failures are recorded as in sbx_run_launch (call sbx_run_finish).
 */
int sbx_run_launch_warm(sbx_run *run, sbx_warm *w, sbx_error *err);

/*
 * After sbx_run_finish: the sandbox, reset clean for its next episode, when
 * it came from a warm sandbox with reuse left (sbx_warm_opts.reuse) and the
 * episode ended normally; else NULL (it was removed: single use, reuse
 * spent, or retired by a reset that failed or found residue). The caller
 * owns it.
 */
sbx_warm *sbx_run_take_warm(sbx_run *run);
