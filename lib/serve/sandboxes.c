/* SPDX-License-Identifier: MIT */
/*
 * Sandboxes without a task (/v1/sandboxes, for Inspect and any client that
 * wants a hardened sandbox to exec in): each is an sbx_warm, taken from the
 * warm pool when image and limits fit, else started cold, and used as it
 * stands. DELETE answers at once and ends it in the background: with
 * --reuse it is reset in place (sbx_warm_reset: a fresh server, PID 1's
 * clean slate verified) and goes back to the pool when it came from there or
 * fits it, else it is removed; the service removes it at its expiry (the
 * reaper) and on shutdown too. Its PID 1 ends it at that expiry (plus a grace) by itself, so
 * a killed service leaves nothing for long, and `gc` knows it by its labels
 * (run-id `serve-<id>-sbx-<n>`, task `warm`). Exec and files go through
 * sandbox_io.c to the sandbox's own server on its open bridge streams.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "sandboxes.h"
#include "service.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/json.h"
#include "sbx/log.h"

#define DEFAULT_MAX_SANDBOXES 64
#define DEFAULT_LIFE_S	      3600
#define PID1_GRACE_S	      60
#define WARM_CHECK_MS	      2000
#define BACK_WAIT_MS	      1500 /* a create waits this long for a sandbox being reset */

/* ---- the table (under s->lock) ---- */

static serve_sandbox *find(sbx_serve *s, const char *id)
{
	for (size_t i = 0; i < s->n_sbs; i++)
		if (strcmp(s->sbs[i]->id, id) == 0)
			return s->sbs[i];
	return NULL;
}

static void unlink_sandbox(sbx_serve *s, serve_sandbox *sb)
{
	for (size_t i = 0; i < s->n_sbs; i++)
		if (s->sbs[i] == sb) {
			memmove(&s->sbs[i], &s->sbs[i + 1], (s->n_sbs - i - 1) * sizeof(*s->sbs));
			s->n_sbs--;
			return;
		}
}

serve_sandbox *sbx_serve__sandbox_get(sbx_serve *s, const char *id)
{
	serve_sandbox *sb;

	pthread_mutex_lock(&s->lock);
	sb = find(s, id);
	if (sb)
		sb->refs++;
	pthread_mutex_unlock(&s->lock);
	return sb;
}

static void sandbox_free(serve_sandbox *sb)
{
	sbx_warm_free(sb->w);
	sbx_free_all(sb->image, sb->workdir, sb->engine_url);
	free(sb);
}

void sbx_serve__sandbox_put(sbx_serve *s, serve_sandbox *sb)
{
	pthread_mutex_lock(&s->lock);
	sb->refs--;
	pthread_cond_broadcast(&s->sbx_gone);
	pthread_mutex_unlock(&s->lock);
}

/* sb has left the table (its id answers 404 from now on): it is ending. Under s->lock. */
static void unlinked(sbx_serve *s, serve_sandbox *sb)
{
	atomic_store(&sb->removed, true);
	s->m.sandboxes--;
	s->sbx_ending++;
}

/*
 * Whether sb, just unlinked by its DELETE, is to be reset back into the
 * pool: --reuse left, no request under way on it (one could reach the next
 * user's server), not draining, and the pool takes it (which from now on
 * counts it as coming back, so a create waits for it: decided before the
 * DELETE answers).
 */
static bool reset_begin(sbx_serve *s, serve_sandbox *sb)
{
	bool idle;

	pthread_mutex_lock(&s->lock);
	idle = sb->refs == 0 && !s->draining;
	pthread_mutex_unlock(&s->lock);
	/* As many back in the pool as sandboxes may live: what its clients use at once. */
	return idle && sbx_serve__pool_reset_begin(s->pool, sb->engine, sb->w, s->max_sandboxes);
}

/*
 * Ends sb, already unlinked: with resetting (reset_begin), reset in place
 * and back to the pool; a reset that fails or finds anything retires it.
 * Otherwise the container goes at once (requests still running on it
 * fail), then the object once the last of them let go.
 */
static void end_sandbox(sbx_serve *s, serve_sandbox *sb, enum serve_sbx_end why, bool resetting)
{
	sbx_error err = SBX_ERROR_INIT;
	bool clean = false;

	if (resetting) {
		clean = sbx_warm_reset(sb->w, &err) == 0;
		if (!clean)
			sbx_log_warning("serve: sandbox %s: its reset retired the container: %s",
					sb->id, sbx_error_message(&err));
	}
	if (!clean) {
		sbx_warm_destroy(sb->w);
		pthread_mutex_lock(&s->lock);
		while (sb->refs > 0)
			pthread_cond_wait(&s->sbx_gone, &s->lock);
		pthread_mutex_unlock(&s->lock);
	}
	/* Before the count drops: drain frees the pool once it is 0. */
	sbx_serve__pool_end_sandbox(s->pool, sb->engine, false, sb->image, resetting,
				    clean ? TAKE_PTR(sb->w) : NULL);
	sandbox_free(sb);
	pthread_mutex_lock(&s->lock);
	s->m.sandboxes_removed[why]++;
	s->m.resets += clean;
	s->m.reset_retired += resetting && !clean;
	s->sbx_ending--;
	pthread_cond_broadcast(&s->sbx_gone);
	pthread_mutex_unlock(&s->lock);
}

typedef struct end_job {
	sbx_serve *s;
	serve_sandbox *sb;
	bool resetting;
} end_job;

static void *end_main(void *arg)
{
	end_job j = *(end_job *)arg;

	free(arg);
	end_sandbox(j.s, j.sb, SERVE_SBX_DELETED, j.resetting);
	return NULL;
}

/*
 * end_sandbox in a thread of its own (DELETE answers before it ends); in
 * this one when none starts.
 */
static void end_in_background(sbx_serve *s, serve_sandbox *sb, bool resetting)
{
	end_job *j = malloc(sizeof(*j));
	pthread_attr_t attr;
	pthread_t t;
	int k = -1;

	if (j && pthread_attr_init(&attr) == 0) {
		*j = (end_job){s, sb, resetting};
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		k = pthread_create(&t, &attr, end_main, j);
		pthread_attr_destroy(&attr);
	}
	if (k != 0) {
		free(j);
		end_sandbox(s, sb, SERVE_SBX_DELETED, resetting);
	}
}

/* ---- create ---- */

typedef struct sbx_req {
	const char *image;
	uint64_t memory;
	double cpus;
	uint32_t pids;
	uint32_t life_s;
	const char *workdir;
} sbx_req;

/* "2g", "512m", "1048576": bytes; 0 when not a size. */
static uint64_t parse_size(const cJSON *it)
{
	static const char units[] = "kmgt";
	char *end;
	double v;
	const char *u;

	if (cJSON_IsNumber(it))
		return it->valuedouble >= 1 && it->valuedouble < 1e15 ? (uint64_t)it->valuedouble
								      : 0;
	if (!cJSON_IsString(it))
		return 0;
	v = strtod(it->valuestring, &end);
	if (end == it->valuestring || !(v > 0) || v >= 1e15)
		return 0;
	if (!*end)
		return (uint64_t)v;
	u = strchr(units, *end | 0x20);
	if (!u || !*u ||
	    (end[1] && !((end[1] | 0x20) == 'b' && !end[2]) &&
	     !((end[1] | 0x20) == 'i' && (end[2] | 0x20) == 'b' && !end[3])))
		return 0;
	for (const char *x = units; x <= u; x++)
		v *= 1024;
	return v < 1e15 ? (uint64_t)v : 0;
}

static const char *image_ref(const char *name)
{
	if (strcmp(name, "slim") == 0)
		return SERVE_SANDBOX_IMAGE;
	if (strcmp(name, "full") == 0)
		return SERVE_SANDBOX_IMAGE_FULL;
	return name;
}

static int parse_create(const char *body, size_t len, uint32_t max_life_s, sbx_req *r, cJSON **json,
			sbx_error *err)
{
	const cJSON *it;

	*r = (sbx_req){SERVE_SANDBOX_IMAGE,
		       SBX_RUN_DEFAULT_MEMORY,
		       SBX_RUN_DEFAULT_CPUS,
		       SBX_RUN_DEFAULT_PIDS,
		       DEFAULT_LIFE_S < max_life_s ? DEFAULT_LIFE_S : max_life_s,
		       SERVE_SANDBOX_WORKDIR};
	if (len == 0)
		return 0;
	if (sbx_json_parse(body, len, json, NULL) < 0 || !cJSON_IsObject(*json))
		return sbx_error_set(err, -EINVAL, "the body must be a JSON object");
	cJSON_ArrayForEach (it, *json) {
		const char *k = it->string;

		if (cJSON_IsNull(it))
			continue;
		if (strcmp(k, "image") == 0) {
			if (!cJSON_IsString(it) || !it->valuestring[0] ||
			    strlen(it->valuestring) > 200 || strchr(it->valuestring, ' '))
				return sbx_error_set(err, -EINVAL, "'image': an image reference");
			r->image = image_ref(it->valuestring);
		} else if (strcmp(k, "memory") == 0) {
			r->memory = parse_size(it);
			if (r->memory < (16u << 20))
				return sbx_error_set(
					err, -EINVAL,
					"'memory': bytes, or \"512m\", \"2g\" (>= 16m)");
		} else if (strcmp(k, "cpus") == 0) {
			if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0.01) ||
			    it->valuedouble > 1024)
				return sbx_error_set(err, -EINVAL, "'cpus': a number, 0.01..1024");
			r->cpus = it->valuedouble;
		} else if (strcmp(k, "pids") == 0) {
			if (!cJSON_IsNumber(it) || it->valuedouble < 8 || it->valuedouble > 65536 ||
			    floor(it->valuedouble) != it->valuedouble)
				return sbx_error_set(err, -EINVAL,
						     "'pids': a whole number, 8..65536");
			r->pids = (uint32_t)it->valuedouble;
		} else if (strcmp(k, "timeout") == 0) {
			if (!cJSON_IsNumber(it) || it->valuedouble < 1 ||
			    it->valuedouble > max_life_s ||
			    floor(it->valuedouble) != it->valuedouble)
				return sbx_error_set(err, -EINVAL,
						     "'timeout': whole seconds of life, 1..%u",
						     max_life_s);
			r->life_s = (uint32_t)it->valuedouble;
		} else if (strcmp(k, "workdir") == 0) {
			if (!cJSON_IsString(it) || it->valuestring[0] != '/' ||
			    strlen(it->valuestring) > 1024 || strstr(it->valuestring, "/../") ||
			    strchr(it->valuestring, '?') || strchr(it->valuestring, '&'))
				return sbx_error_set(err, -EINVAL, "'workdir': an absolute path");
			r->workdir = it->valuestring;
		} else {
			return sbx_error_set(
				err, -EINVAL,
				"unknown key '%.64s' (image, memory, cpus, pids, timeout, workdir)",
				k);
		}
	}
	return 0;
}

typedef struct fit_arg {
	const sbx_req *r;
	const char *runtime;
	int64_t until_s;
} fit_arg;

static bool fits(const sbx_warm *w, const void *arg)
{
	const fit_arg *a = arg;

	return sbx_warm_fits(w, a->r->image, a->r->memory, a->r->cpus, a->r->pids, a->runtime,
			     a->until_s);
}

/* Whether a pool's sandbox can fit r: the default limits (the pool's). */
static bool pool_like(const sbx_req *r)
{
	return r->memory == SBX_RUN_DEFAULT_MEMORY && r->cpus == SBX_RUN_DEFAULT_CPUS &&
	       r->pids == SBX_RUN_DEFAULT_PIDS;
}

/*
 * A sandbox for r: a warm one that fits, else (with --reuse) one coming
 * back from its reset within BACK_WAIT_MS, else a cold start.
 */
static int start_sandbox(sbx_serve *s, const sbx_req *r, serve_sandbox *sb, sbx_error *err)
{
	fit_arg fa = {r, s->o.runtime, (int64_t)time(NULL) + r->life_s};
	sbx_warm_opts wo = SBX_WARM_OPTS_INIT;
	int64_t back_until = sbx_now_ms() + BACK_WAIT_MS;
	char label[160];
	int k;

	for (;;) {
		sb->w = sbx_serve__pool_take_fit(s->pool, fits, &fa, &sb->engine);
		if (sb->w || s->o.reuse <= 1 || !pool_like(r) ||
		    !sbx_serve__pool_wait_back(s->pool, r->image, back_until))
			break;
	}
	if (sb->w) {
		sbx_error he = SBX_ERROR_INIT;
		int status = 0;

		/* One round trip on its kept stream: a sandbox that died while it waited
		 * (its engine restarted, the host ran out of memory) is not handed out. */
		if (sbx_warm_request(sb->w, "GET", "/health", NULL, 0, WARM_CHECK_MS, &status, NULL,
				     &he) == 0 &&
		    status == 200) {
			sb->warm = true;
			return 0;
		}
		sbx_log_warning("serve: warm sandbox for %s did not answer (%s); starting cold",
				sb->id, he.msg[0] ? he.msg : "HTTP status");
		sbx_warm_free(TAKE_PTR(sb->w));
		sbx_serve__pool_end_sandbox(s->pool, sb->engine, true, r->image, false, NULL);
		pthread_mutex_lock(&s->lock);
		s->m.engine_errors++;
		pthread_mutex_unlock(&s->lock);
	}
	sb->engine = sbx_serve__pool_cold_engine(s->pool);
	sbx_serve__pool_begin(s->pool, sb->engine);
	pthread_mutex_lock(&s->lock);
	snprintf(label, sizeof(label), "%s-sbx-%llu", s->id, (unsigned long long)++s->sbx_seq);
	pthread_mutex_unlock(&s->lock);
	wo.image = r->image;
	wo.id = label;
	wo.engine = sbx_serve__pool_engine_url(s->pool, sb->engine);
	wo.ttl_s = r->life_s + PID1_GRACE_S;
	wo.test = s->o.test;
	wo.limits.memory = r->memory;
	wo.limits.cpus = r->cpus;
	wo.limits.pids = r->pids;
	sbx_limits_set_runtime(&wo.limits, s->o.runtime);
	/* One that fits the pool may join it after its DELETE, with a pool's life. */
	wo.reuse = pool_like(r) ? s->o.reuse : 0;
	if (wo.reuse > 1 && wo.ttl_s < sbx_serve__pool_ttl_s(s->pool))
		wo.ttl_s = sbx_serve__pool_ttl_s(s->pool);
	k = sbx_warm_new(&sb->w, &wo, err);
	/* An image the engine does not have is the client's mistake, not the engine's. */
	if (k < 0)
		sbx_serve__pool_end_sandbox(s->pool, sb->engine, err->http_status != 404, r->image,
					    false, NULL);
	return k;
}

static int random_id(char *out, size_t size)
{
	unsigned char b[8];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -EIO;
	snprintf(out, size, "sbx-%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
		 b[5], b[6], b[7]);
	return 0;
}

static cJSON *sandbox_obj(const serve_sandbox *sb)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *users = cJSON_CreateArray();
	char when[32];
	time_t t = (time_t)sb->expires_at;
	struct tm tm;

	if (!o || !users) {
		cJSON_Delete(o);
		cJSON_Delete(users);
		return NULL;
	}
	cJSON_AddItemToArray(users, cJSON_CreateString(SERVE_SANDBOX_USER));
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON_AddStringToObject(o, "id", sb->id);
	cJSON_AddStringToObject(o, "image", sb->image);
	cJSON_AddStringToObject(o, "workdir", sb->workdir);
	cJSON_AddStringToObject(o, "user", SERVE_SANDBOX_USER);
	cJSON_AddItemToObject(o, "users", users);
	cJSON_AddStringToObject(o, "expires_at", when);
	cJSON_AddNumberToObject(o, "expires_at_unix", (double)sb->expires_at);
	cJSON_AddBoolToObject(o, "warm", sb->warm);
	cJSON_AddNumberToObject(o, "create_ms", sb->create_ms);
	/* Sandboxes its container served before (--reuse: 0 for a fresh one). */
	cJSON_AddNumberToObject(o, "reused", sbx_warm_get_info(sb->w)->reused);
	cJSON_AddStringToObject(o, "engine", sb->engine_url ? sb->engine_url : "default");
	cJSON_AddStringToObject(o, "container", sbx_warm_get_info(sb->w)->container);
	return o;
}

char *sbx_serve__sandbox_show(const serve_sandbox *sb)
{
	_cleanup_json_ cJSON *o = sandbox_obj(sb);

	return o ? cJSON_PrintUnformatted(o) : NULL;
}

/* Room for one more in the table. */
static int grow(sbx_serve *s)
{
	serve_sandbox **n;
	size_t cap;

	if (s->n_sbs < s->cap_sbs)
		return 0;
	cap = s->cap_sbs ? s->cap_sbs * 2 : 16;
	n = realloc(s->sbs, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->sbs = n;
	s->cap_sbs = cap;
	return 0;
}

int sbx_serve__sandbox_create(sbx_serve *s, const char *body, size_t len, char **out)
{
	_cleanup_json_ cJSON *json = NULL;
	sbx_error err = SBX_ERROR_INIT;
	serve_sandbox *sb;
	int64_t t0 = sbx_now_ms();
	const char *url;
	sbx_req r;
	int k;

	if (parse_create(body, len, s->max_timeout_s, &r, &json, &err) < 0)
		return sbx_serve__sandbox_error(out, 400, "bad_request", sbx_error_message(&err));
	pthread_mutex_lock(&s->lock);
	if (s->draining) {
		pthread_mutex_unlock(&s->lock);
		return sbx_serve__sandbox_error(out, 503, "shutting_down",
						"the service is shutting down");
	}
	if (s->m.sandboxes >= s->max_sandboxes) {
		s->m.sandboxes_refused++;
		pthread_mutex_unlock(&s->lock);
		return sbx_serve__sandbox_error(
			out, 429, "too_many_sandboxes",
			"--max-sandboxes sandboxes are live; delete one first");
	}
	s->m.sandboxes++;
	pthread_mutex_unlock(&s->lock);
	sb = calloc(1, sizeof(*sb));
	if (!sb || random_id(sb->id, sizeof(sb->id)) < 0 || !(sb->image = strdup(r.image)) ||
	    !(sb->workdir = strdup(r.workdir)))
		goto oom;
	k = start_sandbox(s, &r, sb, &err);
	if (k < 0) {
		bool no_image = err.http_status == 404;

		sandbox_free(sb);
		pthread_mutex_lock(&s->lock);
		s->m.sandboxes--;
		s->m.engine_errors += !no_image;
		pthread_mutex_unlock(&s->lock);
		if (no_image)
			return sbx_serve__sandbox_error(out, 400, "image_not_found",
							sbx_error_message(&err));
		return sbx_serve__sandbox_error(out, s->stop ? 503 : 502, "engine_error",
						sbx_error_message(&err));
	}
	url = sbx_serve__pool_engine_url(s->pool, sb->engine);
	sb->engine_url = url ? strdup(url) : NULL;
	sb->expires_at = (int64_t)time(NULL) + r.life_s;
	sb->create_ms = (double)(sbx_now_ms() - t0);
	*out = sbx_serve__sandbox_show(sb);
	pthread_mutex_lock(&s->lock);
	if (!*out || (url && !sb->engine_url) || s->draining || grow(s) < 0) {
		bool draining = s->draining;

		unlinked(s, sb);
		pthread_mutex_unlock(&s->lock);
		free(*out);
		end_sandbox(s, sb, SERVE_SBX_SHUTDOWN, false);
		return draining ? sbx_serve__sandbox_error(out, 503, "shutting_down",
							   "the service is shutting down")
				: sbx_serve__sandbox_error(out, 500, "internal", "out of memory");
	}
	s->sbs[s->n_sbs++] = sb;
	s->m.sandboxes_created[sb->warm]++;
	pthread_mutex_unlock(&s->lock);
	return 201;
oom:
	if (sb)
		sandbox_free(sb);
	pthread_mutex_lock(&s->lock);
	s->m.sandboxes--;
	pthread_mutex_unlock(&s->lock);
	return sbx_serve__sandbox_error(out, 500, "internal", "out of memory");
}

/* ---- the others ---- */

int sbx_serve__sandbox_delete(sbx_serve *s, const char *id, char **out)
{
	serve_sandbox *sb;
	bool resetting;

	_cleanup_json_ cJSON *o = cJSON_CreateObject();

	pthread_mutex_lock(&s->lock);
	sb = find(s, id);
	if (sb) {
		unlink_sandbox(s, sb);
		unlinked(s, sb);
	}
	pthread_mutex_unlock(&s->lock);
	if (!sb)
		return sbx_serve__sandbox_error(out, 404, "sandbox_not_found", "no such sandbox");
	resetting = reset_begin(s, sb);
	if (o) {
		cJSON_AddStringToObject(o, "id", sb->id);
		cJSON_AddStringToObject(o, "state", resetting ? "resetting" : "removed");
	}
	/*
	 * A reset answers at once: the next create waits for the sandbox to come
	 * back. A removal is done before the answer, as the client's back-pressure:
	 * answered at once, a client's next create (Inspect's next sample) found
	 * the pool still refilling and started cold beside the removal, 602 ms
	 * p50 at concurrency 4 back to back against 61 ms (bench/inspect.sh
	 * with BENCH_REUSE=1).
	 */
	if (resetting)
		end_in_background(s, sb, true);
	else
		end_sandbox(s, sb, SERVE_SBX_DELETED, false);
	*out = o ? cJSON_PrintUnformatted(o) : NULL;
	return !*out ? 204 : resetting ? 202 : 200;
}

int sbx_serve__sandbox_list(sbx_serve *s, char **out)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	cJSON *a = o ? cJSON_AddArrayToObject(o, "sandboxes") : NULL;

	if (!a)
		return sbx_serve__sandbox_error(out, 500, "internal", "out of memory");
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_sbs; i++)
		cJSON_AddItemToArray(a, sandbox_obj(s->sbs[i]));
	pthread_mutex_unlock(&s->lock);
	*out = cJSON_PrintUnformatted(o);
	return *out ? 200 : sbx_serve__sandbox_error(out, 500, "internal", "out of memory");
}

void sbx_serve__sandboxes_expire(sbx_serve *s)
{
	int64_t now = (int64_t)time(NULL);

	for (;;) {
		serve_sandbox *sb = NULL;

		pthread_mutex_lock(&s->lock);
		for (size_t i = 0; i < s->n_sbs && !sb; i++)
			if (s->sbs[i]->expires_at <= now)
				sb = s->sbs[i];
		if (sb) {
			unlink_sandbox(s, sb);
			unlinked(s, sb);
		}
		pthread_mutex_unlock(&s->lock);
		if (!sb)
			return;
		sbx_log_info("serve: sandbox %s expired; removed", sb->id);
		end_sandbox(s, sb, SERVE_SBX_EXPIRED, false);
	}
}

void sbx_serve__sandboxes_stop(sbx_serve *s)
{
	for (;;) {
		serve_sandbox *sb = NULL;

		pthread_mutex_lock(&s->lock);
		if (s->n_sbs) {
			sb = s->sbs[--s->n_sbs];
			unlinked(s, sb);
		}
		pthread_mutex_unlock(&s->lock);
		if (!sb)
			break;
		end_sandbox(s, sb, SERVE_SBX_SHUTDOWN, false);
	}
	/* Creates under way see draining and remove what they started; DELETEs
	 * end theirs (draining: removed, not reset). */
	pthread_mutex_lock(&s->lock);
	while (s->m.sandboxes > 0 || s->sbx_ending > 0) {
		pthread_mutex_unlock(&s->lock);
		sbx_sleep_ms(50);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	free(s->sbs);
	s->sbs = NULL;
	s->cap_sbs = 0;
}

int sbx_serve__sandbox_error(char **out, int status, const char *code, const char *message)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();

	*out = NULL;
	if (o && cJSON_AddStringToObject(o, "error", code) &&
	    cJSON_AddStringToObject(o, "message", message))
		*out = cJSON_PrintUnformatted(o);
	return status;
}

unsigned sbx_serve__sandboxes_max(const sbx_serve_opts *o)
{
	return o->max_sandboxes ? o->max_sandboxes : DEFAULT_MAX_SANDBOXES;
}
