/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The task session: a deadline that starts with task/start (or the first tool
 * call), ends with complete_task / task/complete, or passes. Once it passed,
 * every tool answers "Task has timed out". When the task ends either way the
 * state is written atomically to the status file, so a supervisor can read it
 * through the Docker API.
 */

#include <stdbool.h>
#include <cjson/cJSON.h>

typedef struct task_session task_session;

typedef enum task_state {
	TASK_PENDING,
	TASK_RUNNING,
	TASK_COMPLETED,
	TASK_TIMED_OUT,
} task_state;

const char *task_state_name(task_state s);

/*
 * A new session on the workspace (workspace_fd stays owned by the caller).
 * timeout_seconds <= 0 means no deadline. status_file may be NULL.
 * Returns NULL on OOM or when the timer thread cannot start.
 */
task_session *task_session_new(int workspace_fd, double timeout_seconds, const char *status_file);
void task_session_free(task_session *t);

/*
 * Starts the deadline. task_id may be NULL; timeout_seconds <= 0 keeps the
 * configured one. A finished task may be started again (a new episode).
 * A running task: with replace, it is replaced by a fresh one (the
 * reference's POST /task/start) and 1 is returned; without, -EBUSY (an
 * unnamed running task takes task_id then; its deadline stays). Else 0.
 */
int task_session_start(task_session *t, const char *task_id, double timeout_seconds, bool replace);

/*
 * An absolute deadline (unix seconds, from SANDBOX_TASK_DEADLINE): a task
 * started without its own timeout gets the time left until then, so
 * get_task_status reports the host's deadline. <= 0: none.
 */
void task_session_set_deadline(task_session *t, double unix_seconds);

/* Starts the task when it is still pending (the first tool call does this). */
void task_session_autostart(task_session *t);

/* The state now; a running task whose deadline passed becomes timed_out here. */
task_state task_session_state(task_session *t);

/* The marker a completed task leaves in the workspace (the reference's wait_for_agent polls it). */
#define TASK_MARKER ".task_complete"

/*
 * Ends the task and writes TASK_MARKER (the status JSON) into the workspace;
 * starting a task removes it again. Returns 0, -ETIME when it had already timed out, -EALREADY
 * when already completed. note (may be NULL) is recorded in the status file.
 */
int task_session_complete(task_session *t, const char *note);

/* The status object: task_id, status, started_at, elapsed, remaining, ... (caller owns). */
cJSON *task_session_status(task_session *t);

/*
 * The long-poll behind GET /control/status: waits at most wait_ms while
 * nothing changed since what the client saw (since_version: the version it
 * was shown; since_state: the state it saw; -1 each: not given, and with
 * neither it answers at once), then returns the status object plus
 * "version", a counter of state changes (start, completion, timeout).
 * Caller owns it. Answers at once after task_session_wake_all.
 */
cJSON *task_session_wait(task_session *t, long since_version, int since_state, int wait_ms);

/* Ends every task_session_wait now and from now on (the server is shutting down). */
void task_session_wake_all(task_session *t);

/*
 * Records how complete_task computed formula values (recalc_pending's
 * summary, copied): the status then carries it as "recalc", so the host
 * can put it in result.json. NULL clears it.
 */
void task_session_set_recalc(task_session *t, const cJSON *summary);

/* Records a file a tool wrote (a workspace-relative path). */
void task_session_note_file(task_session *t, const char *relpath);
