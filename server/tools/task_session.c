/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sbx/util.h"
#include "sbx/thread.h"
#include "server.h"
#include "task_session.h"
#include "workspace.h"

#define MAX_NOTED_FILES 1024

struct task_session {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_cond_t changed; /* broadcast on every state change, for task_session_wait */
	pthread_t timer;
	bool timer_started, stopping, closing;
	unsigned long version; /* counts state changes */

	int workspace_fd;
	char *status_file;
	double default_timeout;

	task_state state;
	char *task_id;
	char *note;
	cJSON *recalc;		    /* how complete_task computed formulas, or NULL */
	double timeout;		    /* seconds, <= 0: none */
	double deadline;	    /* unix seconds a task without its own timeout ends; <= 0 */
	struct timespec start_mono; /* CLOCK_MONOTONIC at start */
	struct timespec start_real; /* CLOCK_REALTIME at start */
	double end_elapsed;	    /* elapsed when it ended */
	char **files;
	size_t n_files;
};

const char *task_state_name(task_state s)
{
	switch (s) {
	case TASK_PENDING:
		return "pending";
	case TASK_RUNNING:
		return "running";
	case TASK_COMPLETED:
		return "completed";
	case TASK_TIMED_OUT:
		return "timed_out";
	}
	return "unknown";
}

static double since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void iso8601(const struct timespec *t, char *buf, size_t size)
{
	struct tm tm;

	gmtime_r(&t->tv_sec, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

struct scan_ctx {
	cJSON *arr;
	const struct timespec *since;
	task_session *t;
};

static bool noted(task_session *t, const char *rel)
{
	for (size_t i = 0; i < t->n_files; i++)
		if (strcmp(t->files[i], rel) == 0)
			return true;
	return false;
}

static int scan_one(const char *rel, const struct stat *st, void *payload)
{
	struct scan_ctx *c = payload;

	if (noted(c->t, rel))
		return 0;
	if (st->st_mtim.tv_sec > c->since->tv_sec ||
	    (st->st_mtim.tv_sec == c->since->tv_sec && st->st_mtim.tv_nsec >= c->since->tv_nsec))
		cJSON_AddItemToArray(c->arr, cJSON_CreateString(rel));
	return 0;
}

/* Files the tools wrote plus files whose mtime is after the start (python, shell). Locked. */
static cJSON *files_modified(task_session *t)
{
	cJSON *arr = cJSON_CreateArray();
	struct scan_ctx c = {arr, &t->start_real, t};

	if (!arr)
		return NULL;
	for (size_t i = 0; i < t->n_files; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(t->files[i]));
	if (t->state != TASK_PENDING)
		(void)workspace_walk(t->workspace_fd, scan_one, &c, 10000);
	return arr;
}

static double elapsed_locked(task_session *t)
{
	if (t->state == TASK_PENDING)
		return 0;
	if (t->state == TASK_RUNNING)
		return since(&t->start_mono);
	return t->end_elapsed;
}

static cJSON *status_locked(task_session *t)
{
	cJSON *o = cJSON_CreateObject();
	double elapsed = elapsed_locked(t), timeout = t->timeout;
	char when[32];

	if (!o)
		return NULL;
	if (t->task_id)
		cJSON_AddStringToObject(o, "task_id", t->task_id);
	else
		cJSON_AddNullToObject(o, "task_id");
	cJSON_AddStringToObject(o, "status", task_state_name(t->state));
	if (t->state == TASK_PENDING) {
		cJSON_AddNullToObject(o, "started_at");
	} else {
		iso8601(&t->start_real, when, sizeof(when));
		cJSON_AddStringToObject(o, "started_at", when);
	}
	cJSON_AddNumberToObject(o, "elapsed", elapsed);
	cJSON_AddNumberToObject(o, "elapsed_seconds", elapsed);
	if (timeout <= 0 && t->state == TASK_PENDING && t->deadline > 0) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		timeout = t->deadline - ((double)now.tv_sec + (double)now.tv_nsec / 1e9);
		timeout = timeout > 0.001 ? timeout : 0.001;
	}
	if (timeout > 0) {
		double left = timeout - elapsed;
		cJSON_AddNumberToObject(o, "timeout_seconds", timeout);
		cJSON_AddNumberToObject(o, "remaining",
					t->state == TASK_RUNNING || t->state == TASK_PENDING
						? (left > 0 ? left : 0)
						: 0);
	} else {
		cJSON_AddNullToObject(o, "timeout_seconds");
		cJSON_AddNullToObject(o, "remaining");
	}
	cJSON_AddItemToObject(o, "files_modified", files_modified(t));
	if (t->state == TASK_TIMED_OUT)
		cJSON_AddStringToObject(o, "error", "Task has timed out");
	else
		cJSON_AddNullToObject(o, "error");
	if (t->note)
		cJSON_AddStringToObject(o, "note", t->note);
	if (t->recalc)
		cJSON_AddItemToObject(o, "recalc", cJSON_Duplicate(t->recalc, true));
	return o;
}

/* Writes TASK_MARKER beside the agent's files: temp + rename, so a poller never sees half. */
static void write_marker(task_session *t, const char *text)
{
	static const char tmp[] = "." TASK_MARKER ".tmp.marker";
	size_t len = strlen(text);
	bool ok;
	int fd;

	fd = openat(t->workspace_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0) {
		server_log(SBX_LOG_WARNING, "%s: cannot write: %s", TASK_MARKER, strerror(errno));
		return;
	}
	ok = write(fd, text, len) == (ssize_t)len;
	ok = close(fd) == 0 && ok;
	if (!ok || renameat(t->workspace_fd, tmp, t->workspace_fd, TASK_MARKER) < 0) {
		server_log(SBX_LOG_WARNING, "%s: cannot write: %s", TASK_MARKER, strerror(errno));
		(void)unlinkat(t->workspace_fd, tmp, 0);
	}
}

/* Writes the status file and, once completed, the marker (locked). Failures are logged. */
static void write_status_locked(task_session *t)
{
	_cleanup_json_ cJSON *o = NULL;
	_cleanup_free_ char *text = NULL;
	sbx_error err = SBX_ERROR_INIT;

	server_log(SBX_LOG_INFO, "task %s: %s after %.1f s", t->task_id ? t->task_id : "(unnamed)",
		   task_state_name(t->state), t->end_elapsed);
	if (!t->status_file && t->state != TASK_COMPLETED)
		return;
	o = status_locked(t);
	text = o ? sbx_json_print(o) : NULL;
	if (!text) {
		server_log(SBX_LOG_ERROR, "status file: out of memory");
		return;
	}
	if (t->state == TASK_COMPLETED)
		write_marker(t, text);
	if (t->status_file && sbx_path_write_atomic(t->status_file, text, strlen(text), &err) < 0)
		server_log(SBX_LOG_ERROR, "status file: %s", sbx_error_message(&err));
}

/* Every change of state goes through here: long-polling readers wake. Locked. */
static void set_state_locked(task_session *t, task_state st)
{
	t->state = st;
	t->version++;
	pthread_cond_broadcast(&t->changed);
}

static void check_deadline_locked(task_session *t)
{
	if (t->state != TASK_RUNNING || t->timeout <= 0)
		return;
	if (since(&t->start_mono) < t->timeout)
		return;
	set_state_locked(t, TASK_TIMED_OUT);
	t->end_elapsed = t->timeout;
	write_status_locked(t);
}

static void *timer_main(void *arg)
{
	task_session *t = arg;

	pthread_mutex_lock(&t->lock);
	while (!t->stopping) {
		if (t->state == TASK_RUNNING && t->timeout > 0) {
			struct timespec at = t->start_mono;
			double whole = (double)(long long)t->timeout;

			at.tv_sec += (time_t)whole;
			at.tv_nsec += (long)((t->timeout - whole) * 1e9);
			if (at.tv_nsec >= 1000000000L) {
				at.tv_sec++;
				at.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&t->cond, &t->lock, &at);
			check_deadline_locked(t);
		} else {
			pthread_cond_wait(&t->cond, &t->lock);
		}
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

task_session *task_session_new(int workspace_fd, double timeout_seconds, const char *status_file)
{
	task_session *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	sbx_cond_init_monotonic(&t->cond);
	sbx_cond_init_monotonic(&t->changed);
	t->workspace_fd = workspace_fd;
	t->default_timeout = timeout_seconds;
	t->timeout = timeout_seconds;
	t->state = TASK_PENDING;
	if (status_file && !(t->status_file = strdup(status_file))) {
		task_session_free(t);
		return NULL;
	}
	if (pthread_create(&t->timer, NULL, timer_main, t) != 0) {
		task_session_free(t);
		return NULL;
	}
	t->timer_started = true;
	return t;
}

void task_session_free(task_session *t)
{
	if (!t)
		return;
	if (t->timer_started)
		sbx_thread_stop(t->timer, &t->lock, &t->cond, &t->stopping);
	sbx_strv_free_n(t->files, t->n_files);
	sbx_free_all(t->task_id, t->note, t->status_file);
	cJSON_Delete(t->recalc);
	pthread_cond_destroy(&t->cond);
	pthread_cond_destroy(&t->changed);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static void start_locked(task_session *t, const char *task_id, double timeout_seconds)
{
	for (size_t i = 0; i < t->n_files; i++)
		free(t->files[i]);
	t->n_files = 0;
	free(t->note);
	t->note = NULL;
	cJSON_Delete(t->recalc);
	t->recalc = NULL;
	if (task_id) {
		free(t->task_id);
		t->task_id = strdup(task_id);
	}
	/* A new episode: the last one's marker must not announce it done. */
	(void)unlinkat(t->workspace_fd, TASK_MARKER, 0);
	clock_gettime(CLOCK_MONOTONIC, &t->start_mono);
	clock_gettime(CLOCK_REALTIME, &t->start_real);
	t->timeout = timeout_seconds > 0 ? timeout_seconds : t->default_timeout;
	if (t->timeout <= 0 && t->deadline > 0) {
		double left = t->deadline -
			      ((double)t->start_real.tv_sec + (double)t->start_real.tv_nsec / 1e9);
		/* Already past: time out at once rather than never. */
		t->timeout = left > 0.001 ? left : 0.001;
	}
	t->end_elapsed = 0;
	set_state_locked(t, TASK_RUNNING);
	pthread_cond_broadcast(&t->cond);
	server_log(SBX_LOG_INFO, "task %s: started, timeout %g s",
		   t->task_id ? t->task_id : "(unnamed)", t->timeout);
}

int task_session_start(task_session *t, const char *task_id, double timeout_seconds, bool replace)
{
	int r = 0;

	pthread_mutex_lock(&t->lock);
	check_deadline_locked(t);
	if (t->state == TASK_RUNNING && replace) {
		server_log(SBX_LOG_INFO, "task %s: replaced after %.1f s",
			   t->task_id ? t->task_id : "(unnamed)", since(&t->start_mono));
		start_locked(t, task_id, timeout_seconds);
		r = 1;
	} else if (t->state == TASK_RUNNING) {
		/* Started by a tool call before task/start: keep the deadline, take the name. */
		if (task_id && !t->task_id)
			t->task_id = strdup(task_id);
		r = -EBUSY;
	} else
		start_locked(t, task_id, timeout_seconds);
	pthread_mutex_unlock(&t->lock);
	return r;
}

void task_session_set_deadline(task_session *t, double unix_seconds)
{
	pthread_mutex_lock(&t->lock);
	t->deadline = unix_seconds;
	/* Already running on the deadline it started with: count to the new one. */
	if (t->state == TASK_RUNNING && t->default_timeout <= 0) {
		double left = unix_seconds -
			      ((double)t->start_real.tv_sec + (double)t->start_real.tv_nsec / 1e9);

		t->timeout = left > 0.001 ? left : 0.001;
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
}

void task_session_autostart(task_session *t)
{
	pthread_mutex_lock(&t->lock);
	if (t->state == TASK_PENDING)
		start_locked(t, NULL, 0);
	pthread_mutex_unlock(&t->lock);
}

task_state task_session_state(task_session *t)
{
	task_state s;

	pthread_mutex_lock(&t->lock);
	check_deadline_locked(t);
	s = t->state;
	pthread_mutex_unlock(&t->lock);
	return s;
}

int task_session_complete(task_session *t, const char *note)
{
	int r = 0;

	pthread_mutex_lock(&t->lock);
	check_deadline_locked(t);
	switch (t->state) {
	case TASK_TIMED_OUT:
		r = -ETIME;
		break;
	case TASK_COMPLETED:
		r = -EALREADY;
		break;
	case TASK_PENDING:
		/* Completing an unstarted task is allowed: it ran for zero seconds. */
		start_locked(t, NULL, 0);
		__attribute__((fallthrough));
	case TASK_RUNNING:
		t->end_elapsed = since(&t->start_mono);
		set_state_locked(t, TASK_COMPLETED);
		if (note)
			t->note = strdup(note);
		pthread_cond_broadcast(&t->cond);
		write_status_locked(t);
		break;
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

cJSON *task_session_status(task_session *t)
{
	cJSON *o;

	pthread_mutex_lock(&t->lock);
	check_deadline_locked(t);
	o = status_locked(t);
	pthread_mutex_unlock(&t->lock);
	return o;
}

/* Nothing changed since what the client saw. Locked. */
static bool unchanged_locked(const task_session *t, long since_version, int since_state)
{
	if (since_version < 0 && since_state < 0)
		return false;
	return (since_version < 0 || t->version == (unsigned long)since_version) &&
	       (since_state < 0 || t->state == (task_state)since_state);
}

cJSON *task_session_wait(task_session *t, long since_version, int since_state, int wait_ms)
{
	struct timespec until;
	cJSON *o;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&t->lock);
	check_deadline_locked(t);
	/* The timer thread moves a running task to timed_out at its deadline, and wakes us. */
	while (!t->closing && unchanged_locked(t, since_version, since_state) &&
	       pthread_cond_timedwait(&t->changed, &t->lock, &until) == 0)
		check_deadline_locked(t);
	o = status_locked(t);
	if (o)
		cJSON_AddNumberToObject(o, "version", (double)t->version);
	pthread_mutex_unlock(&t->lock);
	return o;
}

void task_session_wake_all(task_session *t)
{
	sbx_thread_raise(&t->lock, &t->changed, &t->closing);
}

void task_session_set_recalc(task_session *t, const cJSON *summary)
{
	cJSON *copy = summary ? cJSON_Duplicate(summary, true) : NULL;

	pthread_mutex_lock(&t->lock);
	cJSON_Delete(t->recalc);
	t->recalc = copy;
	pthread_mutex_unlock(&t->lock);
}

void task_session_note_file(task_session *t, const char *relpath)
{
	char **grown;

	pthread_mutex_lock(&t->lock);
	if (noted(t, relpath) || t->n_files >= MAX_NOTED_FILES)
		goto out;
	grown = realloc(t->files, (t->n_files + 1) * sizeof(*grown));
	if (!grown)
		goto out;
	t->files = grown;
	if ((t->files[t->n_files] = strdup(relpath)))
		t->n_files++;
out:
	pthread_mutex_unlock(&t->lock);
}
