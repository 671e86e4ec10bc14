/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One episode, end to end:
 *
 *   prepare  load the task, make runs/<run-id>/, record provenance
 *   launch   create the sandbox (hardened), start it, copy the starting files
 *            in, wait until the server answers, open the relay on 127.0.0.1
 *   agent    the agent works through the relay (an external one, a host
 *            command, or a built-in: oracle, demo)
 *   finish   on the first of complete_task, agent exit, deadline or
 *            interrupt: copy the outputs out, grade, remove the sandbox,
 *            write result.json atomically
 *
 * sbx_run_execute does all of it; `sandboxctl mcp` drives the steps itself.
 * The sandbox is reached only through a backend (sbx/backend.h). What an
 * episode leaves is in sbx/result.h, where its task came from in
 * sbx/provenance.h, sandboxes started ahead in sbx/warm.h.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sbx/backend.h"
#include "sbx/cleanup.h"
#include "sbx/error.h"
#include "sbx/relay.h"
#include "sbx/result.h"
#include "sbx/task.h"

/*
 * Grades the outputs of task collected under outputs_dir into *out, in this
 * process. 0, or a negative errno with err (the task's grading could not
 * run: its oracle, its config). Strings in *out are malloc'd
 * (sbx_run_grade_clear).
 */
int sbx_run_grade_outputs(const sbx_task *task, const char *outputs_dir, sbx_run_grade *out,
			  sbx_error *err);

/* The grading child's limits (sbx_run_grade_isolated). */
#define SBX_RUN_GRADER_CPU_S	  120
#define SBX_RUN_GRADER_WALL_S	  300
#define SBX_RUN_GRADER_MEMORY	  (2ULL * 1024 * 1024 * 1024) /* address space; none under ASan */
#define SBX_RUN_GRADER_ANSWER_MAX (64 << 20)

/* sbx_run_grade_isolated's options; all zero is the defaults. */
typedef struct sbx_run_grader_opts {
	const char *log_path; /* the child's stderr (removed when empty); NULL: nowhere */
	/* A test-only fault the child makes before grading: "segv", "abort", "cpu",
	 * "memory", "garbage", "flood"; NULL: none. */
	const char *fault;
	unsigned wall_s; /* 0: SBX_RUN_GRADER_WALL_S */
} sbx_run_grader_opts;

/*
 * As sbx_run_grade_outputs, in a child process: `program __grade ...`, a
 * program whose main hands that verb to sbx_run_grader_main (sandbox-grader,
 * or sandboxctl itself: "/proc/self/exe"). The child gets no core dumps,
 * SBX_RUN_GRADER_CPU_S of CPU, SBX_RUN_GRADER_MEMORY of address space, its
 * own process group, and dies with the calling thread; past opts->wall_s it
 * is killed. opts may be NULL. Returns 0 with *out graded, 0 with
 * out->error set when the child crashed, ran past a limit or answered
 * garbage, or a negative errno with err when the grader reported its own
 * error (as in process) or could not start.
 */
int sbx_run_grade_isolated(const char *program, const sbx_task *task, const char *outputs_dir,
			   const sbx_run_grader_opts *opts, sbx_run_grade *out, sbx_error *err);

/*
 * The grading child's main: argv[0] is "__grade". Grades and writes the
 * answer (one JSON object) to stdout. Exit status 0 once answered.
 */
int sbx_run_grader_main(int argc, char **argv);

typedef struct sbx_run sbx_run;

/* Called once the endpoint is up (to print it); may be NULL. */
typedef void (*sbx_run_ready_fn)(sbx_run *run, void *userdata);

#define SBX_RUN_OPTS_VERSION 1

typedef struct sbx_run_opts {
	unsigned version;
	const char *task;      /* name or path, required */
	const char *tasks_dir; /* NULL: sbx_task_dir_default() */
	const char *image;     /* NULL: the slim image, or the full one for GUI tasks */
	/*
	 * NULL: wait for an outside agent; "oracle": copy the oracle in as the
	 * output; "demo": the scripted sandbox-demo-agent; anything else: a
	 * shell command run on the host with the endpoint in its environment.
	 */
	const char *agent;
	const char *demo_agent_path; /* NULL: looked up next to the program, then in PATH */
	const char *runs_dir;	     /* NULL: "runs" */
	const char *run_id;	     /* NULL: generated */
	/*
	 * Limits: 0 (or "") takes the task's value, else the defaults (2 GiB,
	 * 2 CPUs, 256 pids, 600 s, grace 30 s); engine_seccomp: the engine's
	 * default seccomp profile instead of ours (images/seccomp/sandbox.json).
	 */
	sbx_limits limits;
	uint32_t ready_timeout_s; /* 0: 30 (120 for GUI tasks) */
	uint16_t port;		  /* relay port; 0: any free one */
	bool published;		  /* --network published */
	bool keep;		  /* leave the sandbox behind */
	bool test;		  /* label objects as test objects */
	bool quiet_agent;	  /* agent stdout/stderr only into the run directory */
	/*
	 * Grade in a child process (sbx_run_grade_isolated) with this program;
	 * the commands pass sandbox-grader's path. NULL: in the run's own process
	 * (sbx_run_grade_outputs), as the tests do.
	 */
	const char *grader;
	sbx_run_ready_fn on_ready;
	void *on_ready_userdata;
	/* sbx_run_execute: called once prepared, before launch (with on_ready_userdata). */
	sbx_run_ready_fn on_prepared;
	/*
	 * sbx_run_execute with reuse > 1 (sweep --reuse N): *reuse_slot is the
	 * previous episode's sandbox, reset clean (or NULL). It runs this episode
	 * when it fits, else a new one is started for reuse (a GUI or published
	 * run starts as always, single use); after the finish *reuse_slot holds
	 * it again when it was reset clean with episodes left. The caller frees
	 * what is left there (sbx_warm_free) when done.
	 */
	uint32_t reuse;
	struct sbx_warm **reuse_slot;
	/* Set (by a signal handler) to stop the run: the result says interrupted. */
	const volatile sig_atomic_t *interrupted;
	/* Seedable tasks: generate a fresh instance from this seed (recorded in result.json). */
	bool seeded;
	uint64_t seed;
	/* The engine: "unix:///path" or "tcp://host:port"; NULL: $DOCKER_HOST, else the default. */
	const char *engine;
	/*
	 * Where the relay listens: NULL or "tcp": 127.0.0.1:port; "unix":
	 * runs/<id>/relay.sock; "unix:PATH": PATH. A unix socket is 0600; the
	 * agent's URLs are then http://localhost/<token>/... and
	 * SANDBOX_UNIX_SOCKET names the socket (curl --unix-socket).
	 */
	const char *listen;
	/*
	 * GUI tasks: a screenshot every record_s seconds of the agent phase into
	 * frames/ (at most SBX_RUN_FRAMES_MAX, SBX_RUN_FRAMES_BYTES). 0: every
	 * SBX_RUN_RECORD_DEFAULT_S; < 0: off.
	 */
	double record_s;
	/* Provenance read once per task folder (a sweep's); NULL: read for this run. */
	sbx_provenance_cache *provenance_cache;
	/*
	 * NULL: the hardened Docker backend (sbx_backend_docker_new_at). Only
	 * tests pass another; no command line reaches this, so a user can never
	 * lose the sandbox's isolation by a flag.
	 */
	sbx_run_backend_fn backend;
	void *backend_userdata;
} sbx_run_opts;

/* The limits a run gets when neither a flag nor the task sets them ('tasks show' prints them). */
#define SBX_RUN_DEFAULT_TIMEOUT_S 600
#define SBX_RUN_DEFAULT_MEMORY	  (2ULL * 1024 * 1024 * 1024)
#define SBX_RUN_DEFAULT_CPUS	  2.0
#define SBX_RUN_DEFAULT_PIDS	  256
#define SBX_RUN_DEFAULT_GRACE_S	  30
/* The same as an initializer for sbx_limits_resolve's last source. */
#define SBX_RUN_DEFAULT_LIMITS                                                                     \
	{                                                                                          \
		.timeout_s = SBX_RUN_DEFAULT_TIMEOUT_S, .memory = SBX_RUN_DEFAULT_MEMORY,          \
		.cpus = SBX_RUN_DEFAULT_CPUS, .pids = SBX_RUN_DEFAULT_PIDS,                        \
		.grace_s = SBX_RUN_DEFAULT_GRACE_S                                                 \
	}

#define SBX_RUN_RECORD_DEFAULT_S 2.0
#define SBX_RUN_FRAMES_MAX	 600
#define SBX_RUN_FRAMES_BYTES	 (128ull << 20)

#define SBX_RUN_OPTS_INIT                                                                          \
	{                                                                                          \
		.version = SBX_RUN_OPTS_VERSION                                                    \
	}

/* ---- the steps ---- */

/*
 * Loads the task, applies limits, creates the run directory (task snapshot,
 * inputs) and records provenance. No engine contact. *out is freed with
 * sbx_run_free. Errors here are configuration errors (exit 2).
 */
int sbx_run_prepare(sbx_run **out, const sbx_run_opts *opts, sbx_error *err);

/* The image a run of t uses without --image: the task's own, else the full image for
 * gui/libreoffice tasks, else the slim one. */
const char *sbx_run_task_image(const sbx_task *t);

/*
 * Creates and starts the sandbox, copies the starting files in, waits for
 * the server and opens the relay. On failure the result is an
 * infrastructure error (already recorded; call sbx_run_finish to clean up).
 */
int sbx_run_launch(sbx_run *run, sbx_error *err);

/*
 * Starts the agent (opts.agent) and waits for the end of the episode:
 * complete_task, agent exit, deadline, interrupt or a dead sandbox.
 * Returns the reason.
 */
sbx_run_end sbx_run_wait(sbx_run *run);

/*
 * Checks once, without waiting: returns SBX_END_NONE while the episode goes
 * on. Used by loops that have their own work (the stdio server).
 */
sbx_run_end sbx_run_poll(sbx_run *run);

/*
 * True when the sandbox's server says the task was completed (complete_task),
 * whatever the time: for a caller that ends the episode at the deadline and
 * must not call a completed one a timeout. One bounded status request.
 */
bool sbx_run_completed(sbx_run *run);

/*
 * Ends the episode: stops the agent, copies the outputs out, grades, removes
 * the sandbox (unless keep), writes result.json. end says why it ended.
 * Safe to call after a failed launch. Returns 0 when result.json was written.
 */
int sbx_run_finish(sbx_run *run, sbx_run_end end, sbx_error *err);

/*
 * `sandboxctl mcp`: serves the sandbox as an MCP stdio server. Each line read
 * from in_fd (one JSON-RPC message) is POSTed to /mcp through the relay (so
 * it is in the transcript), and each message of the answer (JSON or SSE) is
 * written to out_fd as one line. Returns when the client closes in_fd, the
 * task is completed, the deadline passes or the run is interrupted.
 */
sbx_run_end sbx_run_serve_stdio(sbx_run *run, int in_fd, int out_fd);

/*
 * Everything at once: prepare, launch, wait, finish. Returns 0 when a result
 * was written (read its status). A prepare failure (a configuration error)
 * returns its -errno and leaves *out alone; past prepare *out is always set
 * (free with sbx_run_free), and a negative return then means result.json
 * could not be written.
 */
int sbx_run_execute(const sbx_run_opts *opts, sbx_run **out, sbx_error *err);

/*
 * Checks, before any sandbox exists, that agent (sbx_run_opts.agent) can
 * start: NULL (an outside agent) and "oracle"; "demo" and "llm ..." found
 * (demo_agent_path as in sbx_run_opts), the model agent's options checked by
 * the model agent itself (--check: model, api, base URL); a shell command
 * whose first word is a path to an executable file, a program in PATH, or
 * the shell's own (a builtin, a keyword, an assignment, quoting). sbx_run_prepare
 * calls it; a sweep calls it for every agent before its first episode.
 * 0, or -ENOENT/-EINVAL with err saying what (a "did you mean" for a
 * mistyped built-in name).
 */
int sbx_run_check_agent(const char *agent, const char *demo_agent_path, sbx_error *err);

const sbx_run_result *sbx_run_get_result(const sbx_run *run);
const sbx_task *sbx_run_get_task(const sbx_run *run);
sbx_relay *sbx_run_get_relay(sbx_run *run);
/* "http://127.0.0.1:PORT" once launched, else NULL. */
const char *sbx_run_get_url(const sbx_run *run);

/*
 * connection.json's one line (the agent URLs with the relay's token, the
 * Authorization value, the deadline) once launched, else NULL. Also in
 * runs/<id>/connection.json, mode 0600.
 */
const char *sbx_run_get_connection(const sbx_run *run);

/* Removes the sandbox if it still exists (unless keep) and frees. Accepts NULL. */
void sbx_run_free(sbx_run *run);
SBX_DEFINE_CLEANUP(sbx_run, sbx_run_free)
