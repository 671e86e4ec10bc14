/* SPDX-License-Identifier: MIT */
/*
 * Simulated engines (see sim_backend.h). Every operation on a sandbox is one
 * engine operation: counted, checked against the engine's failure modes,
 * then slept for its drawn latency. Counters sit under one mutex per engine,
 * so a thousand engines driven by a thousand threads rarely contend.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/stream.h"
#include "sim_backend.h"

typedef struct sim_engine {
	sim_engine_spec spec;
	pthread_mutex_t lock;
	sim_engine_stats stats;
} sim_engine;

struct sim_cluster {
	uint64_t generation; /* tells a thread's generator which cluster seeded it */
	sim_engine *engines;
	size_t n;
	double time_scale;
	uint64_t seed;
	atomic_uint_fast64_t streams; /* generators handed out: each thread's is distinct */
	atomic_uint_fast64_t sandboxes;
};

typedef struct sim_backend {
	sbx_backend base;
	sim_cluster *c;
	size_t engine;
	bool created, destroyed, dies, died_counted;
} sim_backend;

/* --- random draws: splitmix64 per thread ----------------------------------- */

static atomic_uint_fast64_t generations = 1;
static _Thread_local uint64_t rng_state, rng_generation;

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double sim_uniform(sim_cluster *c)
{
	if (rng_generation != c->generation) {
		uint64_t k = atomic_fetch_add(&c->streams, 1);

		rng_state = c->seed ^ (k * 0xd1b54a32d192ed03ULL);
		rng_generation = c->generation;
	}
	return (double)(splitmix64(&rng_state) >> 11) * 0x1.0p-53;
}

double sim_draw_ms(sim_cluster *c, const sim_latency *l)
{
	double u1, u2;

	if (l->sigma <= 0)
		return l->median_ms;
	/* Box-Muller: one standard normal from two uniforms (u1 > 0 for the log). */
	do
		u1 = sim_uniform(c);
	while (u1 <= 0);
	u2 = sim_uniform(c);
	return l->median_ms * exp(l->sigma * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2));
}

void sim_sleep_ms(const sim_cluster *c, double ms)
{
	double s = ms * c->time_scale / 1000.0;
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* --- the cluster ------------------------------------------------------------ */

sim_cluster *sim_cluster_new(const sim_engine_spec *specs, size_t n, double time_scale,
			     uint64_t seed)
{
	sim_cluster *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->engines = calloc(n ? n : 1, sizeof(*c->engines));
	if (!c->engines) {
		free(c);
		return NULL;
	}
	c->generation = atomic_fetch_add(&generations, 1);
	c->n = n;
	c->time_scale = time_scale;
	c->seed = seed;
	for (size_t i = 0; i < n; i++) {
		c->engines[i].spec = specs[i];
		if (c->engines[i].spec.speed <= 0)
			c->engines[i].spec.speed = 1;
		pthread_mutex_init(&c->engines[i].lock, NULL);
	}
	return c;
}

void sim_cluster_free(sim_cluster *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		pthread_mutex_destroy(&c->engines[i].lock);
	free(c->engines);
	free(c);
}

size_t sim_cluster_size(const sim_cluster *c)
{
	return c->n;
}

double sim_cluster_speed(const sim_cluster *c, size_t i)
{
	return i < c->n ? c->engines[i].spec.speed : 1;
}

double sim_cluster_time_scale(const sim_cluster *c)
{
	return c->time_scale;
}

void sim_cluster_stats(sim_cluster *c, size_t i, sim_engine_stats *out)
{
	pthread_mutex_lock(&c->engines[i].lock);
	*out = c->engines[i].stats;
	pthread_mutex_unlock(&c->engines[i].lock);
}

int sim_cluster_engine_index(const sim_cluster *c, const char *url, size_t *out)
{
	unsigned long long i;
	char *end;

	if (!url) {
		*out = 0;
		return c->n ? 0 : -EINVAL;
	}
	if (strncmp(url, "sim://", 6) != 0 || url[6] < '0' || url[6] > '9')
		return -EINVAL;
	errno = 0;
	i = strtoull(url + 6, &end, 10);
	if (errno || *end || i >= c->n)
		return -EINVAL;
	*out = (size_t)i;
	return 0;
}

/* --- one engine operation --------------------------------------------------- */

/*
 * Counts the operation, applies the engine's failure modes, then sleeps the
 * drawn latency. Returns 0, -ECONNREFUSED (dead engine) or -ETIMEDOUT (hung).
 */
static int engine_op(sim_backend *sb, const sim_latency *lat, const char *what, sbx_error *err)
{
	sim_engine *e = &sb->c->engines[sb->engine];
	const sim_engine_spec *sp = &e->spec;
	uint64_t n;

	pthread_mutex_lock(&e->lock);
	n = ++e->stats.ops;
	if (sp->fail_after >= 0 && n > (uint64_t)sp->fail_after) {
		e->stats.failed++;
		if (!e->stats.broken_ms)
			e->stats.broken_ms = sbx_now_ms();
		pthread_mutex_unlock(&e->lock);
		return sbx_error_set(err, -ECONNREFUSED, "sim://%zu: %s: connection refused",
				     sb->engine, what);
	}
	if (sp->hang_after >= 0 && n > (uint64_t)sp->hang_after) {
		e->stats.timeouts++;
		if (!e->stats.broken_ms)
			e->stats.broken_ms = sbx_now_ms();
		pthread_mutex_unlock(&e->lock);
		sim_sleep_ms(sb->c, sp->op_timeout_ms);
		return sbx_error_set(err, -ETIMEDOUT, "sim://%zu: %s: no answer in %.0f ms",
				     sb->engine, what, sp->op_timeout_ms);
	}
	pthread_mutex_unlock(&e->lock);
	sim_sleep_ms(sb->c, sim_draw_ms(sb->c, lat) / sp->speed);
	return 0;
}

/* --- the backend ops --------------------------------------------------------- */

static int sim_create(sbx_backend *b, const sbx_sandbox_spec *spec, sbx_error *err)
{
	sim_backend *sb = (sim_backend *)b;
	sim_engine *e = &sb->c->engines[sb->engine];
	uint64_t k;
	int r;

	r = engine_op(sb, &e->spec.create, "create", err);
	if (r < 0)
		return r;
	pthread_mutex_lock(&e->lock);
	e->stats.creates++;
	if (e->spec.capacity && e->stats.live >= e->spec.capacity) {
		e->stats.refused++;
		pthread_mutex_unlock(&e->lock);
		return sbx_error_set(err, -EBUSY, "sim://%zu: create: at capacity (%u sandboxes)",
				     sb->engine, e->spec.capacity);
	}
	if (sim_uniform(sb->c) < e->spec.p_refuse) {
		e->stats.refused++;
		pthread_mutex_unlock(&e->lock);
		return sbx_error_set(err, -EAGAIN, "sim://%zu: create refused", sb->engine);
	}
	e->stats.live++;
	if (e->stats.live > e->stats.peak)
		e->stats.peak = e->stats.live;
	pthread_mutex_unlock(&e->lock);
	sb->created = true;
	k = atomic_fetch_add(&sb->c->sandboxes, 1);
	if (asprintf(&b->id, "sim-%zu-%llu", sb->engine, (unsigned long long)k) < 0) {
		b->id = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	b->image_id = strdup(spec && spec->image ? spec->image : "sim");
	if (!b->image_id)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int sim_start(sbx_backend *b, sbx_error *err)
{
	sim_backend *sb = (sim_backend *)b;
	sim_engine *e = &sb->c->engines[sb->engine];
	int r = engine_op(sb, &e->spec.start, "start", err);

	if (r == 0)
		sb->dies = sim_uniform(sb->c) < e->spec.p_die;
	return r;
}

static int sim_copy_in(sbx_backend *b, const char *dest, const sbx_sandbox_file *files, size_t n,
		       sbx_error *err)
{
	sim_backend *sb = (sim_backend *)b;

	(void)dest, (void)files, (void)n;
	return engine_op(sb, &sb->c->engines[sb->engine].spec.copy, "copy in", err);
}

/*
 * A stream to a server that has already answered: its reply to one request
 * (200, "ok") waits in the socket, as a healthy sandbox's GET /health would
 * get, and whatever is written to it is never read. The far end stays open
 * until the stream closes, so a write does not fail with EPIPE.
 */
typedef struct sim_stream {
	sbx_stream base;
	sbx_stream *inner;
	int peer;
} sim_stream;

static const char health_reply[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				   "Content-Length: 15\r\n\r\n{\"status\":\"ok\"}";

static ssize_t ss_read(sbx_stream *s, void *buf, size_t n, int timeout_ms)
{
	return sbx_stream_read(((sim_stream *)s)->inner, buf, n, timeout_ms);
}

static int ss_write(sbx_stream *s, const void *buf, size_t n)
{
	return sbx_stream_write(((sim_stream *)s)->inner, buf, n);
}

static bool ss_stale(sbx_stream *s)
{
	return sbx_stream_stale(((sim_stream *)s)->inner);
}

static void ss_close(sbx_stream *s)
{
	sim_stream *ss = (sim_stream *)s;

	sbx_stream_close(ss->inner);
	close(ss->peer);
	free(ss);
}

static const sbx_stream_ops sim_stream_ops = {ss_read, ss_write, ss_stale, ss_close};

static int sim_open_stream(sbx_backend *b, sbx_stream **out, sbx_error *err)
{
	sim_backend *sb = (sim_backend *)b;
	sim_stream *ss;
	int fds[2], r;

	r = engine_op(sb, &sb->c->engines[sb->engine].spec.exec, "exec", err);
	if (r < 0)
		return r;
	ss = calloc(1, sizeof(*ss));
	if (!ss)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) {
		free(ss);
		return sbx_error_set(err, -errno, "sim: socketpair: %s", strerror(errno));
	}
	if (write(fds[1], health_reply, sizeof(health_reply) - 1) !=
		    (ssize_t)(sizeof(health_reply) - 1) ||
	    sbx_stream_from_fds(&ss->inner, fds[0], fds[0]) < 0) {
		close(fds[0]);
		close(fds[1]);
		free(ss);
		return sbx_error_set(err, -EIO, "sim: stream setup failed");
	}
	ss->base.ops = &sim_stream_ops;
	ss->peer = fds[1];
	*out = &ss->base;
	return 0;
}

static int sim_copy_out(sbx_backend *b, const char *dir, const char *host_dir, sbx_error *err)
{
	sim_backend *sb = (sim_backend *)b;

	(void)dir, (void)host_dir;
	return engine_op(sb, &sb->c->engines[sb->engine].spec.copy, "copy out", err);
}

static int sim_status(sbx_backend *b, sbx_sandbox_status *out, sbx_error *err)
{
	sim_backend *sb = (sim_backend *)b;
	sim_engine *e = &sb->c->engines[sb->engine];
	int r = engine_op(sb, &e->spec.exec, "inspect", err);

	if (r < 0)
		return r;
	*out = (sbx_sandbox_status){.running = sb->created && !sb->destroyed && !sb->dies};
	if (sb->dies) {
		out->exit_code = 137;
		snprintf(out->detail, sizeof(out->detail), "sandbox died (simulated)");
		pthread_mutex_lock(&e->lock);
		if (!sb->died_counted)
			e->stats.died++;
		pthread_mutex_unlock(&e->lock);
		sb->died_counted = true;
	}
	return 0;
}

static int sim_logs(sbx_backend *b, sbx_buf *out, sbx_error *err)
{
	(void)b;
	return sbx_buf_append(out, "simulated sandbox\n", 18) < 0
		       ? sbx_error_set(err, -ENOMEM, "out of memory")
		       : 0;
}

static int sim_destroy(sbx_backend *b, sbx_error *err)
{
	sim_backend *sb = (sim_backend *)b;
	sim_engine *e = &sb->c->engines[sb->engine];
	int r;

	if (!sb->created || sb->destroyed)
		return 0;
	r = engine_op(sb, &e->spec.remove, "remove", err);
	if (r < 0)
		return r; /* still there, as a sandbox on a hung engine is */
	sb->destroyed = true;
	pthread_mutex_lock(&e->lock);
	e->stats.live--;
	e->stats.removed++;
	pthread_mutex_unlock(&e->lock);
	return 0;
}

static void sim_free(sbx_backend *b)
{
	if (!b)
		return;
	sbx_free_all(b->id, b->image_id, b->endpoint);
	free(b);
}

static const sbx_backend_ops sim_ops = {
	.name = "sim",
	.create = sim_create,
	.start = sim_start,
	.copy_in = sim_copy_in,
	.open_stream = sim_open_stream,
	.copy_out = sim_copy_out,
	.status = sim_status,
	.logs = sim_logs,
	.destroy = sim_destroy,
	.free = sim_free,
};

int sim_backend_new(sbx_backend **out, const char *engine, void *userdata, sbx_error *err)
{
	sim_cluster *c = userdata;
	sim_backend *sb;
	size_t i;

	if (sim_cluster_engine_index(c, engine, &i) < 0)
		return sbx_error_set(err, -EINVAL,
				     "'%s': not a simulated engine (sim://0 to sim://%zu)",
				     engine ? engine : "(default)", c->n ? c->n - 1 : 0);
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	sb->base.ops = &sim_ops;
	sb->c = c;
	sb->engine = i;
	*out = &sb->base;
	return 0;
}
