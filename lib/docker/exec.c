/* SPDX-License-Identifier: MIT */
/* Exec: create, start attached, inspect; copying in and out through an exec'd tar. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"

#define DEFAULT_OUTPUT_MAX (16u << 20)
#define TAR_STDERR_MAX	   4096
#define TAR_DRAIN_MAX	   (1u << 20)

#define EXEC_ENV_MAX 8

/* Copies a NULL-terminated list of at most max strings into *out (NULL when empty). */
static int strv_copy(const char *const *v, size_t max, char ***out)
{
	size_t n = 0;
	char **c;

	while (v && v[n])
		n++;
	if (n > max)
		return -E2BIG;
	c = n ? calloc(n + 1, sizeof(*c)) : NULL;
	if (n && !c)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(c[i] = strdup(v[i]))) {
			sbx_strv_free(c);
			return -ENOMEM;
		}
	*out = c;
	return 0;
}

int sbx_docker_set_exec_env(sbx_docker *d, const char *const *env, sbx_error *err)
{
	char **v = NULL;
	int r = strv_copy(env, EXEC_ENV_MAX, &v);

	if (r == -E2BIG)
		return sbx_error_set(err, r, "exec environment: at most %d entries", EXEC_ENV_MAX);
	if (r < 0)
		return sbx_error_set(err, r, "out of memory");
	sbx_strv_free(d->exec_env);
	d->exec_env = v;
	return 0;
}

int sbx_docker_exec_create(sbx_docker *d, const char *container_id,
			   const sbx_docker_exec_opts *opts, char **exec_id_out, sbx_error *err)
{
	_cleanup_free_ char *body = NULL, *what = NULL, *verb = NULL;
	_cleanup_free_ const char **env = NULL;
	sbx_docker_exec_opts o = *opts;
	sbx_buf path = SBX_BUF_INIT(4096);
	size_t n = 0, ne = 0;
	int r;

	/* The handle's entries first: the exec's own (later) win where both set a key. */
	if (d->exec_env) {
		while (d->exec_env[n])
			n++;
		while (opts->env && opts->env[ne])
			ne++;
		env = calloc(n + ne + 1, sizeof(*env));
		if (!env)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		memcpy(env, d->exec_env, n * sizeof(*env));
		if (ne)
			memcpy(env + n, opts->env, ne * sizeof(*env));
		o.env = env;
	}
	r = sbx_docker__check_name("container", container_id, err);
	if (r == 0)
		r = sbx_docker__exec_create_body(&o, &body, err);
	if (r < 0)
		return r;
	if (asprintf(&verb, "exec '%s'", opts->cmd[0]) < 0) {
		verb = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r = sbx_docker__object_prepare("container", container_id, verb, &what, &path, err, "/exec");
	if (r < 0)
		return r;
	r = sbx_docker__post_create(d, path.data, body, what, exec_id_out, NULL, err);
	sbx_buf_free(&path);
	return r;
}

int sbx_docker__exec_prepare(const char *exec_id, const char *verb, const char *suffix, char **what,
			     char **path, sbx_error *err)
{
	int r = sbx_docker__check_name("exec", exec_id, err);

	if (r < 0)
		return r;
	if (asprintf(what, "exec '%.12s': %s", exec_id, verb) < 0) {
		*what = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	if (asprintf(path, "/exec/%s%s", exec_id, suffix) < 0) {
		*path = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

int sbx_docker_exec_start(sbx_docker *d, const char *exec_id, bool tty, long timeout_ms,
			  size_t max_bytes, sbx_buf *out, sbx_buf *errout, sbx_error *err)
{
	_cleanup_free_ char *what = NULL, *path = NULL;
	docker_sink s = {
		.out = out, .errout = errout, .max = max_bytes ? max_bytes : DEFAULT_OUTPUT_MAX};
	const char *body =
		tty ? "{\"Detach\":false,\"Tty\":true}" : "{\"Detach\":false,\"Tty\":false}";
	docker_req req = {.method = "POST",
			  .body = body,
			  .body_len = strlen(body),
			  .timeout_ms = timeout_ms,
			  .on_data = sbx_docker__sink_data,
			  .payload = &s};
	sbx_error local = SBX_ERROR_INIT;
	docker_resp resp;
	int r;

	r = sbx_docker__exec_prepare(exec_id, "start", "/start", &what, &path, err);
	if (r < 0)
		return r;
	sbx_docker__demux_init(&s.demux, tty);
	req.path = path;
	r = sbx_docker__request(d, &req, &resp, what, &local);
	if (r == -ETIMEDOUT)
		r = sbx_error_set(err, -ETIME, "%s: still running after %ld ms", what,
				  timeout_ms ? timeout_ms : d->request_timeout_ms);
	else if (r == -ENOBUFS)
		r = sbx_error_set(err, r, "%s: more than %zu bytes of output", what, s.max);
	else if (r == -EPROTO)
		r = sbx_error_set(err, r, "%s: malformed stream frame", what);
	else if (r < 0 && local.msg[0])
		r = sbx_error_set(err, r, "%s", local.msg);
	else if (r < 0)
		r = sbx_error_set(err, r, "%s: %s", what, strerror(-r));
	if (r == 0)
		r = sbx_docker__check(&resp, what, err);
	sbx_docker__resp_done(&resp);
	return r;
}

int sbx_docker_exec_inspect(sbx_docker *d, const char *exec_id, bool *running, int *exit_code,
			    sbx_error *err)
{
	_cleanup_free_ char *what = NULL, *path = NULL;
	_cleanup_json_ cJSON *root = NULL;
	bool run;
	int r;

	r = sbx_docker__exec_prepare(exec_id, "inspect", "/json", &what, &path, err);
	if (r < 0)
		return r;
	r = sbx_docker__get_json(d, "GET", path, what, &root, err);
	if (r < 0)
		return r;
	run = sbx_json_get_bool(root, "Running", false);
	if (running)
		*running = run;
	if (exit_code)
		*exit_code = run ? -1 : (int)sbx_json_get_number(root, "ExitCode", -1);
	return 0;
}

/* The exit code once the engine has recorded it (it lags the end of the stream a little). */
static int exit_code_of(sbx_docker *d, const char *exec_id, int *exit_code, sbx_error *err)
{
	for (int i = 0; i < 100; i++) {
		bool running;
		int r = sbx_docker_exec_inspect(d, exec_id, &running, exit_code, err);
		if (r < 0 || !running)
			return r;
		nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
	}
	return sbx_error_set(err, -ETIME, "exec '%.12s': still running after its output ended",
			     exec_id);
}

int sbx_docker_exec_run(sbx_docker *d, const char *container_id, const sbx_docker_exec_opts *opts,
			long timeout_ms, sbx_buf *out, sbx_buf *errout, int *exit_code,
			sbx_error *err)
{
	_cleanup_free_ char *id = NULL;
	int r;

	r = sbx_docker_exec_create(d, container_id, opts, &id, err);
	if (r == 0)
		r = sbx_docker_exec_start(d, id, opts->tty, timeout_ms, 0, out, errout, err);
	if (r == 0)
		r = exit_code_of(d, id, exit_code, err);
	return r;
}

/* ------------------------------------------------------ copy via exec'd tar */

#define TAR_PREFIX_MAX 7

int sbx_docker_set_tar(sbx_docker *d, const char *const *prefix, sbx_error *err)
{
	char **v = NULL;
	int r = strv_copy(prefix, TAR_PREFIX_MAX, &v);

	if (r == -E2BIG)
		return sbx_error_set(err, r, "tar command: at most %d words before tar's own",
				     TAR_PREFIX_MAX);
	if (r < 0)
		return sbx_error_set(err, r, "out of memory");
	sbx_strv_free(d->tar_prefix);
	d->tar_prefix = v;
	return 0;
}

/* args: tar's own arguments after "tar" (at most 6); the handle's prefix replaces "tar". */
static int open_tar_exec(sbx_docker *d, const char *id, const char *const *args, const char *user,
			 bool with_stdin, sbx_docker_stream **s, char **exec_id, sbx_error *err)
{
	sbx_docker_exec_opts o = SBX_DOCKER_EXEC_OPTS_INIT;
	const char *cmd[TAR_PREFIX_MAX + 8];
	size_t n = 0;
	int r;

	for (char **p = d->tar_prefix; p && *p; p++)
		cmd[n++] = *p;
	if (!n)
		cmd[n++] = "tar";
	for (size_t i = 0; args[i] && n < SBX_ELEMENTSOF(cmd) - 1; i++)
		cmd[n++] = args[i];
	cmd[n] = NULL;
	o.cmd = cmd;
	o.user = user;
	o.attach_stdin = with_stdin;
	r = sbx_docker_exec_create(d, id, &o, exec_id, err);
	if (r == 0)
		r = sbx_docker_stream_open_exec(d, *exec_id, false, s, err);
	return r;
}

static int tar_result(sbx_docker *d, const char *exec_id, const char *what, const sbx_buf *errs,
		      sbx_error *err)
{
	int code = -1, r;

	r = exit_code_of(d, exec_id, &code, err);
	if (r < 0)
		return r;
	if (code != 0)
		return sbx_error_set(err, -EIO, "%s: tar exited with %d%s%s", what, code,
				     errs->len ? ": " : "", sbx_buf_str(errs));
	return 0;
}

/* At least 1 ms, so a passed deadline still means "time out", never "don't block". */
static long remaining_ms(long deadline_ms)
{
	long left = deadline_ms - sbx_now_ms();

	return left > 0 ? left : 1;
}

static long deadline_after(long ms)
{
	return sbx_now_ms() + ms;
}

struct sbx_docker_copy_in {
	sbx_docker *d;
	char *id, *exec_id, *what;
	sbx_docker_stream *s;
};

void sbx_docker_copy_in_free(sbx_docker_copy_in *c)
{
	if (!c)
		return;
	sbx_docker_stream_free(c->s);
	sbx_free_all(c->id, c->exec_id, c->what);
	free(c);
}

int sbx_docker_exec_copy_in_open(sbx_docker *d, const char *id, const char *dest_dir,
				 const char *user, sbx_docker_copy_in **out, sbx_error *err)
{
	const char *cmd[] = {"-xpf", "-", "-C", dest_dir, NULL};
	_cleanup_(sbx_docker_copy_in_freep) sbx_docker_copy_in *c = NULL;
	int r;

	if (!dest_dir || dest_dir[0] != '/')
		return sbx_error_set(err, -EINVAL, "container '%s': copy in: '%s' is not absolute",
				     id, dest_dir ? dest_dir : "");
	c = calloc(1, sizeof(*c));
	if (!c || !(c->id = strdup(id)) ||
	    asprintf(&c->what, "container '%s': copy into '%s'", id, dest_dir) < 0) {
		if (c)
			c->what = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	c->d = d;
	r = open_tar_exec(d, id, cmd, user, true, &c->s, &c->exec_id, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "%s", c->what);
	*out = TAKE_PTR(c);
	return 0;
}

int sbx_docker_exec_copy_in_finish(sbx_docker_copy_in *c, const void *tar, size_t tar_len,
				   long timeout_ms, sbx_error *err)
{
	sbx_buf errs = SBX_BUF_INIT(TAR_STDERR_MAX);
	long deadline = deadline_after(timeout_ms > 0 ? timeout_ms : c->d->request_timeout_ms);
	char buf[4096];
	int r, which;
	ssize_t n;

	r = sbx_docker_stream_write(c->s, tar, tar_len, (int)remaining_ms(deadline), err);
	if (r == 0)
		r = sbx_docker_stream_close_write(c->s, err);
	while (r == 0 && (n = sbx_docker_stream_read(c->s, buf, sizeof(buf), &which,
						     (int)remaining_ms(deadline), err)) != 0) {
		if (n < 0)
			r = (int)n;
		else if (which == SBX_DOCKER_STDERR && errs.len + (size_t)n < errs.max)
			sbx_buf_append(&errs, buf, (size_t)n);
	}
	sbx_docker_stream_free(c->s);
	c->s = NULL;
	if (r == 0)
		r = tar_result(c->d, c->exec_id, c->what, &errs, err);
	else
		sbx_error_prefix(err, r, "%s", c->what);
	sbx_buf_free(&errs);
	sbx_docker_copy_in_free(c);
	return r;
}

int sbx_docker_exec_copy_in(sbx_docker *d, const char *id, const char *dest_dir, const char *user,
			    const void *tar, size_t tar_len, long timeout_ms, sbx_error *err)
{
	sbx_docker_copy_in *c = NULL;
	int r = sbx_docker_exec_copy_in_open(d, id, dest_dir, user, &c, err);

	return r < 0 ? r : sbx_docker_exec_copy_in_finish(c, tar, tar_len, timeout_ms, err);
}

typedef struct out_src out_src;
static void out_src_free(out_src *o);
SBX_DEFINE_CLEANUP(out_src, out_src_free)

struct out_src {
	sbx_docker_stream *s;
	sbx_buf errs;
	long deadline;
	sbx_error *err;
	char block[65536];
};

static void out_src_free(out_src *o)
{
	sbx_buf_free(&o->errs);
	free(o);
}

static ssize_t out_read(void *payload, const void **block)
{
	out_src *o = payload;

	for (;;) {
		int which = 0;
		ssize_t n = sbx_docker_stream_read(o->s, o->block, sizeof(o->block), &which,
						   (int)remaining_ms(o->deadline), o->err);
		if (n <= 0)
			return n;
		if (which == SBX_DOCKER_STDERR) {
			if (o->errs.len + (size_t)n < o->errs.max)
				sbx_buf_append(&o->errs, o->block, (size_t)n);
			continue;
		}
		*block = o->block;
		return n;
	}
}

int sbx_docker_exec_copy_out(sbx_docker *d, const char *id, const char *path, const char *user,
			     const char *dest_dir, const sbx_docker_extract_opts *opts,
			     sbx_docker_extract_stats *stats, long timeout_ms, sbx_error *err)
{
	_cleanup_free_ char *exec_id = NULL, *what = NULL, *dir = NULL, *base = NULL;
	_cleanup_(out_src_freep) out_src *o = NULL;
	_cleanup_close_ int dirfd = -1;
	int r;

	if (!path || path[0] != '/' || strlen(path) > 4096)
		return sbx_error_set(err, -EINVAL, "container '%s': copy out: '%s' is not absolute",
				     id, path ? path : "");
	if (asprintf(&what, "container '%s': copy '%s' out", id, path) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	dir = strdup(path);
	base = strdup(path);
	o = calloc(1, sizeof(*o));
	if (!dir || !base || !o)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	dirfd = open(dest_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return sbx_error_set(err, -errno, "%s: '%s': %s", what, dest_dir, strerror(errno));
	{
		const char *cmd[] = {"-cf", "-", "-C", dirname(dir), basename(base), NULL};
		r = open_tar_exec(d, id, cmd, user, false, &o->s, &exec_id, err);
	}
	if (r < 0)
		return r;
	sbx_buf_init(&o->errs, TAR_STDERR_MAX);
	o->deadline = deadline_after(timeout_ms > 0 ? timeout_ms : d->request_timeout_ms);
	o->err = err;
	r = sbx_docker__tar_extract_stream(out_read, o, dirfd, opts, stats, err);
	if (r == 0 || r == -EPERM) {
		/* libarchive stops at the end marker: let tar finish (and say why it failed). */
		const void *block;
		size_t drained = 0;
		ssize_t n;

		while (drained < TAR_DRAIN_MAX && (n = out_read(o, &block)) > 0)
			drained += (size_t)n;
	}
	sbx_docker_stream_free(o->s);
	if (r == 0 || r == -EPERM || r == -EPROTO) {
		/* tar's own failure (a missing path) explains an empty or cut stream best. */
		sbx_error terr = SBX_ERROR_INIT;
		int t = tar_result(d, exec_id, what, &o->errs, &terr);
		if (t < 0) {
			r = t;
			if (err)
				*err = terr;
			return r;
		}
	}
	if (r < 0 && r != -EPERM)
		sbx_error_prefix(err, r, "%s", what);
	return r;
}
