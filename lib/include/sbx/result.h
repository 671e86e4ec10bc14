/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What an episode leaves: its outcome (sbx_run_result: everything
 * result.json says), its grade, its limits as applied, a Harbor task's
 * verifier, and the files written from them (result.json, trajectory.json).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/backend.h"
#include "sbx/error.h"
#include "sbx/grade.h"
#include "sbx/provenance.h"
#include "sbx/relay.h"
#include "sbx/task.h"

struct cJSON;

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
	/* lib/grade's full report (grade.json's content) as a tree, owned; may be NULL.
	 * It travels as it is to the serve API's answer and the result's reason. */
	struct cJSON *report;
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

/* The run's limits as applied: resolved, and the sandbox's tmpfs sizes and network. */
typedef struct sbx_run_limits {
	sbx_limits resolved; /* flag > task > default (sbx_limits_resolve) */
	uint64_t workspace_bytes, tmp_bytes, run_bytes;
	bool published;
} sbx_run_limits;

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

/*
 * result.json's content as a tree, for a caller that reads it without
 * printing it (a sweep's record). The caller owns it (cJSON_Delete); NULL on OOM.
 */
struct cJSON *sbx_run_result_tree(const sbx_run_result *r);

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
