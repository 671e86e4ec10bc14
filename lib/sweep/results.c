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
#define READ_CHUNK	  (64 << 10)
#define KINDS		  3 /* result, infra_error, interrupted: see kind_of */

/*
 * Where kept records' strings live: a million records with five malloc'd
 * strings each were most of a big sweep's memory. Tasks, agents and engines
 * repeat, so each distinct one is stored once (a small open-addressing table);
 * run ids and errors are copied into chunks that are freed together.
 */
#define STRINGS_CHUNK (1 << 20)

typedef struct string_chunk {
	struct string_chunk *next;
	size_t used, size;
	char data[];
} string_chunk;

typedef struct string_store {
	string_chunk *chunks;
	const char **interned; /* open addressing, n_interned * 2 <= cap */
	size_t n_interned, cap;
} string_store;

struct sbx_sweep_results {
	sbx_sweep_record *v; /* strings point into strings, never freed one by one */
	size_t n, cap;
	string_store strings;
	uint32_t (*slots)[KINDS]; /* per episode and kind: 1 + its index in v, 0: none yet */
	size_t n_slots, episodes_max;
	unsigned dropped; /* lines skipped while loading; the first: */
	size_t drop_line;
	const char *drop_why;
	int fd;		/* O_APPEND, -1 when loaded read-only */
	int sync_error; /* the first failed write or fsync: every later append fails too */
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

/* The members of a results line that parsing reads, in one pass over the object. */
enum line_key {
	K_EPISODE,
	K_ATTEMPT,
	K_EPOCH,
	K_STATUS,
	K_SEED,
	K_SCORE,
	K_AGENT_MS,
	K_TOTAL_MS,
	K_TASK,
	K_AGENT,
	K_RUN_ID,
	K_ENGINE,
	K_ERROR,
	K_TOOL_CALLS,
	K_USAGE,
	K_REASON,
	N_KEYS
};

static const char *const line_keys[N_KEYS] = {
	[K_EPISODE] = "episode",   [K_ATTEMPT] = "attempt",
	[K_EPOCH] = "epoch",	   [K_STATUS] = "status",
	[K_SEED] = "seed",	   [K_SCORE] = "score",
	[K_AGENT_MS] = "agent_ms", [K_TOTAL_MS] = "total_ms",
	[K_TASK] = "task",	   [K_AGENT] = "agent",
	[K_RUN_ID] = "run_id",	   [K_ENGINE] = "engine",
	[K_ERROR] = "error",	   [K_TOOL_CALLS] = "tool_calls",
	[K_USAGE] = "usage",	   [K_REASON] = "reason",
};

/*
 * Each known member of o, found in one walk over its children (the first of
 * a repeated name, as cJSON's own lookup finds): a million lines looked up
 * member by member spent most of their time comparing names.
 */
static void line_members(const cJSON *o, const cJSON *m[N_KEYS])
{
	memset(m, 0, N_KEYS * sizeof(*m));
	for (const cJSON *c = o->child; c; c = c->next) {
		if (!c->string)
			continue;
		for (size_t k = 0; k < N_KEYS; k++)
			if (!m[k] && c->string[0] == line_keys[k][0] &&
			    strcmp(c->string, line_keys[k]) == 0) {
				m[k] = c;
				break;
			}
	}
}

static double number_or(const cJSON *v, double dflt)
{
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *string_or(const cJSON *v, const char *dflt)
{
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : dflt;
}

int sbx_sweep_record_parse(const char *line, size_t len, sbx_sweep_record *out, sbx_error *err)
{
	_cleanup_json_ cJSON *j = NULL;
	sbx_sweep_record r = {0};
	const cJSON *m[N_KEYS];
	int rc;

	rc = sbx_json_parse(line, len, &j, err);
	if (rc < 0)
		return rc;
	if (!cJSON_IsObject(j))
		return sbx_error_set(err, -EINVAL, "not a sweep result line");
	line_members(j, m);
	if (!whole_number(m[K_EPISODE], SBX_SWEEP_MAX_EPISODES) ||
	    !whole_number(m[K_ATTEMPT], 1e6) || !whole_number(m[K_EPOCH], SBX_SWEEP_MAX_EPOCHS) ||
	    parse_status(string_or(m[K_STATUS], ""), &r.status) < 0)
		return sbx_error_set(err, -EINVAL, "not a sweep result line");
	r.episode = (size_t)m[K_EPISODE]->valuedouble;
	r.attempt = (unsigned)m[K_ATTEMPT]->valuedouble;
	r.epoch = (unsigned)m[K_EPOCH]->valuedouble;
	if (whole_number(m[K_SEED], 9007199254740991.0)) {
		r.seeded = true;
		r.seed = (uint64_t)m[K_SEED]->valuedouble;
	}
	if (cJSON_IsNumber(m[K_SCORE])) {
		r.graded = true;
		r.score = m[K_SCORE]->valuedouble;
	}
	r.agent_ms = number_or(m[K_AGENT_MS], 0);
	r.total_ms = number_or(m[K_TOTAL_MS], 0);
	r.tool_calls = number_or(m[K_TOOL_CALLS], -1);
	if (cJSON_IsObject(m[K_USAGE])) {
		r.has_usage = true;
		r.usage.input_tokens = sbx_json_get_number(m[K_USAGE], "input_tokens", 0);
		r.usage.output_tokens = sbx_json_get_number(m[K_USAGE], "output_tokens", 0);
		r.usage.cached_tokens = sbx_json_get_number(m[K_USAGE], "cached_tokens", 0);
	}
	r.task = sbx_sweep__strdup0(string_or(m[K_TASK], ""));
	r.agent = sbx_sweep__strdup0(string_or(m[K_AGENT], ""));
	r.run_id = sbx_sweep__strdup0(string_or(m[K_RUN_ID], ""));
	r.engine = sbx_sweep__strdup0(string_or(m[K_ENGINE], NULL));
	r.error = sbx_sweep__strdup0(string_or(m[K_ERROR], NULL));
	r.reason = sbx_sweep__strdup0(string_or(m[K_REASON], NULL));
	if (!r.task || !r.agent || !r.run_id || (string_or(m[K_ENGINE], NULL) && !r.engine) ||
	    (string_or(m[K_ERROR], NULL) && !r.error) ||
	    (string_or(m[K_REASON], NULL) && !r.reason)) {
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
	/* result.json's own view (usage, tool calls) is the one other tools read too. */
	_cleanup_json_ cJSON *j = sbx_run_result_tree(res);
	sbx_sweep_record r = {0};

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

/* A copy of the n bytes at p (and a NUL) in the store's chunks. NULL on OOM. */
static const char *store_copy(string_store *st, const char *p, size_t n)
{
	string_chunk *c = st->chunks;
	char *out;

	if (!c || c->size - c->used < n + 1) {
		size_t size = n + 1 > STRINGS_CHUNK ? n + 1 : STRINGS_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = st->chunks;
		c->used = 0;
		c->size = size;
		st->chunks = c;
	}
	out = c->data + c->used;
	memcpy(out, p, n);
	out[n] = '\0';
	c->used += n + 1;
	return out;
}

static size_t hash_str(const char *s)
{
	size_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The store's one copy of s (made on first sight). NULL for NULL, or on OOM. */
static const char *store_intern(string_store *st, const char *s)
{
	size_t i;

	if (!s)
		return NULL;
	if ((st->n_interned + 1) * 2 > st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 64;
		const char **t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t j = 0; j < st->cap; j++)
			if (st->interned[j]) {
				for (i = hash_str(st->interned[j]) & (cap - 1); t[i];
				     i = (i + 1) & (cap - 1))
					;
				t[i] = st->interned[j];
			}
		free(st->interned);
		st->interned = t;
		st->cap = cap;
	}
	for (i = hash_str(s) & (st->cap - 1); st->interned[i]; i = (i + 1) & (st->cap - 1))
		if (strcmp(st->interned[i], s) == 0)
			return st->interned[i];
	st->interned[i] = store_copy(st, s, strlen(s));
	if (st->interned[i])
		st->n_interned++;
	return st->interned[i];
}

static const char *store_dup(string_store *st, const char *s)
{
	return s ? store_copy(st, s, strlen(s)) : NULL;
}

static void store_free(string_store *st)
{
	while (st->chunks) {
		string_chunk *next = st->chunks->next;

		free(st->chunks);
		st->chunks = next;
	}
	free(st->interned);
	*st = (string_store){0};
}

/*
 * Keeps rec, its strings moved into the store (rec is cleared either way).
 * The array grows to the plan's size at once when it can, so a big sweep's
 * records are not copied by doubling.
 */
static int push(sbx_sweep_results *r, sbx_sweep_record *rec)
{
	sbx_sweep_record kept = *rec;
	int rc = 0;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		sbx_sweep_record *v;

		if (r->cap < r->episodes_max && r->episodes_max <= SBX_SWEEP_MAX_EPISODES)
			cap = cap > r->episodes_max ? cap : r->episodes_max;
		else if (r->cap >= r->episodes_max && r->cap >= 64)
			cap = r->cap + r->cap / 4; /* past the plan: a few extra kinds, not 2x */
		v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			rc = -ENOMEM;
		else
			r->v = v, r->cap = cap;
	}
	if (rc == 0) {
		/* The record's own strings are cast away from const only to be freed below. */
		kept.run_id = (char *)store_dup(&r->strings, rec->run_id);
		kept.task = (char *)store_intern(&r->strings, rec->task);
		kept.agent = (char *)store_intern(&r->strings, rec->agent);
		kept.engine = (char *)store_intern(&r->strings, rec->engine);
		kept.error = (char *)store_dup(&r->strings, rec->error);
		/* Reasons repeat across episodes ("agent exited 1: boom"): one copy each. */
		kept.reason = (char *)store_intern(&r->strings, rec->reason);
		if ((rec->run_id && !kept.run_id) || (rec->task && !kept.task) ||
		    (rec->agent && !kept.agent) || (rec->engine && !kept.engine) ||
		    (rec->error && !kept.error) || (rec->reason && !kept.reason))
			rc = -ENOMEM;
		else
			r->v[r->n++] = kept;
	}
	sbx_sweep_record_clear(rec);
	return rc;
}

/* Which of an episode's records a line folds into: its result, infra errors, interruptions. */
static size_t kind_of(const sbx_sweep_record *rec)
{
	return sbx_sweep_record_done(rec) ? 0 : rec->status == SBX_RUN_INFRA_ERROR ? 1 : 2;
}

/*
 * Keeps rec (taking what it owns) unless its episode already has a record of
 * its kind: then that one counts one line more. What is kept is bounded by
 * the episodes, however many lines repeat them.
 */
static int fold(sbx_sweep_results *r, sbx_sweep_record *rec)
{
	uint32_t *slot;

	if (rec->episode >= r->episodes_max) {
		sbx_sweep_record_clear(rec); /* not this plan's */
		return 0;
	}
	if (rec->episode >= r->n_slots) {
		size_t n = rec->episode + 1 > r->n_slots * 2 ? rec->episode + 1 : r->n_slots * 2;
		uint32_t(*v)[KINDS];

		if (n > r->episodes_max)
			n = r->episodes_max;
		v = realloc(r->slots, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + r->n_slots, 0, (n - r->n_slots) * sizeof(*v));
		r->slots = v;
		r->n_slots = n;
	}
	slot = &r->slots[rec->episode][kind_of(rec)];
	if (*slot) {
		r->v[*slot - 1].lines++;
		sbx_sweep_record_clear(rec);
		return 0;
	}
	rec->lines = 1;
	if (push(r, rec) < 0)
		return -ENOMEM;
	*slot = (uint32_t)r->n;
	return 0;
}

static void drop(sbx_sweep_results *r, size_t line, const char *why)
{
	if (!r->dropped++) {
		r->drop_line = line;
		r->drop_why = why;
	}
}

static int fold_line(sbx_sweep_results *r, const char *text, size_t len, size_t line)
{
	sbx_sweep_record rec = {0};
	int rc;

	if (len == 0)
		return 0;
	if (len > SBX_SWEEP_LINE_MAX) {
		drop(r, line, "longer than 64 KiB");
		return 0;
	}
	if (sbx_sweep_record_parse(text, len, &rec, NULL) < 0) {
		drop(r, line, "not a sweep result line");
		return 0;
	}
	rc = fold(r, &rec);
	sbx_sweep_record_clear(&rec);
	return rc;
}

/*
 * Reads fd's lines into r, a chunk at a time: memory is the chunk and the
 * longest line kept (SBX_SWEEP_LINE_MAX), whatever the file's size; a longer
 * line is skipped as it streams past. *good_len: the bytes up to the end of
 * the last whole line; a last line without its newline is torn.
 */
static int load_stream(sbx_sweep_results *r, int fd, off_t *good_len)
{
	const size_t cap = SBX_SWEEP_LINE_MAX + READ_CHUNK + 1;
	_cleanup_free_ char *buf = malloc(cap);
	size_t have = 0, line = 1;
	off_t at = 0; /* the file offset of buf[0] */
	bool skipping = false;

	if (!buf)
		return -ENOMEM;
	*good_len = 0;
	for (;;) {
		ssize_t n = sbx_read_retry(fd, buf + have, cap - have);
		size_t off = 0;
		const char *nl;

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		have += (size_t)n;
		while ((nl = memchr(buf + off, '\n', have - off))) {
			size_t len = (size_t)(nl - (buf + off));

			if (skipping)
				drop(r, line, "longer than 64 KiB");
			else if (fold_line(r, buf + off, len, line) < 0)
				return -ENOMEM;
			skipping = false;
			line++;
			off += len + 1;
			*good_len = at + (off_t)off;
		}
		at += (off_t)off;
		have -= off;
		memmove(buf, buf + off, have);
		if (have > SBX_SWEEP_LINE_MAX) {
			/* Too long to be a result line: its bytes go by unkept. */
			skipping = true;
			at += (off_t)have;
			have = 0;
		}
	}
	if (have || skipping)
		drop(r, line, "torn (no newline: its write never finished)");
	return 0;
}

static int results_new(const sbx_sweep_plan *plan, sbx_sweep_results **out)
{
	sbx_sweep_results *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->fd = -1;
	r->episodes_max = plan ? sbx_sweep_plan_size(plan) : SBX_SWEEP_MAX_EPISODES + 1;
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
	return 0;
}

static int open_common(const char *dir, const sbx_sweep_plan *plan, bool append,
		       sbx_sweep_results **out, unsigned *dropped, sbx_error *err)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *r = NULL;
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	off_t good = 0;
	struct stat st;
	int rc;

	if (asprintf(&path, "%s/results.jsonl", dir) < 0 || results_new(plan, &r) < 0)
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
	rc = load_stream(r, fd, &good);
	if (rc < 0)
		return sbx_error_set(err, rc, "'%s': read failed: %s", path, strerror(-rc));
	if (append) {
		/* Cut a torn tail so the next line starts on a line of its own. */
		if (good < lseek(fd, 0, SEEK_END) && ftruncate(fd, good) < 0)
			return sbx_error_set(err, -errno, "'%s': truncate: %s", path,
					     strerror(errno));
		if (fcntl(fd, F_SETFL, O_APPEND) < 0)
			return sbx_error_set(err, -errno, "'%s': %s", path, strerror(errno));
		r->fd = TAKE_FD(fd);
	}
	if (dropped)
		*dropped = r->dropped;
	*out = TAKE_PTR(r);
	return 0;
}

int sbx_sweep_results_open(const char *dir, const sbx_sweep_plan *plan, sbx_sweep_results **out,
			   unsigned *dropped, sbx_error *err)
{
	return open_common(dir, plan, true, out, dropped, err);
}

int sbx_sweep_results_load(const char *dir, const sbx_sweep_plan *plan, sbx_sweep_results **out,
			   sbx_error *err)
{
	return open_common(dir, plan, false, out, NULL, err);
}

unsigned sbx_sweep_results_dropped(const sbx_sweep_results *r, size_t *line, const char **why)
{
	if (line)
		*line = r->drop_line;
	if (why)
		*why = r->drop_why;
	return r->dropped;
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
	/* One write: with O_APPEND the line lands whole, never interleaved. */
	do
		n = write(r->fd, line, len + 1);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)(len + 1))
		rc = sbx_error_set(err, n < 0 ? -errno : -EIO, "results.jsonl: write: %s",
				   n < 0 ? strerror(errno) : "short write");
	/* Outside the lock, so concurrent appends share the journal's commits. */
	else if (fsync(r->fd) < 0)
		rc = sbx_error_set(err, -errno, "results.jsonl: fsync: %s", strerror(errno));
	pthread_mutex_lock(&r->lock);
	/*
	 * The kernel reports a failed writeback to one fsync only, and a short
	 * write leaves a fragment the next line would be glued to: after either,
	 * no append succeeds (the sweep stops; resume re-runs what is missing).
	 */
	if (rc < 0 && !r->sync_error)
		r->sync_error = rc;
	else if (rc == 0 && r->sync_error)
		rc = sbx_error_set(err, r->sync_error, "results.jsonl: an earlier write failed: %s",
				   strerror(-r->sync_error));
	if (rc == 0) {
		line[len] = '\0';
		rc = sbx_sweep_record_parse(line, len, &copy, err);
		if (rc == 0 && fold(r, &copy) < 0)
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
	free(r->v); /* the records' strings are the store's */
	store_free(&r->strings);
	free(r->slots);
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
			attempts[recs[i].episode] += sbx_sweep__lines(&recs[i]);
		if (sbx_sweep_record_done(&recs[i]))
			done[recs[i].episode] = true;
	}
}
