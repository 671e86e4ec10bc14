/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sbx/backend.h"
#include "sbx/cleanup.h"
#include "sbx/docker.h"
#include "sbx/docker_stream.h"
#include "sbx/docker_tar.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "backend-docker-internal.h"
#include "seccomp_profile.h"

#define EXEC_TIMEOUT_MS (5 * 60 * 1000)
#define LOG_MAX		(8 * 1024 * 1024)
#define LOG_HEAD_MAX	(64 * 1024)

/* The user every exec runs as: never the root a published sandbox starts as. */
#define EXEC_USER "1000:1000"

/* What every exec in a published sandbox gets instead of Config.Env's token. */
const char *const sbx_backend_docker__published_exec_env[] = {"SANDBOX_HTTP_TOKEN=", NULL};

/* --- the exec stream as an sbx_stream ------------------------------------- */

typedef struct exec_stream {
	sbx_stream base;
	sbx_docker_stream *s;
} exec_stream;

static ssize_t es_read(sbx_stream *s, void *buf, size_t n, int timeout_ms)
{
	exec_stream *e = (exec_stream *)s;

	for (;;) {
		int which = SBX_DOCKER_STDOUT;
		ssize_t r = sbx_docker_stream_read(e->s, buf, n, &which, timeout_ms, NULL);

		if (r == -EAGAIN)
			r = -ETIMEDOUT;
		if (r > 0 && which == SBX_DOCKER_STDERR) {
			sbx_log_debug("sandbox-bridge: %.*s", (int)(r > 200 ? 200 : r),
				      (const char *)buf);
			continue;
		}
		return r;
	}
}

static int es_write(sbx_stream *s, const void *buf, size_t n)
{
	exec_stream *e = (exec_stream *)s;

	return sbx_docker_stream_write(e->s, buf, n, 60000, NULL);
}

static bool es_stale(sbx_stream *s)
{
	exec_stream *e = (exec_stream *)s;
	struct pollfd p = {.fd = sbx_docker_stream_fd(e->s), .events = POLLIN};

	return sbx_docker_stream_pending(e->s) || poll(&p, 1, 0) != 0;
}

static void es_close(sbx_stream *s)
{
	exec_stream *e = (exec_stream *)s;

	sbx_docker_stream_free(e->s);
	free(e);
}

static const sbx_stream_ops exec_stream_ops = {es_read, es_write, es_stale, es_close};

/* --- operations ------------------------------------------------------------ */

/* At most 3 files of 8 MiB on the engine's disk (local compresses the older two). */
const sbx_docker_kv sbx_backend_docker__log_opts[] = {{"max-size", "8m"}, {"max-file", "3"}};

/*
 * d_stream, opened on first use (db->lock held): the connection of every
 * call that may run while the copy-in thread uses db->d.
 */
int sbx_backend_docker__open_locked_conn(docker_backend *db, sbx_error *err)
{
	/* Same engine, same API version: no second negotiation round trip. */
	sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
	int r;

	if (db->d_stream)
		return 0;
	o.api_version = sbx_docker_api_version(db->d);
	o.host = db->host;
	r = sbx_docker_open(&db->d_stream, &o, err);
	if (r >= 0 && db->published &&
	    (r = sbx_docker_set_exec_env(db->d_stream, sbx_backend_docker__published_exec_env,
					 err)) < 0) {
		sbx_docker_free(db->d_stream);
		db->d_stream = NULL;
	}
	return r;
}

static int db_start(sbx_backend *b, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	_cleanup_free_ char *ip = NULL;
	int r, port = 0;

	r = sbx_docker_container_start(db->d, b->id, err);
	if (r < 0 || !db->published)
		return r;
	/* The engine picks the host port at start. */
	r = sbx_docker_container_host_port(db->d, b->id, SBX_SANDBOX_HTTP_PORT_SPEC, &ip, &port,
					   err);
	if (r < 0)
		return sbx_error_prefix(err, r, "container '%s': published port", b->id);
	if (!ip || strcmp(ip, "127.0.0.1") != 0 || port <= 0 || port > 65535)
		return sbx_error_set(err, -EPROTO,
				     "container '%s': port %s published on '%s:%d', not on "
				     "127.0.0.1; refusing to go on",
				     b->id, SBX_SANDBOX_HTTP_PORT_SPEC, ip ? ip : "", port);
	free(b->endpoint);
	if (asprintf(&b->endpoint, "127.0.0.1:%d", port) < 0) {
		b->endpoint = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

int sbx_sandbox_files_pack(const sbx_sandbox_file *files, size_t n, sbx_docker_tar **out,
			   const void **data, size_t *len, sbx_error *err)
{
	sbx_docker_tar *tar = NULL;
	int r = sbx_docker_tar_new(&tar, 0, err);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (strchr(files[i].name, '/')) {
			_cleanup_free_ char *dir = strdup(files[i].name);

			r = dir ? sbx_docker_tar_add_dir(tar, dirname(dir), 02775, 1000, 1000, err)
				: sbx_error_set(err, -ENOMEM, "out of memory");
		}
		if (r >= 0)
			r = sbx_docker_tar_add_file(tar, files[i].name, files[i].data, files[i].len,
						    0664, 1000, 1000, err);
	}
	if (r >= 0)
		r = sbx_docker_tar_finish(tar, data, len, err);
	if (r < 0) {
		sbx_docker_tar_free(tar);
		return r;
	}
	*out = tar;
	return 0;
}

static int db_copy_in(sbx_backend *b, const char *dest, const sbx_sandbox_file *files, size_t n,
		      sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *t = NULL;
	const void *tar;
	size_t len;
	int r;

	r = sbx_sandbox_files_pack(files, n, &t, &tar, &len, err);
	if (r < 0)
		return r;
	return sbx_docker_exec_copy_in(db->d, b->id, dest, EXEC_USER, tar, len, EXEC_TIMEOUT_MS,
				       err);
}

/* A fresh exec of the bridge: one stream to the server's socket. */
static int open_bridge(docker_backend *db, sbx_stream **out, sbx_error *err)
{
	sbx_docker_exec_opts o = SBX_DOCKER_EXEC_OPTS_INIT;
	_cleanup_free_ char *exec_id = NULL;
	sbx_docker_stream *ds = NULL;
	exec_stream *es;
	int r;

	o.user = EXEC_USER;
	o.cmd = db->foreign ? (const char *const[]){SBX_BUNDLE_BRIDGE, SBX_SANDBOX_SOCKET, NULL}
		: db->reuse
			? (const char *const[]){"sandbox-bridge", "-r", SBX_SANDBOX_SOCKET, NULL}
			: (const char *const[]){"sandbox-bridge", SBX_SANDBOX_SOCKET, NULL};
	o.attach_stdin = true;
	pthread_mutex_lock(&db->lock);
	r = sbx_backend_docker__open_locked_conn(db, err);
	if (r >= 0)
		r = sbx_docker_exec_create(db->d_stream, db->base.id, &o, &exec_id, err);
	if (r >= 0)
		r = sbx_docker_stream_open_exec(db->d_stream, exec_id, false, &ds, err);
	pthread_mutex_unlock(&db->lock);
	if (r < 0)
		return r;
	es = calloc(1, sizeof(*es));
	if (!es) {
		sbx_docker_stream_free(ds);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	es->base.ops = &exec_stream_ops;
	es->s = ds;
	*out = &es->base;
	return 0;
}

static int db_open_stream(sbx_backend *b, sbx_stream **out, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;

	pthread_mutex_lock(&db->lock);
	while (db->n_pending > 0) {
		sbx_stream *s = TAKE_PTR(db->pending_streams[--db->n_pending]);

		/* The server drops a connection idle for 300 s; a pool waits up to its TTL. */
		if (!sbx_stream_stale(s)) {
			pthread_mutex_unlock(&db->lock);
			*out = s;
			return 0;
		}
		sbx_stream_close(s);
	}
	pthread_mutex_unlock(&db->lock);
	return open_bridge(db, out, err);
}

static int db_copy_out(sbx_backend *b, const char *dir, const char *host_dir, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	sbx_docker_extract_opts eo = SBX_DOCKER_EXTRACT_OPTS_INIT;

	eo.strip_components = 1;
	eo.max_total_bytes = 512ULL * 1024 * 1024;
	return sbx_docker_exec_copy_out(db->d, b->id, dir, EXEC_USER, host_dir, &eo, NULL,
					EXEC_TIMEOUT_MS, err);
}

static int db_status(sbx_backend *b, sbx_sandbox_status *out, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	sbx_docker_container *c = NULL;
	int r;

	/*
	 * The readiness loop asks this while the copy-in thread execs on db->d
	 * (a published port fails fast, so it asks often): the locked connection,
	 * never db->d (a CURL handle is not to be shared between threads).
	 */
	pthread_mutex_lock(&db->lock);
	r = sbx_backend_docker__open_locked_conn(db, err);
	if (r >= 0)
		r = sbx_docker_container_inspect(db->d_stream, b->id, &c, err);
	pthread_mutex_unlock(&db->lock);
	if (r < 0)
		return r;
	memset(out, 0, sizeof(*out));
	out->running = c->running;
	out->oom_killed = c->oom_killed;
	out->exit_code = c->exit_code;
	snprintf(out->detail, sizeof(out->detail), "%s", c->error ? c->error : "");
	sbx_docker_container_free(c);
	return 0;
}

/*
 * container.log: the first 64 KiB (PID 1's start-up lines) and the last
 * LOG_MAX bytes, with a line where the middle of a flood was cut, each cut
 * edge moved to a line boundary.
 */
static int db_logs(sbx_backend *b, sbx_buf *out, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	_cleanup_(sbx_buf_free) sbx_buf head = SBX_BUF_INIT(LOG_HEAD_MAX);
	_cleanup_(sbx_buf_free) sbx_buf tail = SBX_BUF_INIT(2 * LOG_MAX);
	uint64_t cut = 0;
	size_t hl, skip = 0;
	int r = sbx_docker_container_logs_bounded(db->d, b->id, LOG_HEAD_MAX, LOG_MAX, &head, &tail,
						  &cut, err);

	hl = head.len;
	if (cut) {
		const char *nl = hl ? memrchr(head.data, '\n', hl) : NULL;
		const char *first = tail.len ? memchr(tail.data, '\n', tail.len) : NULL;

		if (nl) {
			cut += hl - (size_t)(nl + 1 - head.data);
			hl = (size_t)(nl + 1 - head.data);
		}
		if (first && (size_t)(first - tail.data) < 4096) {
			skip = (size_t)(first + 1 - tail.data);
			cut += skip;
		}
	}
	if (sbx_buf_append(out, head.data ? head.data : "", hl) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (cut &&
	    sbx_buf_printf(out,
			   "[sandboxctl: %" PRIu64 " bytes (%.1f MiB) of the log cut here; the "
			   "last %d MiB follow. The engine keeps at most %s x %s of a "
			   "container's output: older lines may be gone too]\n",
			   cut, (double)cut / (1024 * 1024), LOG_MAX / (1024 * 1024),
			   sbx_backend_docker__log_opts[1].value,
			   sbx_backend_docker__log_opts[0].value) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (tail.len > skip && sbx_buf_append(out, tail.data + skip, tail.len - skip) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return r;
}

static int db_destroy(sbx_backend *b, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	int r;

	if (!b->id)
		return 0;
	r = sbx_docker_container_remove(db->d, b->id, true, true, err);
	if (r == -ENOENT)
		r = 0;
	if (r >= 0) {
		free(b->id);
		b->id = NULL;
	}
	return r;
}

static int db_prewarm(sbx_backend *b, const char *dest, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	int r;

	/* The files go over a stream now (PUT /control/files): only an older image's
	 * server needs the exec'd tar, and then a fresh one is spawned. */
	(void)dest;
	while (db->n_pending < PREWARM_STREAMS) {
		sbx_stream *s = NULL;

		r = open_bridge(db, &s, err);
		if (r < 0)
			return r;
		pthread_mutex_lock(&db->lock);
		db->pending_streams[db->n_pending++] = s;
		pthread_mutex_unlock(&db->lock);
	}
	return 0;
}

static void db_keep_stream(sbx_backend *b, sbx_stream *s)
{
	docker_backend *db = (docker_backend *)b;

	pthread_mutex_lock(&db->lock);
	if (db->n_pending < PREWARM_STREAMS) {
		db->pending_streams[db->n_pending++] = s;
		s = NULL;
	}
	pthread_mutex_unlock(&db->lock);
	sbx_stream_close(s);
}

static void db_free(sbx_backend *b)
{
	docker_backend *db = (docker_backend *)b;

	if (!b)
		return;
	for (size_t i = 0; i < db->n_pending; i++)
		sbx_stream_close(db->pending_streams[i]);
	sbx_docker_free(db->d);
	sbx_docker_free(db->d_stream);
	pthread_mutex_destroy(&db->lock);
	sbx_free_all(db->host, b->id, b->image_id, b->endpoint);
	free(db);
}

static int db_exec(sbx_backend *b, const sbx_backend_exec *x, sbx_buf *out, sbx_buf *errout,
		   int *exit_code, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	sbx_docker_exec_opts o = SBX_DOCKER_EXEC_OPTS_INIT;
	_cleanup_free_ char *id = NULL;
	int r;

	o.cmd = x->argv;
	o.env = x->env;
	o.user = x->user ? x->user : EXEC_USER;
	o.working_dir = x->cwd;
	r = sbx_docker_exec_create(db->d, b->id, &o, &id, err);
	if (r >= 0)
		r = sbx_docker_exec_start(db->d, id, false,
					  x->timeout_ms ? x->timeout_ms : EXEC_TIMEOUT_MS,
					  x->max_bytes, out, errout, err);
	if (r >= 0)
		r = sbx_docker_exec_inspect(db->d, id, NULL, exit_code, err);
	return r;
}

static int db_copy_in_tar(sbx_backend *b, const char *dest, const void *tar, size_t len,
			  sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;

	return sbx_docker_exec_copy_in(db->d, b->id, dest, EXEC_USER, tar, len, EXEC_TIMEOUT_MS,
				       err);
}

static int db_image_tar(sbx_backend *b, const char *path, size_t max, void **tar, size_t *len,
			sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;

	return sbx_docker_archive_get_raw(db->d, b->id, path, max, tar, len, err);
}

static const sbx_backend_ops docker_ops = {
	.name = "docker",
	.create = sbx_backend_docker__create,
	.start = db_start,
	.copy_in = db_copy_in,
	.open_stream = db_open_stream,
	.copy_out = db_copy_out,
	.status = db_status,
	.logs = db_logs,
	.destroy = db_destroy,
	.free = db_free,
	.prewarm = db_prewarm,
	.keep_stream = db_keep_stream,
	.exec = db_exec,
	.copy_in_tar = db_copy_in_tar,
	.image_tar = db_image_tar,
};

int sbx_backend_docker_new(sbx_backend **out, sbx_error *err)
{
	return sbx_backend_docker_new_at(out, NULL, err);
}

int sbx_backend_docker_new_at(sbx_backend **out, const char *host, sbx_error *err)
{
	docker_backend *db = calloc(1, sizeof(*db));
	sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
	int r;

	if (!db)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	db->base.ops = &docker_ops;
	pthread_mutex_init(&db->lock, NULL);
	if (host && !(db->host = strdup(host))) {
		db_free(&db->base);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	o.host = db->host;
	r = sbx_docker_open(&db->d, &o, err);
	if (r < 0) {
		db_free(&db->base);
		return r;
	}
	*out = &db->base;
	return 0;
}
