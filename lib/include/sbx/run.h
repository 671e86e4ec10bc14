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
 * The sandbox is reached only through a backend (sbx/backend.h).
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sbx/backend.h"
#include "sbx/buf.h"
#include "sbx/error.h"
#include "sbx/grade.h"
#include "sbx/relay.h"
#include "sbx/task.h"

typedef enum sbx_run_status {
	SBX_RUN_PASS = 0,
	SBX_RUN_PARTIAL,
	SBX_RUN_FAIL,
	SBX_RUN_TIMEOUT,     /* the deadline passed; graded anyway */
	SBX_RUN_INTERRUPTED, /* SIGINT/SIGTERM; not graded */
	SBX_RUN_INFRA_ERROR, /* the engine, the image or the host failed: the only retryable class
			      */
	SBX_RUN_AGENT_ERROR, /* the agent exited non-zero or never started before complete_task;
				graded, flagged */
	SBX_RUN_SANDBOX_FAILED, /* the sandbox's own processes died or misbehaved (the agent's
				   side); graded where outputs can still be read */
} sbx_run_status;

/*
 * "pass", "partial", "fail", "timeout", "interrupted", "infra_error",
 * "agent_error", "sandbox_failed".
 */
const char *sbx_run_status_name(sbx_run_status s);

/*
 * The class a status belongs to: "task" (pass, partial, fail, timeout: a
 * real attempt), "agent" (agent_error, sandbox_failed: the attempt failed on
 * the agent's side, a result all the same), "interrupted", or
 * "infrastructure" (infra_error: the only class worth retrying).
 */
const char *sbx_run_outcome_name(sbx_run_status s);

typedef enum sbx_run_phase {
	SBX_PHASE_CREATE = 0,
	SBX_PHASE_START,
	SBX_PHASE_COPY_IN,
	SBX_PHASE_READY,
	SBX_PHASE_AGENT,
	SBX_PHASE_COPY_OUT,
	SBX_PHASE_GRADE,
	SBX_PHASE_REMOVE,
	SBX_PHASE_COUNT,
} sbx_run_phase;

/* "create", "start", "copy_in", "ready", "agent", "copy_out", "grade", "remove". */
const char *sbx_run_phase_name(sbx_run_phase p);

typedef enum sbx_run_end {
	SBX_END_NONE = 0,
	SBX_END_COMPLETE_TASK, /* the agent called complete_task or POST /task/complete */
	SBX_END_AGENT_EXIT,    /* the agent process exited */
	SBX_END_DEADLINE,
	SBX_END_INTERRUPTED,
	SBX_END_CLIENT_EOF, /* `sandboxctl mcp`: the client closed stdin */
	SBX_END_SANDBOX_DIED,
} sbx_run_end;

/* "complete_task", "agent_exit", "deadline", "interrupted", "client_eof", "sandbox_died". */
const char *sbx_run_end_name(sbx_run_end e);

/* What grading produced: by sbx_run_grade_outputs, sbx_run_grade_isolated or the grade hook. */
typedef struct sbx_run_grade {
	bool graded;
	sbx_grade_status status; /* the grader's own status, not its name */
	double score;		 /* 0..1 */
	uint64_t cells_graded, cells_matched;
	/* How the graded formula values were computed: "sandbox" (the output held them),
	 * "native" (the grader computed some), "none" (no formulas). */
	char recalc[16];
	uint64_t recalc_formulas, recalc_native, recalc_unsupported;
	char *report_text; /* malloc'd, may be NULL */
	char *report_json; /* malloc'd JSON text, may be NULL */
	/*
	 * A grade error (graded is then false): why no grade could be made of
	 * these outputs, one line, malloc'd: "grader crashed: signal 11 (SIGSEGV)",
	 * "grader exceeded its 2 GiB memory limit". result.json: status fail (or
	 * timeout, agent_error), error.kind "grade_error"; never retried.
	 */
	char *error;
} sbx_run_grade;

/* Frees what g holds and zeroes it; g may be NULL. */
void sbx_run_grade_clear(sbx_run_grade *g);

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

/*
 * Grades the outputs of task collected under outputs_dir into *out, in the
 * run's process: used when sbx_run_opts.grader is NULL (tests). The grader
 * is below lib/run (lib/grade, docs/ARCHITECTURE.md): the commands point
 * this at their cmd_run__grade, which only calls sbx_run_grade_outputs, and
 * set grader, so their episodes grade in a child process.
 */
typedef int (*sbx_run_grade_fn)(const sbx_task *task, const char *outputs_dir, sbx_run_grade *out,
				void *userdata, sbx_error *err);

typedef struct sbx_run sbx_run;

/*
 * Makes the backend a launch runs on (engine: sbx_run_opts.engine). The run
 * owns *out from then on and frees it with b->ops->free.
 */
typedef int (*sbx_run_backend_fn)(sbx_backend **out, const char *engine, void *userdata,
				  sbx_error *err);

/* Called once the endpoint is up (to print it); may be NULL. */
typedef void (*sbx_run_ready_fn)(sbx_run *run, void *userdata);

#define SBX_RUN_OPTS_VERSION 1

typedef struct sbx_provenance_cache sbx_provenance_cache;

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
	/* Limits: 0/NULL take the task's value, else the defaults (2 GiB, 2 CPUs, 256 pids, 600 s).
	 */
	uint32_t timeout_s;
	uint64_t memory;
	double cpus;
	uint32_t pids;
	const char *runtime;
	uint32_t grace_s;	  /* PID 1's grace past the deadline; 0: 30 */
	uint32_t ready_timeout_s; /* 0: 30 (120 for GUI tasks) */
	uint16_t port;		  /* relay port; 0: any free one */
	bool published;		  /* --network published */
	bool keep;		  /* leave the sandbox behind */
	bool test;		  /* label objects as test objects */
	bool quiet_agent;	  /* agent stdout/stderr only into the run directory */
	sbx_run_grade_fn grade;
	void *grade_userdata;
	/*
	 * Grade in a child process (sbx_run_grade_isolated) with this program;
	 * the commands pass sandbox-grader's path. NULL: the grade hook, in process.
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
	/* The engine's default seccomp profile instead of ours (images/seccomp/sandbox.json). */
	bool engine_seccomp;
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

#define SBX_RUN_RECORD_DEFAULT_S 2.0
#define SBX_RUN_FRAMES_MAX	 600
#define SBX_RUN_FRAMES_BYTES	 (128ull << 20)

#define SBX_RUN_OPTS_INIT                                                                          \
	{                                                                                          \
		.version = SBX_RUN_OPTS_VERSION                                                    \
	}

typedef struct sbx_run_limits {
	uint32_t timeout_s;
	uint64_t memory;
	double cpus;
	uint32_t pids;
	char runtime[64]; /* "" for the engine default */
	uint64_t workspace_bytes, tmp_bytes, run_bytes;
	uint32_t grace_s;
	bool published;
	bool engine_seccomp;
} sbx_run_limits;

typedef struct sbx_provenance {
	bool known;	  /* the task folder is inside a git repository */
	char commit[48];  /* HEAD, hex */
	bool dirty;	  /* the task's files differ from HEAD (or are untracked) */
	char *repo;	  /* the repository's work directory (malloc'd) */
	char *task_path;  /* the task folder relative to it (malloc'd) */
	unsigned changed; /* number of differing files */
} sbx_provenance;

/*
 * A Harbor task's verifier (lib/run/verify.c): after the agent's phase its
 * processes are killed and only the workdir leaves, as a size-capped
 * archive, into a fresh sandbox of the same image, where tests/test.sh runs.
 */
#define SBX_RUN_WORKDIR_MAX	 (64ULL << 20) /* the workdir archive's cap */
#define SBX_RUN_VERIFIER_TAIL	 2048	       /* bytes of test.sh's output kept */
#define SBX_RUN_REWARD_MAX_BYTES 65536	       /* reward.json / reward.txt read at most */
#define SBX_RUN_REWARD_MAX_KEYS	 32

typedef struct sbx_run_verifier {
	bool harbor;	    /* the verifier phase began (a Harbor task); else the rest is unset */
	bool ran;	    /* test.sh was started */
	bool rewarded;	    /* a reward was read */
	double reward;	    /* reward.json's "reward", else reward.txt's number */
	char *rewards_json; /* reward.json's object as printed (numbers only), or NULL */
	char reward_source[16]; /* "reward.json", "reward.txt", "" */
	int exit_code;		/* test.sh's; -1 when unknown */
	bool timed_out;
	char *output_tail;			       /* the end of test-stdout.txt, or NULL */
	char workdir[SBX_TASK_HARBOR_WORKDIR_MAX + 1]; /* the task's workdir, e.g. "/app" */
	char workdir_sha256[65];
	uint64_t workdir_bytes;	  /* the archive the verifier got */
	uint64_t workdir_refused; /* entries dropped: escaping symlinks, devices, fifos */
	char *error;		  /* why there is no reward, one line, or NULL */
	/*
	 * total: on the episode's path, from the agent's end to the reward. Its
	 * sandbox is made while the agent works (made_ahead: create_ms is then
	 * off the path) and removed while the agent's is (remove_ms: off it too).
	 */
	bool made_ahead;
	double create_ms, copy_ms, test_ms, remove_ms, total_ms;
} sbx_run_verifier;

/* The outcome; everything result.json says. Owned by the run. */
typedef struct sbx_run_result {
	char *run_id;
	char *run_dir;
	char *task;
	sbx_run_status status;
	sbx_run_end end;
	char *error;	  /* infrastructure failure: one line, else NULL */
	char *error_kind; /* "engine", "image_missing", "sandbox_died", "oom", "relay", "agent", ...
			   */
	char *agent;	  /* "external", "oracle", "demo", or the command */
	int agent_exit;	  /* -1 when none or not exited */
	double phase_ms[SBX_PHASE_COUNT];
	bool phase_done[SBX_PHASE_COUNT];
	double total_ms;
	double gui_ready_ms;		 /* GUI tasks: from start to Calc showing the file; 0 */
	int64_t started_at, finished_at; /* unix ms */
	int64_t deadline;		 /* unix seconds */
	sbx_run_limits limits;
	char *image;
	char *image_id;
	char *sandbox_id;
	char *backend;
	sbx_sandbox_applied applied; /* as the engine reports it */
	char *endpoint;		     /* the agent's base URL: the relay's, or the published port */
	char *published;	 /* --network published: "127.0.0.1:port" on the host, else NULL */
	bool privileges_dropped; /* published: PID 1 reported dropping every capability */
	/* What PID 1 says it verified after the drop, and under which kernel
	 * ("Linux" under runc, "gVisor" under runsc); "" when it did not say. */
	char pid1_kernel[16];
	char pid1_verified[256];
	int pid1_seccomp; /* its seccomp mode as the kernel reports it: 0 none, 2 filter */
	bool kept;
	bool screenshot;	  /* screenshot.png was saved (GUI tasks) */
	bool screenshot_reloaded; /* Calc was restarted on the saved file for it */
	unsigned frames; /* --record: screenshots saved in frames/ during the agent phase */
	sbx_run_grade grade;
	sbx_provenance provenance;
	sbx_relay_stats relay;
	bool seeded;	    /* a fresh instance made from seed (run --seed) */
	uint64_t seed;	    /* <= SBX_TASK_SEED_MAX, exact in JSON */
	bool agent_stopped; /* the agent was still running at the end and was signalled */
	char *agent_tail;   /* agent_error: the last lines of agent.log, joined by " | " */
	/* How complete_task computed formulas in the sandbox, from its final status. */
	char sandbox_recalc[24]; /* "native", "libreoffice", "native+libreoffice", "none"; ""
				    unknown */
	uint64_t sandbox_recalc_native, sandbox_recalc_office; /* formula cells */
	bool warm; /* the sandbox came from a warm pool (sbx_run_launch_warm) */
	/* --reuse: episodes the sandbox served before this one (0: fresh), the reset
	 * before this one (reused > 0), and what the reset after it did. */
	uint32_t reused;
	uint32_t reuse; /* the warm sandbox's episodes at most (1: single use, a foreign image) */
	double reset_ms, reset_kill_ms, reset_agent_ms, reset_clean_ms, reset_verify_ms;
	bool reset_after;	   /* a reset was made after this episode */
	bool retired;		   /* it failed or found residue: the sandbox was removed */
	char *reset_found;	   /* what it found or why it failed, else NULL */
	bool trajectory;	   /* trajectory.json was written */
	char *trajectory_error;	   /* why not, one line, else NULL */
	sbx_run_verifier verifier; /* Harbor tasks */
} sbx_run_result;

/*
 * Why the episode did not pass, in one line (result.json's "reason"): "agent
 * exited 1: boom" (the log's last line), "gate 'inputs unchanged' failed:
 * Sheet1!A2 changed (expected …, got …)", "case 'x' failed: …", "deadline 8 s
 * passed during the agent phase", "sandbox failed: oom: …", "infrastructure
 * failed: …". NULL for a pass (or out of memory); else malloc'd, free it. Cell
 * values in it come from the agent's outputs: escape it where it is shown.
 */
char *sbx_run_result_reason(const sbx_run_result *r);

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

/* ---- warm sandboxes (`sandboxctl serve`'s pool) ---- */

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
	/* The limits it is created with; 0/NULL: the defaults (as sbx_run_prepare's). */
	uint64_t memory;
	double cpus;
	uint32_t pids;
	const char *runtime;
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
	uint64_t memory;
	double cpus;
	uint32_t pids;
	char runtime[64];
	bool engine_seccomp;
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
 * left behind. Free (and remove) with sbx_warm_free.
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

/* ---- pieces, public for tests and `sandboxctl mcp` ---- */

/*
 * A new run id: "<UTC yyyymmdd-HHMMSS>-<task>-<6 hex>" (at most 96 bytes;
 * task trimmed). Returns malloc'd text or NULL on OOM.
 */
char *sbx_run_id_new(const char *task);

/* True when s is a safe run id: 1..128 of [A-Za-z0-9._-], not starting with '.' */
bool sbx_run_id_valid(const char *s);

/*
 * Records where the task came from: the git repository holding task_dir, its
 * HEAD commit and whether any file under task_dir differs from HEAD
 * (modified, staged, untracked). Not in a repository: known = false, 0.
 * Free with sbx_provenance_clear.
 */
int sbx_provenance_get(const char *task_dir, sbx_provenance *out, sbx_error *err);
void sbx_provenance_clear(sbx_provenance *p);

/*
 * sbx_provenance_get once per task folder for the cache's life (a sweep's:
 * its episodes record the provenance the sweep began with). Thread-safe;
 * a NULL cache reads the folder each time.
 */
sbx_provenance_cache *sbx_provenance_cache_new(void);
void sbx_provenance_cache_free(sbx_provenance_cache *c);
int sbx_provenance_cache_get(sbx_provenance_cache *c, const char *task_dir, sbx_provenance *out,
			     sbx_error *err);

/* result.json's text (pretty-printed), malloc'd, NULL on OOM. */
char *sbx_run_result_json(const sbx_run_result *r);

/*
 * trajectory.json: the run in the Agent Trajectory Interchange Format
 * (schema SBX_TRAJECTORY_SCHEMA), derived from the run directory's
 * transcript.jsonl (tool calls paired with their results by JSON-RPC id) and,
 * for the model agent, model.jsonl (its turns and token usage). Those files are
 * the agent's to write into, so they are read as hostile input: each content
 * is cut at content_max bytes with a marker and the document at about
 * max_bytes, the cuts counted in the root's extra.truncated.
 */
#define SBX_TRAJECTORY_SCHEMA	   "ATIF-v1.4"
#define SBX_TRAJECTORY_MAX	   (4u << 20)  /* bytes, about: later calls are omitted */
#define SBX_TRAJECTORY_CONTENT_MAX (16u << 10) /* one message, result or arguments */

typedef struct sbx_trajectory_info {
	const char *run_dir;	/* read from, and trajectory.json written into (atomically) */
	const char *session_id; /* the run id */
	const char *prompt;	/* the task's prompt: step 1 */
	const char *agent;	/* result.json's agent: the name when the agent sent none */
	const char *model;	/* the model agent's model, else NULL */
	int64_t started_at;	/* unix ms: step 1's timestamp */
	size_t max_bytes;	/* 0: SBX_TRAJECTORY_MAX */
	size_t content_max;	/* 0: SBX_TRAJECTORY_CONTENT_MAX */
} sbx_trajectory_info;

/* Writes run_dir/trajectory.json. 0, or a negative errno with err filled. */
int sbx_run_trajectory_write(const sbx_trajectory_info *info, sbx_error *err);

/* Maps a status to the CLI's exit code: 0 pass, 1 not passed, 3 infra, 4 deadline, 130 interrupted.
 */
int sbx_run_status_exit_code(sbx_run_status s);
