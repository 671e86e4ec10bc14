/* SPDX-License-Identifier: MIT */
/*
 * A warm sandbox: created, started and answering before any task exists, so
 * claiming it costs only the relay, the copy-in and one readiness check.
 * The hardening is the backend's, exactly as for a cold launch.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "sbx/relay.h"
#include "sbx/run.h"
#include "sbx/warm.h"
#include "sbx/stream.h"

#define WARM_TTL_S	 600
#define READY_TRY_MS	 2000
#define RESET_WAIT_MS	 10000 /* the whole reset, host side */
#define RESET_ANSWER_MAX (64 * 1024)
#define IDLE_STREAMS	 8 /* kept open between a sandbox's requests (sbx_warm_request) */

struct sbx_warm {
	sbx_backend *backend;
	sbx_warm_info info;
	pthread_mutex_t lock; /* guards idle */
	sbx_stream *idle[IDLE_STREAMS];
	size_t n_idle;
};

static int64_t real_s(void)
{
	return (int64_t)time(NULL);
}

/*
 * One GET /health on a fresh bridge stream: 1 when it answers 200, 0 not
 * yet. The stream that answered is kept for the claim (one exec fewer).
 */
static int health_once(sbx_backend *b)
{
	_cleanup_stream_ sbx_stream *s = NULL;
	int status = 0, k;

	if (b->ops->open_stream(b, &s, NULL) < 0)
		return 0;
	k = sbx_relay_stream_get(s, "/health", READY_TRY_MS, &status, NULL);
	if (status != 200)
		return 0;
	if (k > 0 && b->ops->keep_stream)
		b->ops->keep_stream(b, TAKE_PTR(s));
	return 1;
}

/*
 * --reuse on an image built before reset in place: its sandbox-bridge has no
 * -r, exits at once with its usage, and the server is never reached. Such an
 * image is remembered by its id (a rebuilt tag is tried afresh) and said once
 * per process; sbx_warm_new then refuses it before starting anything.
 */
#define NO_RESET_MAX 16
static pthread_mutex_t no_reset_lock = PTHREAD_MUTEX_INITIALIZER;
static char no_reset_ids[NO_RESET_MAX][256];
static size_t n_no_reset;

static int no_reset_error(const sbx_warm *w, sbx_error *err)
{
	return sbx_error_set(err, -ENOTSUP,
			     "image '%s': its sandbox-bridge has no -r (reset in place): built "
			     "before --reuse, so its episodes run single use; rebuild it "
			     "(sandboxctl build) to reuse sandboxes",
			     w->info.image);
}

static bool no_reset_known(const char *image_id)
{
	bool known = false;

	pthread_mutex_lock(&no_reset_lock);
	for (size_t i = 0; i < n_no_reset && !known; i++)
		known = strcmp(no_reset_ids[i], image_id) == 0;
	pthread_mutex_unlock(&no_reset_lock);
	return known;
}

/* Remembers image_id; true the first time (the caller says so then). */
static bool no_reset_add(const char *image_id)
{
	bool first;

	if (no_reset_known(image_id))
		return false;
	pthread_mutex_lock(&no_reset_lock);
	first = n_no_reset < NO_RESET_MAX;
	if (first)
		snprintf(no_reset_ids[n_no_reset++], sizeof(no_reset_ids[0]), "%s", image_id);
	pthread_mutex_unlock(&no_reset_lock);
	return first;
}

/*
 * Whether the sandbox's bridge knows -r, from its usage (`sandbox-bridge -h`):
 * 1 yes or cannot tell (no exec, no usage), 0 no.
 */
static int bridge_has_reset(sbx_backend *b)
{
	static const char *const argv[] = {"sandbox-bridge", "-h", NULL};
	sbx_backend_exec x = {.argv = argv, .timeout_ms = 5000, .max_bytes = 4096};
	_cleanup_(sbx_buf_free) sbx_buf errout = SBX_BUF_INIT(4096);
	int code = 0;

	if (!b->ops->exec || b->ops->exec(b, &x, NULL, &errout, &code, NULL) < 0 ||
	    !strstr(sbx_buf_str(&errout), "Usage: sandbox-bridge"))
		return 1;
	return strstr(sbx_buf_str(&errout), "[-r]") != NULL;
}

static int wait_health(sbx_warm *w, uint32_t limit_s, sbx_error *err)
{
	int64_t t0 = sbx_now_ms(), until = t0 + (int64_t)limit_s * 1000;
	long pause_ms = 0;
	bool probed = w->info.reuse <= 1;

	for (;;) {
		sbx_sandbox_status st;

		if (health_once(w->backend))
			return 0;
		if (!probed) {
			probed = true;
			if (!bridge_has_reset(w->backend)) {
				if (no_reset_add(w->backend->image_id ? w->backend->image_id
								      : w->info.image)) {
					no_reset_error(w, err);
					sbx_log_warning("%s", sbx_error_message(err));
				}
				return no_reset_error(w, err);
			}
		}
		if (w->backend->ops->status(w->backend, &st, NULL) >= 0 && !st.running)
			return sbx_error_set(err, -ECHILD,
					     "warm sandbox '%s' exited with status %d", w->info.id,
					     st.exit_code);
		if (sbx_now_ms() >= until)
			return sbx_error_set(
				err, -ETIMEDOUT,
				"warm sandbox '%s': the server did not answer within %u s",
				w->info.id, limit_s);
		sbx_run__ready_pause(&pause_ms, sbx_now_ms() - t0);
	}
}

int sbx_warm_new(sbx_warm **out, const sbx_warm_opts *opts, sbx_error *err)
{
	_cleanup_(sbx_warm_freep) sbx_warm *w = NULL;
	_cleanup_free_ char *owner = NULL;
	/* The shape it is made in: the run's defaults where the options set none. */
	static const sbx_limits shape = {.memory = SBX_RUN_DEFAULT_MEMORY,
					 .cpus = SBX_RUN_DEFAULT_CPUS,
					 .pids = SBX_RUN_DEFAULT_PIDS};
	sbx_sandbox_spec spec = {0};
	sbx_warm_info *i;
	double t;
	int r;

	if (!opts || opts->version != SBX_WARM_OPTS_VERSION || !opts->image || !opts->id)
		return sbx_error_set(err, -EINVAL, "warm sandbox: bad options");
	w = calloc(1, sizeof(*w));
	if (!w)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	pthread_mutex_init(&w->lock, NULL);
	i = &w->info;
	snprintf(i->image, sizeof(i->image), "%s", opts->image);
	snprintf(i->id, sizeof(i->id), "%s", opts->id);
	sbx_limits_resolve(&i->limits, &opts->limits, NULL, &shape);
	i->limits.timeout_s = 0; /* an episode brings its own deadline, and the pool its grace */
	i->limits.grace_s = 0;
	i->created = real_s();
	i->deadline = i->created + (opts->ttl_s ? opts->ttl_s : WARM_TTL_S);
	i->reuse = opts->reuse > 1 ? opts->reuse : 1;

	r = sbx_label_owner_self(&owner, err);
	if (r < 0)
		return r;
	r = opts->backend ? opts->backend(&w->backend, opts->engine, opts->backend_userdata, err)
			  : sbx_backend_docker_new_at(&w->backend, opts->engine, err);
	if (r < 0)
		return r;
	spec.image = i->image;
	spec.run_id = i->id;
	spec.task = "warm";
	spec.owner = owner;
	spec.created = i->created;
	spec.deadline = i->deadline;
	spec.limits = i->limits;
	spec.limits.grace_s = SBX_RUN_DEFAULT_GRACE_S;
	spec.workspace_bytes = WORKSPACE_BYTES;
	spec.tmp_bytes = TMP_BYTES;
	spec.run_bytes = RUN_BYTES;
	spec.test = opts->test;
	spec.reuse = i->reuse > 1;

	t = sbx_now_msf();
	r = w->backend->ops->create(w->backend, &spec, err);
	i->create_ms = sbx_now_msf() - t;
	if (r < 0)
		return r;
	snprintf(i->container, sizeof(i->container), "%s", w->backend->id ? w->backend->id : "");
	if (w->backend->applied.bundle[0])
		i->reuse = 1; /* a foreign image: single use (backend_docker.c) */
	if (i->reuse > 1 && w->backend->image_id && no_reset_known(w->backend->image_id))
		return no_reset_error(w, err);
	t = sbx_now_msf();
	r = w->backend->ops->start(w->backend, err);
	i->start_ms = sbx_now_msf() - t;
	if (r < 0)
		return r;
	t = sbx_now_msf();
	r = wait_health(w, opts->ready_timeout_s ? opts->ready_timeout_s : 30, err);
	if (r >= 0 && w->backend->ops->prewarm)
		r = w->backend->ops->prewarm(w->backend, SBX_SANDBOX_WORKSPACE, err);
	i->ready_ms = sbx_now_msf() - t;
	if (r < 0)
		return r;
	*out = TAKE_PTR(w);
	return 0;
}

const sbx_warm_info *sbx_warm_get_info(const sbx_warm *w)
{
	return &w->info;
}

static void close_idle(sbx_warm *w)
{
	for (size_t k = 0; k < w->n_idle; k++)
		sbx_stream_close(w->idle[k]);
	w->n_idle = 0;
	pthread_mutex_destroy(&w->lock);
}

sbx_backend *sbx_warm__take_backend(sbx_warm *w)
{
	sbx_backend *b = TAKE_PTR(w->backend);

	close_idle(w);
	free(w);
	return b;
}

void sbx_warm_free(sbx_warm *w)
{
	if (!w)
		return;
	close_idle(w);
	if (w->backend) {
		if (w->backend->id)
			w->backend->ops->destroy(w->backend, NULL);
		w->backend->ops->free(w->backend);
	}
	free(w);
}

/* ---- reuse: a reset in place between two episodes -------------------------- */

static double json_ms(const cJSON *ms, const char *name)
{
	const cJSON *v = sbx_json_get(ms, name);

	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : 0;
}

/*
 * PID 1's verdict for reset id (GET /control/reset on the new server): 1
 * clean, 0 not this reset's yet, < 0 dirty (err says what was found).
 */
static int read_verdict(const char *body, size_t len, uint64_t id, sbx_warm_info *i, sbx_error *err)
{
	_cleanup_json_ cJSON *o = NULL;
	const cJSON *rid, *clean, *found, *ms;

	if (sbx_json_parse(body, len, &o, err) < 0)
		return sbx_error_prefix(err, -EPROTO, "the reset's verdict");
	rid = sbx_json_get(o, "reset");
	clean = sbx_json_get(o, "clean");
	found = sbx_json_get(o, "found");
	ms = sbx_json_get(o, "ms");
	if (!cJSON_IsNumber(rid) || rid->valuedouble != (double)id)
		return 0;
	i->reset_kill_ms = json_ms(ms, "kill");
	i->reset_agent_ms = json_ms(ms, "agent");
	i->reset_clean_ms = json_ms(ms, "clean");
	i->reset_verify_ms = json_ms(ms, "verify");
	if (cJSON_IsTrue(clean))
		return 1;
	return sbx_error_set(err, -EIO, "the reset found: %.300s",
			     cJSON_IsString(found) ? found->valuestring : "(nothing said)");
}

/*
 * Orders the reset (POST /control/reset: PID 1 kills the server once the 202
 * is out) and reads the new server's verdict on the same stream: its bridge
 * (sandbox-bridge -r) connects again to the new server. No container
 * operation. 0 clean; < 0 failed or dirty.
 */
static int reset_backend(sbx_backend *b, sbx_warm_info *i, sbx_error *err)
{
	_cleanup_stream_ sbx_stream *s = NULL;
	_cleanup_(sbx_buf_free) sbx_buf ans = SBX_BUF_INIT(RESET_ANSWER_MAX);
	uint64_t id = (uint64_t)i->reused;
	int64_t until = sbx_now_ms() + RESET_WAIT_MS, deadline;
	char body[96];
	int n, status, k;

	i->deadline = real_s() + (i->deadline - i->created);
	i->created = real_s();
	deadline = i->deadline;
	n = snprintf(body, sizeof(body), "{\"reset\":%" PRIu64 ",\"deadline\":%" PRId64 "}", id,
		     deadline);
	k = b->ops->open_stream(b, &s, err);
	if (k >= 0)
		k = sbx_relay_stream_request(s, "POST", "/control/reset", body, (size_t)n,
					     RESET_WAIT_MS, &status, &ans, err);
	if (k >= 0 && status != 202)
		k = sbx_error_set(err, -EPROTO, "the reset was refused: HTTP %d: %.200s", status,
				  sbx_buf_str(&ans));
	while (k >= 0) {
		sbx_buf_reset(&ans);
		k = sbx_relay_stream_request(s, "GET", "/control/reset", NULL, 0,
					     (int)(until - sbx_now_ms()), &status, &ans, err);
		if (k < 0)
			break;
		if (status == 200) {
			int v = read_verdict(ans.data, ans.len, id, i, err);

			if (v != 0) {
				k = v < 0 ? v : 0;
				break;
			}
		}
		if (sbx_now_ms() >= until) {
			k = sbx_error_set(err, -ETIMEDOUT, "no verdict from the reset within %d ms",
					  RESET_WAIT_MS);
			break;
		}
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	if (k >= 0 && b->ops->keep_stream)
		b->ops->keep_stream(b, TAKE_PTR(s));
	return k < 0 ? k : 0;
}

void sbx_run__reset_in_place(sbx_run *run)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_warm_info i = run->warm_info;
	double t = sbx_now_msf();
	sbx_warm *w;
	int r;

	run->res.reset_after = true;
	i.reused = run->res.reused + 1;
	r = reset_backend(run->backend, &i, &err);
	i.reset_ms = sbx_now_msf() - t;
	w = r >= 0 ? calloc(1, sizeof(*w)) : NULL;
	if (!w) {
		sbx_error de = SBX_ERROR_INIT;

		if (r >= 0)
			sbx_error_set(&err, -ENOMEM, "out of memory");
		run->res.retired = true;
		run->res.reset_found = strdup(sbx_error_message(&err));
		sbx_log_warning("sandbox '%s' retired: %s", run->backend->id,
				sbx_error_message(&err));
		t = sbx_now_msf();
		sbx_run__phase_end(run, SBX_PHASE_REMOVE, t,
				   run->backend->ops->destroy(run->backend, &de), "remove", &de);
		return;
	}
	pthread_mutex_init(&w->lock, NULL);
	w->backend = TAKE_PTR(run->backend);
	w->info = i;
	run->kept_warm = w;
}

int sbx_warm_reset(sbx_warm *w, sbx_error *err)
{
	sbx_warm_info i = w->info;
	double t = sbx_now_msf();
	int r;

	if (i.reused + 1 >= i.reuse)
		return sbx_error_set(err, -ESTALE, "warm sandbox '%s': its reuse is spent", i.id);
	/*
	 * The idle streams go back to the backend: the reset's order takes one
	 * (no exec), and their bridges (-r) connect again to the new server
	 * (none has a request under way, so none is replayed to it).
	 */
	pthread_mutex_lock(&w->lock);
	for (size_t k = 0; k < w->n_idle; k++) {
		if (w->backend->ops->keep_stream && !sbx_stream_stale(w->idle[k]))
			w->backend->ops->keep_stream(w->backend, w->idle[k]);
		else
			sbx_stream_close(w->idle[k]);
	}
	w->n_idle = 0;
	pthread_mutex_unlock(&w->lock);
	i.reused++;
	r = reset_backend(w->backend, &i, err);
	if (r < 0)
		return r;
	i.reset_ms = sbx_now_msf() - t;
	w->info = i;
	return 0;
}

sbx_warm *sbx_run_take_warm(sbx_run *run)
{
	return run ? TAKE_PTR(run->kept_warm) : NULL;
}

void sbx_warm_destroy(sbx_warm *w)
{
	if (w && w->backend && w->backend->id)
		w->backend->ops->destroy(w->backend, NULL);
}

bool sbx_warm_fits(const sbx_warm *w, const char *image, uint64_t memory, double cpus,
		   uint32_t pids, const char *runtime, int64_t until_s)
{
	const sbx_warm_info *i = &w->info;
	sbx_limits want = {.memory = memory, .cpus = cpus, .pids = pids};

	sbx_limits_set_runtime(&want, runtime);
	return strcmp(i->image, image) == 0 && sbx_limits_same_sandbox(&i->limits, &want) &&
	       i->deadline >= until_s;
}

/* An open stream: an idle one (reused: true), else a new bridge exec. */
static int take_stream(sbx_warm *w, sbx_stream **out, bool *reused, sbx_error *err)
{
	pthread_mutex_lock(&w->lock);
	while (w->n_idle > 0) {
		sbx_stream *s = w->idle[--w->n_idle];

		if (!sbx_stream_stale(s)) {
			pthread_mutex_unlock(&w->lock);
			*out = s;
			*reused = true;
			return 0;
		}
		sbx_stream_close(s);
	}
	pthread_mutex_unlock(&w->lock);
	*reused = false;
	return w->backend->ops->open_stream(w->backend, out, err);
}

static void give_stream(sbx_warm *w, sbx_stream *s, bool usable)
{
	pthread_mutex_lock(&w->lock);
	if (usable && w->n_idle < IDLE_STREAMS) {
		w->idle[w->n_idle++] = s;
		s = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	sbx_stream_close(s);
}

int sbx_warm_request(sbx_warm *w, const char *method, const char *path, const void *body,
		     size_t len, int timeout_ms, int *status, sbx_buf *answer, sbx_error *err)
{
	for (int attempt = 0;; attempt++) {
		sbx_error e = SBX_ERROR_INIT;
		sbx_stream *s = NULL;
		bool reused;
		int k;

		k = take_stream(w, &s, &reused, err);
		if (k < 0)
			return k;
		k = sbx_relay_stream_request(s, method, path, body, len, timeout_ms, status, answer,
					     &e);
		give_stream(w, s, k > 0);
		/* A pooled stream the bridge closed meanwhile: once more on a fresh one. */
		if (reused && attempt == 0 && *status == 0 &&
		    (k == -ENODATA || k == -EPIPE || k == -ECONNRESET)) {
			sbx_error_clear(&e);
			continue;
		}
		if (k < 0) {
			sbx_error_set(err, k, "%s %s: %s", method, path,
				      e.msg[0] ? e.msg : strerror(-k));
			sbx_error_clear(&e);
			return k;
		}
		sbx_error_clear(&e);
		return 0;
	}
}
