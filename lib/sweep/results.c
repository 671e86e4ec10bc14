/* SPDX-License-Identifier: MIT */
/*
 * results.jsonl: one line per attempt, appended with one write(2) and an
 * fsync(2), so a crash leaves at most a torn last line, which the next open
 * cuts off. Nothing is ever rewritten in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/sweep.h"
#include "sweep-internal.h"

#define RESULTS_MAX_BYTES ((size_t)1 << 31)
#define LINE_MAX_BYTES	  (64 << 10)

struct sbx_sweep_results {
	sbx_sweep_record *v;
	size_t n, cap;
	int fd; /* O_APPEND, -1 when loaded read-only */
	pthread_mutex_t lock;
};

static const char *const status_names[] = {
	[SBX_RUN_PASS] = "pass",
	[SBX_RUN_PARTIAL] = "partial",
	[SBX_RUN_FAIL] = "fail",
	[SBX_RUN_TIMEOUT] = "timeout",
	[SBX_RUN_INTERRUPTED] = "interrupted",
	[SBX_RUN_INFRA_ERROR] = "infra_error",
	[SBX_RUN_AGENT_ERROR] = "agent_error",
	[SBX_RUN_SANDBOX_FAILED] = "sandbox_failed",
};

void sbx_sweep_record_clear(sbx_sweep_record *r)
{
	if (!r)
		return;
	sbx_free_all(r->run_id, r->task, r->agent, r->engine, r->error, r->reason);
	*r = (sbx_sweep_record){0};
}

bool sbx_sweep_record_done(const sbx_sweep_record *r)
{
	return r->status != SBX_RUN_INTERRUPTED && r->status != SBX_RUN_INFRA_ERROR;
}

char *sbx_sweep_record_json(const sbx_sweep_record *r)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "episode", (double)r->episode);
	cJSON_AddNumberToObject(o, "attempt", r->attempt);
	cJSON_AddStringToObject(o, "task", r->task ? r->task : "");
	cJSON_AddStringToObject(o, "agent", r->agent ? r->agent : "");
	cJSON_AddNumberToObject(o, "epoch", r->epoch);
	if (r->seeded)
		cJSON_AddNumberToObject(o, "seed", (double)r->seed);
	else
		cJSON_AddNullToObject(o, "seed");
	cJSON_AddStringToObject(o, "run_id", r->run_id ? r->run_id : "");
	cJSON_AddStringToObject(o, "status", status_names[r->status]);
	if (r->graded)
		cJSON_AddNumberToObject(o, "score", r->score);
	else
		cJSON_AddNullToObject(o, "score");
	cJSON_AddNumberToObject(o, "agent_ms", round(r->agent_ms * 1000) / 1000);
	cJSON_AddNumberToObject(o, "total_ms", round(r->total_ms * 1000) / 1000);
	if (r->tool_calls >= 0)
		cJSON_AddNumberToObject(o, "tool_calls", r->tool_calls);
	if (r->has_usage) {
		cJSON *u = cJSON_AddObjectToObject(o, "usage");

		cJSON_AddNumberToObject(u, "input_tokens", r->usage.input_tokens);
		cJSON_AddNumberToObject(u, "output_tokens", r->usage.output_tokens);
		cJSON_AddNumberToObject(u, "cached_tokens", r->usage.cached_tokens);
	}
	if (r->engine)
		cJSON_AddStringToObject(o, "engine", r->engine);
	if (r->error)
		cJSON_AddStringToObject(o, "error", r->error);
	if (r->reason)
		cJSON_AddStringToObject(o, "reason", r->reason);
	return cJSON_PrintUnformatted(o);
}

static int parse_status(const char *s, sbx_run_status *out)
{
	for (size_t i = 0; i < SBX_ELEMENTSOF(status_names); i++)
		if (strcmp(s, status_names[i]) == 0) {
			*out = (sbx_run_status)i;
			return 0;
		}
	return -EINVAL;
}

static bool whole_number(const cJSON *v, double max)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= max &&
	       v->valuedouble == (double)(uint64_t)v->valuedouble;
}

/* tool_calls and usage, from a results line or result.json's "agent" object. */
static void read_agent_counts(sbx_sweep_record *r, const cJSON *o)
{
	const cJSON *u = sbx_json_get(o, "usage");

	r->tool_calls = sbx_json_get_number(o, "tool_calls", -1);
	if (cJSON_IsObject(u)) {
		r->has_usage = true;
		r->usage.input_tokens = sbx_json_get_number(u, "input_tokens", 0);
		r->usage.output_tokens = sbx_json_get_number(u, "output_tokens", 0);
		r->usage.cached_tokens = sbx_json_get_number(u, "cached_tokens", 0);
	}
}

int sbx_sweep_record_parse(const char *line, size_t len, sbx_sweep_record *out, sbx_error *err)
{
	_cleanup_json_ cJSON *j = NULL;
	sbx_sweep_record r = {0};
	const cJSON *v;
	int rc;

	rc = sbx_json_parse(line, len, &j, err);
	if (rc < 0)
		return rc;
	if (!whole_number(sbx_json_get(j, "episode"), SBX_SWEEP_MAX_EPISODES) ||
	    !whole_number(sbx_json_get(j, "attempt"), 1e6) ||
	    !whole_number(sbx_json_get(j, "epoch"), SBX_SWEEP_MAX_EPOCHS) ||
	    parse_status(sbx_json_get_string(j, "status", ""), &r.status) < 0)
		return sbx_error_set(err, -EINVAL, "not a sweep result line");
	r.episode = (size_t)sbx_json_get_number(j, "episode", 0);
	r.attempt = (unsigned)sbx_json_get_number(j, "attempt", 0);
	r.epoch = (unsigned)sbx_json_get_number(j, "epoch", 0);
	v = sbx_json_get(j, "seed");
	if (whole_number(v, 9007199254740991.0)) {
		r.seeded = true;
		r.seed = (uint64_t)v->valuedouble;
	}
	v = sbx_json_get(j, "score");
	if (cJSON_IsNumber(v)) {
		r.graded = true;
		r.score = v->valuedouble;
	}
	r.agent_ms = sbx_json_get_number(j, "agent_ms", 0);
	r.total_ms = sbx_json_get_number(j, "total_ms", 0);
	read_agent_counts(&r, j);
	r.task = sbx_sweep__strdup0(sbx_json_get_string(j, "task", ""));
	r.agent = sbx_sweep__strdup0(sbx_json_get_string(j, "agent", ""));
	r.run_id = sbx_sweep__strdup0(sbx_json_get_string(j, "run_id", ""));
	r.engine = sbx_sweep__strdup0(sbx_json_get_string(j, "engine", NULL));
	r.error = sbx_sweep__strdup0(sbx_json_get_string(j, "error", NULL));
	r.reason = sbx_sweep__strdup0(sbx_json_get_string(j, "reason", NULL));
	if (!r.task || !r.agent || !r.run_id) {
		sbx_sweep_record_clear(&r);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	sbx_sweep_record_clear(out);
	*out = r;
	return 0;
}

int sbx_sweep_record_from_run(const sbx_run_result *res, const sbx_sweep_plan *p,
			      const sbx_sweep_episode *ep, unsigned attempt, const char *engine,
			      sbx_sweep_record *out)
{
	_cleanup_free_ char *text = sbx_run_result_json(res);
	_cleanup_json_ cJSON *j = NULL;
	sbx_sweep_record r = {0};

	/* result.json's own view (usage, tool calls) is the one other tools read too. */
	if (text)
		(void)sbx_json_parse(text, strlen(text), &j, NULL);
	r.episode = ep->index;
	r.attempt = attempt;
	r.epoch = ep->epoch;
	r.seeded = ep->seeded;
	r.seed = ep->seed;
	r.status = res->status;
	r.graded = res->grade.graded && res->status != SBX_RUN_INFRA_ERROR &&
		   res->status != SBX_RUN_INTERRUPTED;
	r.score = r.graded ? res->grade.score : 0;
	r.agent_ms = res->phase_done[SBX_PHASE_AGENT] ? res->phase_ms[SBX_PHASE_AGENT] : 0;
	r.total_ms = res->total_ms;
	read_agent_counts(&r, sbx_json_get(j, "agent"));
	r.task = strdup(p->tasks[ep->task]);
	r.agent = strdup(p->agents[ep->agent]);
	r.run_id = strdup(res->run_id ? res->run_id : "");
	r.engine = sbx_sweep__strdup0(engine);
	r.error = sbx_sweep__strdup0(res->error);
	r.reason = sbx_run_result_reason(res);
	if (!r.task || !r.agent || !r.run_id || (engine && !r.engine) || (res->error && !r.error) ||
	    (res->status != SBX_RUN_PASS && !r.reason)) {
		sbx_sweep_record_clear(&r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

static int push(sbx_sweep_results *r, sbx_sweep_record *rec)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		sbx_sweep_record *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = *rec;
	*rec = (sbx_sweep_record){0};
	return 0;
}

/*
 * Parses text's lines into r. *good_len: the bytes up to the end of the last
 * whole line; a last line without its newline is torn (counted in *dropped).
 */
static int load_lines(sbx_sweep_results *r, const char *text, size_t len, size_t *good_len,
		      unsigned *dropped)
{
	size_t off = 0;

	*good_len = 0;
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - (text + off)) : len - off;
		sbx_sweep_record rec = {0};

		if (!nl) {
			(*dropped)++; /* torn: the write that made it never finished */
			break;
		}
		if (l > 0 && l <= LINE_MAX_BYTES) {
			if (sbx_sweep_record_parse(text + off, l, &rec, NULL) == 0) {
				if (push(r, &rec) < 0) {
					sbx_sweep_record_clear(&rec);
					return -ENOMEM;
				}
			} else {
				(*dropped)++;
			}
		}
		off += l + 1;
		*good_len = off;
	}
	return 0;
}

static int results_new(sbx_sweep_results **out)
{
	sbx_sweep_results *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->fd = -1;
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
	return 0;
}

static int open_common(const char *dir, bool append, sbx_sweep_results **out, unsigned *dropped,
		       sbx_error *err)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *r = NULL;
	_cleanup_free_ char *path = NULL, *text = NULL;
	_cleanup_close_ int fd = -1;
	unsigned drops = 0;
	size_t len = 0, good = 0;
	struct stat st;

	if (asprintf(&path, "%s/results.jsonl", dir) < 0 || results_new(&r) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	fd = open(path, (append ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 && !append && errno == ENOENT) {
		*out = TAKE_PTR(r); /* no attempt recorded yet */
		return 0;
	}
	if (fd < 0 || fstat(fd, &st) < 0)
		return sbx_error_set(err, -errno, "'%s': %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return sbx_error_set(err, -EINVAL, "'%s': not a regular file", path);
	/* Two sweeps appending to one directory would run episodes twice. */
	if (append && flock(fd, LOCK_EX | LOCK_NB) < 0)
		return sbx_error_set(err, errno == EWOULDBLOCK ? -EBUSY : -errno,
				     "'%s' is in use by another sweep (%s)", dir,
				     errno == EWOULDBLOCK ? "locked" : strerror(errno));
	if ((size_t)st.st_size > RESULTS_MAX_BYTES)
		return sbx_error_set(err, -EFBIG, "'%s': larger than %zu bytes", path,
				     RESULTS_MAX_BYTES);
	if (st.st_size > 0 && sbx_file_read_fd(fd, (size_t)st.st_size, &text, &len) < 0)
		return sbx_error_set(err, -errno ? -errno : -EIO, "'%s': read failed", path);
	if (text && load_lines(r, text, len, &good, &drops) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (append) {
		/* Cut a torn tail so the next line starts on a line of its own. */
		if (good < len && ftruncate(fd, (off_t)good) < 0)
			return sbx_error_set(err, -errno, "'%s': truncate: %s", path,
					     strerror(errno));
		if (fcntl(fd, F_SETFL, O_APPEND) < 0)
			return sbx_error_set(err, -errno, "'%s': %s", path, strerror(errno));
		r->fd = TAKE_FD(fd);
	}
	if (dropped)
		*dropped = drops;
	*out = TAKE_PTR(r);
	return 0;
}

int sbx_sweep_results_open(const char *dir, sbx_sweep_results **out, unsigned *dropped,
			   sbx_error *err)
{
	return open_common(dir, true, out, dropped, err);
}

int sbx_sweep_results_load(const char *dir, sbx_sweep_results **out, sbx_error *err)
{
	return open_common(dir, false, out, NULL, err);
}

int sbx_sweep_results_append(sbx_sweep_results *r, const sbx_sweep_record *rec, sbx_error *err)
{
	_cleanup_free_ char *line = sbx_sweep_record_json(rec);
	sbx_sweep_record copy = {0};
	size_t len;
	ssize_t n;
	int rc = 0;

	if (!line)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	len = strlen(line);
	line[len] = '\n'; /* the NUL's byte; the write below is len + 1 */
	if (r->fd < 0)
		return sbx_error_set(err, -EBADF, "results opened read-only");
	pthread_mutex_lock(&r->lock);
	/* One write: with O_APPEND the line lands whole, never interleaved. */
	do
		n = write(r->fd, line, len + 1);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)(len + 1))
		rc = sbx_error_set(err, n < 0 ? -errno : -EIO, "results.jsonl: write: %s",
				   n < 0 ? strerror(errno) : "short write");
	else if (fsync(r->fd) < 0)
		rc = sbx_error_set(err, -errno, "results.jsonl: fsync: %s", strerror(errno));
	if (rc == 0) {
		line[len] = '\0';
		rc = sbx_sweep_record_parse(line, len, &copy, err);
		if (rc == 0 && push(r, &copy) < 0)
			rc = sbx_error_set(err, -ENOMEM, "out of memory");
		sbx_sweep_record_clear(&copy);
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

const sbx_sweep_record *sbx_sweep_results_records(const sbx_sweep_results *r, size_t *n)
{
	*n = r->n;
	return r->v;
}

void sbx_sweep_results_free(sbx_sweep_results *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		sbx_sweep_record_clear(&r->v[i]);
	free(r->v);
	if (r->fd >= 0)
		close(r->fd);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

void sbx_sweep_done_map(const sbx_sweep_plan *p, const sbx_sweep_record *recs, size_t n, bool *done,
			unsigned *attempts)
{
	size_t size = sbx_sweep_plan_size(p);

	memset(done, 0, size * sizeof(*done));
	if (attempts)
		memset(attempts, 0, size * sizeof(*attempts));
	for (size_t i = 0; i < n; i++) {
		if (recs[i].episode >= size)
			continue; /* not this plan's */
		if (attempts)
			attempts[recs[i].episode]++;
		if (sbx_sweep_record_done(&recs[i]))
			done[recs[i].episode] = true;
	}
}
