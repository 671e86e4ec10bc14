/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the lifecycle's files share: the run object and small helpers.
 * lifecycle.c runs the phases in turn, one file each (lifecycle_prepare.c,
 * lifecycle_launch.c, lifecycle_wait.c, lifecycle_finish.c); they call
 * inputs.c (the starting files), agents.c (the agents), collect.c (results
 * back), gui.c, record.c and warm.c; those call only run_state.c (phases,
 * failures, the server's view of the task), never the lifecycle's files, so
 * the graph is one-way. Internal to lib/run.
 */

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "agent.h"
#include "sbx/clock.h"
#include "sbx/log.h"
#include "sbx/run.h"
#include "sbx/warm.h"

/* The sandbox's tmpfs sizes. */
#define WORKSPACE_BYTES (512ULL * 1024 * 1024)
#define TMP_BYTES	(256ULL * 1024 * 1024)
#define RUN_BYTES	(16ULL * 1024 * 1024)

typedef enum sbx_status_api {
	SBX_STATUS_CONTROL,   /* GET /control/status, a long-poll */
	SBX_STATUS_V1,	      /* GET /v1/task/status: no /control (an older image) */
	SBX_STATUS_REFERENCE, /* GET /task/status: no /v1 either */
} sbx_status_api;

struct sbx_run {
	sbx_run_opts o;
	sbx_task *task;
	sbx_run_result res;
	sbx_backend *backend;
	sbx_relay *relay;
	char *url;	   /* the agent's base URL (the relay's, with the token) */
	char token[33];	   /* the relay's, hex */
	char *unix_socket; /* --listen unix: the relay's socket (absolute), else NULL */
	char *connection;  /* connection.json's text, for --json */
	char *owner;
	int64_t t0;	     /* monotonic ms at prepare */
	int64_t deadline_ms; /* monotonic */
	int64_t next_poll_ms;
	int64_t next_frame_ms; /* --record: when the next frame is due */
	uint64_t frame_bytes;  /* --record: bytes of frames/ so far */
	sbx_agent_proc agent;
	bool agent_started;
	bool launched;
	bool ready; /* the server answered: later failures inside are sandbox_failed */
	bool finished;
	bool completed_seen;
	/* Which status API the image's server has: an older image answers 404
	 * on /control/status (then /v1/task/status, then /task/status). */
	sbx_status_api status_api;
	long status_version;	 /* /control/status's version last seen; -1 before */
	double start_done_ms;	 /* monotonic, when start returned */
	sbx_warm_info warm_info; /* sbx_run_launch_warm: the warm sandbox's, for a reset */
	sbx_warm *kept_warm;	 /* reset clean for its next episode (sbx_run_take_warm) */
	bool files_by_backend;	 /* the server has no PUT /control/files (an older image) */
	bool oracle_in;		 /* the copy-in also placed the oracle's files */
	/* The sandbox's workspace: SBX_SANDBOX_WORKSPACE, or a Harbor task's workdir
	 * (sbx_run__harbor_image sets it; the verifier's sandbox gets the same). */
	char workspace[SBX_TASK_HARBOR_WORKDIR_MAX + 1];
	/* Harbor tasks: the verifier's sandbox, created and started while the agent works. */
	pthread_t vthread; /* makes it ahead, or removes it after */
	bool vstarting, vremoving;
	sbx_backend *vbackend;
	int vstart_result;
	sbx_error vstart_err;
	int copy_result;
	sbx_error copy_err;
};

/*
 * warm.c: at finish, instead of removing the sandbox: a reset in place; clean,
 * run->kept_warm holds it for the next episode, else it is removed (retired).
 */
void sbx_run__reset_in_place(sbx_run *run);

/* --verbose shows where the time goes between the timed phases. */
#define sbx_run__trace(run, what)                                                                  \
	sbx_log_debug("run: %s at %lld ms", what, (long long)(sbx_now_ms() - (run)->t0))

/* run_state.c: the wall clock in ms since the epoch (result.json's times, deadlines). */
int64_t sbx_run__real_ms(void);

/*
 * lifecycle_wait.c: whether the sandbox has stopped; if so records why (out of
 * memory, or its exit status) in err and as the attempt's failure.
 */
bool sbx_run__sandbox_dead(sbx_run *run, sbx_error *err);

/* No phase: sbx_run__phase_end records the failure and times nothing. */
#define SBX_RUN__UNTIMED SBX_PHASE_COUNT

/*
 * run_state.c: ends one step of the lifecycle. Adds the time since `since`
 * (sbx_now_msf at the step's start) to phase p unless p is SBX_RUN__UNTIMED;
 * when r < 0 and kind is set, records err as the run's infrastructure failure
 * of that kind (the first one wins). Returns r, so a step can end in
 * `return sbx_run__phase_end(...)`.
 */
int sbx_run__phase_end(sbx_run *run, sbx_run_phase p, double since, int r, const char *kind,
		       const sbx_error *err);

/* A step that is not timed: records its failure (r < 0) as kind, returns r. */
#define sbx_run__fail(run, r, kind, err)                                                           \
	sbx_run__phase_end((run), SBX_RUN__UNTIMED, 0, (r), (kind), (err))

/*
 * A failure inside a sandbox that was ready: its memory, its processes, its
 * outputs are the agent's to spend, so this is the attempt's outcome
 * (sandbox_failed), not the infrastructure's; a sweep neither retries it
 * nor drops it. Before the server answered, the same failure is the image's
 * or the engine's (infra_error).
 */
void sbx_run__set_sandbox_failed(sbx_run *run, const char *kind, const sbx_error *err);

/*
 * Readiness probes: the pause after each failed one grows by half from the
 * first, held at READY_PAUSE_EARLY_MS while the server is still in its usual
 * start window (it answers 60-100 ms after start: a longer pause there is
 * added to every episode), then doubles up to the last for a slow start.
 */
#define READY_PAUSE_FIRST_MS 5
#define READY_PAUSE_EARLY_MS 20
#define READY_WINDOW_MS	     500
#define READY_PAUSE_MAX_MS   160

/*
 * Sleeps between two failed readiness probes (each one costs a fresh stream,
 * an exec): 5, 8, 12, 18, 20, 20 … ms for the first half second of waiting
 * (waited_ms), then doubling to 160 ms. *pause_ms starts at 0 and is the state.
 */
void sbx_run__ready_pause(long *pause_ms, int64_t waited_ms);

/*
 * prefix + s percent-encoded where a URL needs it ('/' kept): the server
 * decodes it once. A new string (free()), or NULL on OOM.
 */
char *sbx_run__url_with(const char *prefix, const char *s);

/* The last component of a path. */
const char *sbx_run__base_name(const char *p);

/*
 * inputs.c: the starting files, the oracles as the outputs, or both, into the
 * workspace in one copy. The oracle's run sends both at once (an oracle output
 * replaces the starting file of its name), so its agent only completes.
 */
int sbx_run__copy_files_in(sbx_run *run, bool starting, bool oracle, sbx_error *err);

/* Whether the run's agent is the oracle. */
bool sbx_run__is_oracle(const sbx_run *run);

/* agents.c: refuses an agent that cannot start (the demo agent not found). */
int sbx_run__check_agent(const sbx_run *run, sbx_error *err);

/* agents.c: starts opts.agent on the host (a command, or the demo agent). */
int sbx_run__start_agent(sbx_run *run, sbx_error *err);

/* agents.c: the oracle agent: copies the oracles in as the outputs and completes the task. */
int sbx_run__oracle_agent(sbx_run *run, sbx_error *err);
/* agents.c: the oracle's POST /control/complete (the host's path, recorded). */
int sbx_run__oracle_complete(sbx_run *run, sbx_error *err);

/*
 * harbor.c: a Harbor task's image: built from its environment/ unless
 * --image or its docker_image names one; sets res.image, and workspace to
 * the task's workdir (declared, else the image's WORKDIR, else /workspace).
 */
int sbx_run__harbor_image(sbx_run *run, sbx_error *err);
/* harbor.c: after start, the image's own workspace content into the workspace tmpfs. */
int sbx_run__harbor_seed(sbx_run *run, sbx_error *err);
/* harbor.c: the oracle: solution/ into /tmp/solution, solve.sh run as the agent's uid. */
int sbx_run__harbor_oracle(sbx_run *run, sbx_error *err);
/* harbor.c: dir/rel as a tar under prefix, owned by uid 1000 (*out owns *data). */
struct sbx_docker_tar;
int sbx_run__tar_dir(const char *dir, const char *rel, const char *prefix,
		     struct sbx_docker_tar **out, const void **data, size_t *len, sbx_error *err);
/*
 * verify.c: a Harbor task's verifier, in place of collecting and grading:
 * kills the agent's processes, takes the workdir out (capped), runs
 * tests/test.sh on it in a fresh sandbox of the same image, reads the reward
 * into res.verifier and res.grade.
 */
void sbx_run__verify(sbx_run *run);
/*
 * reward.c: the verifier's framed answer (len bytes of out) into v: exit_code,
 * test_ms, output_tail, and the reward (rewarded) or why not (error).
 */
void sbx_run__verifier_read(sbx_run_verifier *v, const char *out, size_t len);
/* verify.c: creates and starts the verifier's sandbox on a thread, for verify to take. */
void sbx_run__verifier_prestart(sbx_run *run);
/* verify.c: joins that thread and removes its sandbox if verify did not take it. */
void sbx_run__verifier_discard(sbx_run *run);

/*
 * run_state.c: the server's view of the task: 1 completed, 2 timed out, 0
 * running, <0 no answer. wait_ms > 0 long-polls: the answer comes when the
 * task changes or after wait_ms (at once from an older image's server).
 */
int sbx_run__task_state(sbx_run *run, int wait_ms);

/* run_state.c: starts the server's task session (status "running") as the episode starts. */
void sbx_run__start_task(sbx_run *run);

/* gui.c: waits until LibreOffice shows the starting file (GUI tasks). */
int sbx_run__wait_gui(sbx_run *run, sbx_error *err);

/* collect.c: container.log, screenshot.png (GUI tasks), grading into the run directory. */
void sbx_run__save_logs(sbx_run *run);
/*
 * The final screenshot. show_saved: Calc is started again on the saved
 * file first when the agent changed it through the tools, so the picture
 * is the result (the server does it: tool code may not run after
 * complete_task). Sets res.screenshot and res.screenshot_reloaded.
 */
void sbx_run__save_screenshot(sbx_run *run, bool show_saved);
/*
 * Grades the outputs into res.grade, grade.txt and grade.json: in a child
 * process when opts.grader names the program (the commands), else in this
 * process (sbx_run_grade_outputs). Failures are recorded in res.
 */
void sbx_run__grade(sbx_run *run);

/* record.c: --record's filmstrip. True while frames are due (a GUI task, under the caps). */
bool sbx_run__recording(const sbx_run *run);
/* Saves a frame when one is due; a failed screenshot is skipped, never an error. */
void sbx_run__record_frame(sbx_run *run);
/* warm.c: hands the warm sandbox's backend over to a run and frees w. */
sbx_backend *sbx_warm__take_backend(sbx_warm *w);
