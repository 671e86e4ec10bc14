/* SPDX-License-Identifier: MIT */
/*
 * The test-only backend (see backend_local.h). Its layout mirrors the
 * container's: <root>/workspace is /workspace, <root>/mcp.sock the server's
 * socket, <root>/server.log its output, as PID 1 would collect it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend_local.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/path.h"

#define LOG_MAX (8 * 1024 * 1024)
#define OUT_MAX (64 * 1024 * 1024)

typedef struct local_backend {
	sbx_backend base;
	local_config *cfg;
	char root[80], ws[128], sock[108]; /* sock: sun_path's size */
	int64_t deadline;
	pid_t server;
	bool reaped;
	int exit_code;
} local_backend;

static int lb_create(sbx_backend *b, const sbx_sandbox_spec *spec, sbx_error *err)
{
	local_backend *lb = (local_backend *)b;
	const char *tmp = getenv("TMPDIR");

	if (lb->cfg->fail_create)
		return sbx_error_set(err, lb->cfg->fail_create, "local: create refused (as asked)");
	if (snprintf(lb->root, sizeof(lb->root), "%s/sbx-local-XXXXXX",
		     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(lb->root))
		return sbx_error_set(err, -ENAMETOOLONG, "local: $TMPDIR too long for a socket");
	if (!mkdtemp(lb->root))
		return sbx_error_set(err, -errno, "local: mkdtemp: %s", strerror(errno));
	snprintf(lb->ws, sizeof(lb->ws), "%s/workspace", lb->root);
	snprintf(lb->sock, sizeof(lb->sock), "%s/mcp.sock", lb->root);
	if (mkdir(lb->ws, 0775) < 0)
		return sbx_error_set(err, -errno, "local: mkdir '%s': %s", lb->ws, strerror(errno));
	snprintf(lb->cfg->root, sizeof(lb->cfg->root), "%s", lb->root);
	lb->deadline = spec->deadline;
	b->id = strdup(strrchr(lb->root, '/') + 1);
	b->image_id = strdup(spec->image);
	if (!b->id || !b->image_id)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

extern char **environ;

/* The server's environment: ours and extra (the deadline), as the container's is. */
static char **server_env(char *extra)
{
	size_t n = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	memcpy(env, environ, n * sizeof(*env));
	env[n] = extra;
	return env;
}

static int lb_start(sbx_backend *b, sbx_error *err)
{
	local_backend *lb = (local_backend *)b;
	_cleanup_free_ char *built = NULL, *log = NULL, *status = NULL, *deadline = NULL;
	_cleanup_free_ char **env = NULL;
	const char *server = lb->cfg->server, *root = getenv("SBX_BUILD_ROOT");
	pid_t pid;

	if (!server && asprintf(&built, "%s/server/sandbox-mcp", root ? root : ".") >= 0)
		server = built;
	if (!server || asprintf(&log, "%s/server.log", lb->root) < 0 ||
	    asprintf(&status, "%s/status.json", lb->root) < 0 ||
	    asprintf(&deadline, "SANDBOX_TASK_DEADLINE=%" PRId64, lb->deadline) < 0 ||
	    !(env = server_env(deadline)))
		return sbx_error_set(err, -ENOMEM, "out of memory");
	/* Between fork and exec only async-signal-safe calls: the relay's threads run. */
	pid = fork();
	if (pid == 0) {
		char *argv[] = {(char *)server, "--workspace",	 lb->ws, "--unix",
				lb->sock,	"--status-file", status, NULL};
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		struct timespec delay = {lb->cfg->start_delay_ms / 1000,
					 (long)(lb->cfg->start_delay_ms % 1000) * 1000000L};

		nanosleep(&delay, NULL);

		if (fd >= 0 && dup2(fd, STDOUT_FILENO) >= 0 && dup2(fd, STDERR_FILENO) >= 0)
			execve(server, argv, env);
		_exit(127);
	}
	if (pid < 0)
		return sbx_error_set(err, -errno, "local: fork: %s", strerror(errno));
	lb->server = pid;
	return 0;
}

/* dest in the sandbox ("/workspace/...") as a host path. */
static int host_path(const local_backend *lb, const char *dest, char *out, size_t size,
		     sbx_error *err)
{
	size_t n = strlen(SBX_SANDBOX_WORKSPACE);

	if (strncmp(dest, SBX_SANDBOX_WORKSPACE, n) != 0 || (dest[n] && dest[n] != '/'))
		return sbx_error_set(err, -EINVAL, "local: '%s' is outside the workspace", dest);
	snprintf(out, size, "%s%s", lb->ws, dest + n);
	return 0;
}

static int lb_copy_in(sbx_backend *b, const char *dest, const sbx_sandbox_file *files, size_t n,
		      sbx_error *err)
{
	local_backend *lb = (local_backend *)b;
	char dir[512];
	int r = host_path(lb, dest, dir, sizeof(dir), err);

	for (size_t i = 0; r >= 0 && i < n; i++)
		r = sbx_path_write_beneath(dir, files[i].name, files[i].data, files[i].len, err);
	return r;
}

static int lb_open_stream(sbx_backend *b, sbx_stream **out, sbx_error *err)
{
	local_backend *lb = (local_backend *)b;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	__atomic_add_fetch(&lb->cfg->streams, 1, __ATOMIC_SEQ_CST);
	if (fd < 0)
		return sbx_error_set(err, -errno, "local: socket: %s", strerror(errno));
	memcpy(a.sun_path, lb->sock, sizeof(a.sun_path));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int r = -errno;

		close(fd);
		return sbx_error_set(err, r, "local: connect '%s': %s", lb->sock, strerror(-r));
	}
	if (sbx_stream_from_fds(out, fd, fd) < 0) {
		close(fd);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* Copies the regular files under src/rel beneath dst/rel; *total counts the bytes. */
static int copy_tree(const char *src, const char *rel, const char *dst, size_t *total,
		     sbx_error *err)
{
	_cleanup_free_ char *dir = NULL;
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (asprintf(&dir, "%s/%s", src, rel) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	d = opendir(dir);
	if (!d)
		return sbx_error_set(err, -errno, "local: '%s': %s", dir, strerror(errno));
	while (r >= 0 && (e = readdir(d))) {
		_cleanup_free_ char *sub = NULL, *path = NULL, *data = NULL;
		struct stat st;
		size_t len;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name) < 0 ||
		    asprintf(&path, "%s/%s", src, sub) < 0) {
			r = sbx_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			r = copy_tree(src, sub, dst, total, err);
		} else if (S_ISREG(st.st_mode)) {
			r = sbx_file_read_capped(AT_FDCWD, path, OUT_MAX, &data, &len, err);
			*total += r >= 0 ? len : 0;
			if (r >= 0 && *total > OUT_MAX)
				r = sbx_error_set(err, -EFBIG, "local: outputs over %d bytes",
						  OUT_MAX);
			if (r >= 0)
				r = sbx_path_write_beneath(dst, sub, data, len, err);
		}
	}
	closedir(d);
	return r;
}

static int lb_copy_out(sbx_backend *b, const char *dir, const char *host_dir, sbx_error *err)
{
	local_backend *lb = (local_backend *)b;
	char src[512];
	size_t total = 0;
	int r = host_path(lb, dir, src, sizeof(src), err);

	__atomic_add_fetch(&lb->cfg->copy_outs, 1, __ATOMIC_SEQ_CST);
	if (r >= 0)
		r = mkdir(host_dir, 0755) < 0 && errno != EEXIST
			    ? sbx_error_set(err, -errno, "'%s': %s", host_dir, strerror(errno))
			    : 0;
	return r < 0 ? r : copy_tree(src, "", host_dir, &total, err);
}

/* Reaps the server if it ended; true while it runs. */
static bool server_running(local_backend *lb)
{
	int st;

	if (lb->server <= 0 || lb->reaped)
		return false;
	if (waitpid(lb->server, &st, WNOHANG) != lb->server)
		return true;
	lb->reaped = true;
	lb->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return false;
}

static int lb_status(sbx_backend *b, sbx_sandbox_status *out, sbx_error *err)
{
	local_backend *lb = (local_backend *)b;

	memset(out, 0, sizeof(*out));
	out->running = server_running(lb);
	out->exit_code = lb->exit_code;
	return 0;
}

static int lb_logs(sbx_backend *b, sbx_buf *out, sbx_error *err)
{
	local_backend *lb = (local_backend *)b;
	_cleanup_free_ char *path = NULL, *text = NULL;
	size_t len;
	int r;

	if (asprintf(&path, "%s/server.log", lb->root) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_file_read_capped(AT_FDCWD, path, LOG_MAX, &text, &len, err);
	if (r == -ENOENT)
		return 0;
	if (r >= 0 && sbx_buf_append(out, text, len) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return r;
}

/* rm -r of a tree the test made (no symlink is followed: lstat, unlinkat). */
static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		_cleanup_free_ char *sub = NULL;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    asprintf(&sub, "%s/%s", path, e->d_name) < 0)
			continue;
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(sub);
		else
			unlink(sub);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

static int lb_destroy(sbx_backend *b, sbx_error *err)
{
	local_backend *lb = (local_backend *)b;

	if (!b->id)
		return 0;
	if (server_running(lb)) {
		kill(lb->server, SIGKILL);
		waitpid(lb->server, NULL, 0);
		lb->reaped = true;
	}
	remove_tree(lb->root);
	free(b->id);
	b->id = NULL;
	return 0;
}

static void lb_free(sbx_backend *b)
{
	local_backend *lb = (local_backend *)b;

	if (!b)
		return;
	if (lb->cfg->last == b)
		lb->cfg->last = NULL;
	sbx_free_all(b->id, b->image_id, b->endpoint);
	free(lb);
}

static const sbx_backend_ops local_ops = {
	.name = "local-test",
	.create = lb_create,
	.start = lb_start,
	.copy_in = lb_copy_in,
	.open_stream = lb_open_stream,
	.copy_out = lb_copy_out,
	.status = lb_status,
	.logs = lb_logs,
	.destroy = lb_destroy,
	.free = lb_free,
};

int local_backend_new(sbx_backend **out, const char *engine, void *userdata, sbx_error *err)
{
	local_config *cfg = userdata;
	local_backend *lb;

	if (cfg->fail_new)
		return sbx_error_set(err, cfg->fail_new, "local: no engine (as asked)");
	lb = calloc(1, sizeof(*lb));
	if (!lb)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	lb->base.ops = &local_ops;
	lb->cfg = cfg;
	lb->exit_code = -1;
	cfg->last = &lb->base;
	*out = &lb->base;
	return 0;
}

const char *local_backend_workspace(const sbx_backend *b)
{
	return ((const local_backend *)b)->ws;
}

void local_backend_kill(sbx_backend *b)
{
	local_backend *lb = (local_backend *)b;

	if (server_running(lb))
		kill(lb->server, SIGKILL);
}
