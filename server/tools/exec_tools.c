/* SPDX-License-Identifier: MIT */
/*
 * execute_python and execute_shell: the code runs in a child process in the
 * workspace, in its own process group, under rlimits (address space, CPU,
 * processes, file size), with a timeout after which the whole group is
 * killed. stdout and stderr are read with poll() and capped (head and tail
 * kept, a marker in between).
 *
 * In a sandbox the child is started by sandbox-spawner, as the agent's uid
 * (spawn-protocol.h): the server cannot change uid, and tool code must not
 * be able to signal, trace or impersonate it. Run anywhere else (tests, a
 * host), the server forks the child itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "output_capture.h"
#include "server.h"
#include "spawn-protocol.h"
#include "task_session.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"

extern char **environ;

#define MAX_CODE_BYTES (1u << 20)
#define MAX_CONCURRENT 4
#define TIMEOUT_MIN    1
#define TIMEOUT_MAX    1200

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slots_cond = PTHREAD_COND_INITIALIZER;
static int slots_used;

exec_limits exec_default_limits = {
	.memory_mb = 2048,
	.max_processes = 256,
	.max_file_mb = 512,
};

/*
 * Tool code's address-space limit no larger than 3/4 of the memory the kernel
 * reports. Under runc /proc/meminfo is the host's, so nothing changes; under
 * gVisor it is the sandbox's own limit, and the Sentry (the only process the
 * host's OOM killer sees in the container's cgroup) shares it with the server:
 * without this, one tool call that allocates past the limit gets the whole
 * sandbox killed instead of a MemoryError in the tool.
 */
void exec_limits_fit_memory(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/meminfo", "re");
	unsigned long long kb = 0;
	char line[128];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	if (kb == 0)
		return;
	if ((unsigned long long)exec_default_limits.memory_mb > kb / 1024 * 3 / 4) {
		exec_default_limits.memory_mb = (unsigned)(kb / 1024 * 3 / 4);
		if (exec_default_limits.memory_mb < 64)
			exec_default_limits.memory_mb = 64;
	}
}

/* The first executable name on PATH, or fallback. */
static char *find_program(const char *name, const char *fallback)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	char *save = NULL;

	for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
	     dir = strtok_r(NULL, ":", &save)) {
		char *full = NULL;
		if (asprintf(&full, "%s/%s", dir, name) < 0)
			return NULL;
		if (access(full, X_OK) == 0)
			return full;
		free(full);
	}
	return strdup(fallback);
}

static void set_limit(int resource, rlim_t value)
{
	struct rlimit rl = {value, value};

	setrlimit(resource, &rl);
}

/*
 * The child's environment: the server's, with DISPLAY set to the sandbox's
 * display and Python unbuffered (so output written before a kill is kept).
 * Built before fork; freed with sbx_strv_free.
 */
static char **child_env(const tool_context *ctx)
{
	size_t n = 0, k = 0;
	char **env;

	for (char **e = environ; *e; e++)
		n++;
	env = calloc(n + 4, sizeof(char *));
	if (!env)
		return NULL;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "DISPLAY=", 8) != 0 && strncmp(*e, "PYTHONUNBUFFERED=", 17) != 0)
			env[k++] = strdup(*e);
	env[k++] = strdup("PYTHONUNBUFFERED=1");
	if (ctx->display && asprintf(&env[k], "DISPLAY=%s", ctx->display) >= 0)
		k++;
	for (size_t i = 0; i < k; i++)
		if (!env[i]) {
			sbx_strv_free_n(env, k);
			return NULL;
		}
	return env;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
child(const tool_context *ctx, const char *prog, char *const argv[], char *const envp[],
      int code_fd, int out_fd, int err_fd, int status_fd, int timeout, pid_t parent)
{
	sigset_t none;
	int e;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setpgid(0, 0);
	/* If the server dies (its forking thread waits for us, so it outlives us otherwise). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	/* Before the dup2s below, which may reuse the workspace fd's number. */
	if (fchdir(ctx->workspace_fd) < 0)
		goto fail;
	if (dup2(code_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		goto fail;
	if (status_fd != 3 && (dup2(status_fd, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0))
		goto fail;
	syscall(SYS_close_range, 4, ~0U, 0);
	set_limit(RLIMIT_AS, (rlim_t)exec_default_limits.memory_mb << 20);
	set_limit(RLIMIT_CPU, (rlim_t)timeout + 5);
	set_limit(RLIMIT_NPROC, (rlim_t)exec_default_limits.max_processes);
	set_limit(RLIMIT_FSIZE, (rlim_t)exec_default_limits.max_file_mb << 20);
	set_limit(RLIMIT_CORE, 0);
	execve(prog, argv, envp);
fail:
	e = errno;
	(void)!write(3, &e, sizeof(e));
	_exit(127);
}

/* A started child: forked here (pidfd), or by the spawner (chan). */
typedef struct child_proc {
	pid_t pid;
	int pidfd; /* local: readable when it exited */
	int chan;  /* spawned: the guard's channel, readable with its exit */
} child_proc;

#define CHILD_PROC_INIT                                                                            \
	{                                                                                          \
		0, -1, -1                                                                          \
	}

/* The spawner's end of PID 1's socketpair, -1 when there is none (not in a sandbox). */
static int spawner_fd(void)
{
	static int fd = -2;
	const char *v;
	char *end;
	long n;

	if (fd != -2)
		return fd;
	fd = -1;
	v = getenv("SANDBOX_SPAWN_FD");
	if (v && *v) {
		n = strtol(v, &end, 10);
		if (!*end && n >= 0 && n < 65536 && fcntl((int)n, F_GETFD) >= 0)
			fd = (int)n;
	}
	return fd;
}

/* Appends a NUL-terminated string to the request; false when it would not fit. */
static bool put_string(char *buf, size_t *len, const char *str)
{
	size_t n = strlen(str) + 1;

	if (*len + n > SBX_SPAWN_MAX_MESSAGE)
		return false;
	memcpy(buf + *len, str, n);
	*len += n;
	return true;
}

/* Asks the spawner to start prog; the fds are duplicated into the request, not consumed. */
static int spawn_remote(const tool_context *ctx, const char *prog, char *const argv[],
			char *const envp[], int code_fd, int out_fd, int err_fd, int status_fd,
			int timeout, child_proc *c, sbx_error *err)
{
	struct sbx_spawn_request rq = {
		.magic = SBX_SPAWN_MAGIC,
		.cpu_seconds = (uint32_t)timeout + 5,
		.max_processes = exec_default_limits.max_processes,
		.address_space = (uint64_t)exec_default_limits.memory_mb << 20,
		.max_file_bytes = (uint64_t)exec_default_limits.max_file_mb << 20,
	};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * SBX_SPAWN_NFDS)];
	} cbuf;
	_cleanup_free_ char *msg = malloc(SBX_SPAWN_MAX_MESSAGE);
	struct sbx_spawn_event ev;
	size_t len = sizeof(rq);
	int pair[2], fds[SBX_SPAWN_NFDS];
	struct iovec iov;
	struct msghdr mh = {0};

	if (!msg)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (!put_string(msg, &len, prog))
		return sbx_error_set(err, -E2BIG, "the program path is too long");
	rq.argc = 1;
	for (size_t i = 1; argv[0] && argv[i]; i++, rq.argc++)
		if (!put_string(msg, &len, argv[i]))
			return sbx_error_set(err, -E2BIG, "the arguments are too long");
	for (size_t i = 0; envp[i]; i++, rq.envc++)
		if (!put_string(msg, &len, envp[i]))
			return sbx_error_set(err, -E2BIG, "the environment is too long");
	rq.strings_len = (uint32_t)(len - sizeof(rq));
	memcpy(msg, &rq, sizeof(rq));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		return sbx_error_set(err, -errno, "socketpair: %s", strerror(errno));
	fds[SBX_SPAWN_FD_CHANNEL] = pair[1];
	fds[SBX_SPAWN_FD_STDIN] = code_fd;
	fds[SBX_SPAWN_FD_STDOUT] = out_fd;
	fds[SBX_SPAWN_FD_STDERR] = err_fd;
	fds[SBX_SPAWN_FD_STATUS] = status_fd;
	fds[SBX_SPAWN_FD_CWD] = ctx->workspace_fd;
	iov = (struct iovec){msg, len};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = sizeof(cbuf.buf);
	CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
	CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
	CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), fds, sizeof(fds));
	if (sendmsg(spawner_fd(), &mh, MSG_NOSIGNAL) != (ssize_t)len) {
		int e = errno;

		close(pair[0]);
		close(pair[1]);
		return sbx_error_set(err, -EPIPE, "the sandbox's spawner is gone (%s)",
				     strerror(e));
	}
	close(pair[1]);
	/* Its pid, or EOF when the spawner refused or could not fork (the status pipe says why). */
	if (recv(pair[0], &ev, sizeof(ev), 0) != (ssize_t)sizeof(ev) ||
	    ev.kind != SBX_SPAWN_STARTED) {
		close(pair[0]);
		return sbx_error_set(err, -EPIPE, "the sandbox's spawner did not start '%s'", prog);
	}
	c->pid = (pid_t)ev.value;
	c->chan = pair[0];
	return 0;
}

static int spawn_local(const tool_context *ctx, const char *prog, char *const argv[],
		       char *const envp[], int code_fd, int out_fd, int err_fd, int status_fd,
		       int timeout, child_proc *c, sbx_error *err);

static int child_start(const tool_context *ctx, const char *prog, char *const argv[],
		       char *const envp[], int code_fd, int out_fd, int err_fd, int status_fd,
		       int timeout, child_proc *c, sbx_error *err)
{
	if (spawner_fd() >= 0)
		return spawn_remote(ctx, prog, argv, envp, code_fd, out_fd, err_fd, status_fd,
				    timeout, c, err);
	return spawn_local(ctx, prog, argv, envp, code_fd, out_fd, err_fd, status_fd, timeout, c,
			   err);
}

/* The fd to poll for the child's end. */
static int child_fd(const child_proc *c)
{
	return c->chan >= 0 ? c->chan : c->pidfd;
}

static void child_kill(child_proc *c)
{
	if (c->chan >= 0) {
		char k = SBX_SPAWN_KILL;

		(void)!send(c->chan, &k, 1, MSG_NOSIGNAL);
		return;
	}
	for (int i = 0; i < 3 && kill(-c->pid, SIGKILL) == 0; i++)
		;
}

/* True when the child has ended; *status its wait status. block: wait for it. */
static bool child_reap(child_proc *c, int *status, bool block)
{
	struct sbx_spawn_event ev;
	ssize_t n;

	if (c->chan < 0)
		return waitpid(c->pid, status, block || c->pidfd >= 0 ? 0 : WNOHANG) == c->pid;
	n = recv(c->chan, &ev, sizeof(ev), block ? 0 : MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	/* A guard that died without a word (tool code may kill it): count it as killed. */
	*status = n == (ssize_t)sizeof(ev) && ev.kind == SBX_SPAWN_EXITED ? ev.value : SIGKILL;
	return true;
}

static void child_close(child_proc *c)
{
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->chan >= 0)
		close(c->chan);
	c->pidfd = c->chan = -1;
}

typedef struct run {
	int exit_code;
	int signal;
	bool timed_out, cancelled;
	long long duration_ms;
	capture out, err;
} run;

static int spawn_local(const tool_context *ctx, const char *prog, char *const argv[],
		       char *const envp[], int code_fd, int out_fd, int err_fd, int status_fd,
		       int timeout, child_proc *c, sbx_error *err)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		return sbx_error_set(err, -errno, "fork: %s", strerror(errno));
	if (pid == 0)
		child(ctx, prog, argv, envp, code_fd, out_fd, err_fd, status_fd, timeout, parent);
	setpgid(pid, pid); /* also in the parent: no window where kill(-pid) misses */
	c->pid = pid;
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

/* Reads what is available on fd into c; returns false at EOF or error. */
static bool drain(int fd, capture *c)
{
	char chunk[16384];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	capture_add(c, chunk, (size_t)n);
	return true;
}

static int spawn_and_wait(tool_context *ctx, const char *prog, char *const argv[], const char *code,
			  int timeout, run *r, sbx_error *err)
{
	int code_fd = -1, out[2] = {-1, -1}, errp[2] = {-1, -1}, st[2] = {-1, -1};
	child_proc c = CHILD_PROC_INIT;
	long long start = sbx_now_ms(), deadline = start + (long long)timeout * 1000, last_progress;
	bool out_open = true, err_open = true, exited = false;
	int status = 0, child_errno = 0, ret = 0;
	size_t len = code ? strlen(code) : 0;
	char **envp = child_env(ctx);

	if (!envp) {
		ret = sbx_error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	code_fd = memfd_create("sandbox-code", MFD_CLOEXEC);
	if (code_fd < 0 || (len && write(code_fd, code, len) != (ssize_t)len) ||
	    lseek(code_fd, 0, SEEK_SET) < 0) {
		ret = sbx_error_set(err, -errno, "cannot stage the code: %s", strerror(errno));
		goto done;
	}
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC) < 0) {
		ret = sbx_error_set(err, -errno, "pipe: %s", strerror(errno));
		goto done;
	}
	ret = child_start(ctx, prog, argv, envp, code_fd, out[1], errp[1], st[1], timeout, &c, err);
	if (ret < 0)
		goto done;
	close(out[1]);
	close(errp[1]);
	close(st[1]);
	out[1] = errp[1] = st[1] = -1;
	if (read(st[0], &child_errno, sizeof(child_errno)) == (ssize_t)sizeof(child_errno)) {
		child_reap(&c, &status, true);
		ret = sbx_error_set(err, -child_errno, "cannot run '%s': %s", prog,
				    strerror(child_errno));
		goto done;
	}
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(errp[0], F_SETFL, O_NONBLOCK);
	last_progress = start;
	while (out_open || err_open || !exited) {
		struct pollfd p[3] = {{out_open ? out[0] : -1, POLLIN, 0},
				      {err_open ? errp[0] : -1, POLLIN, 0},
				      {exited ? -1 : child_fd(&c), POLLIN, 0}};
		long long now = sbx_now_ms(), wait_ms = 100;

		if (!exited && ctx->cancelled && atomic_load(ctx->cancelled)) {
			r->cancelled = true;
			child_kill(&c);
		}
		if (!exited && now >= deadline && !r->timed_out) {
			r->timed_out = true;
			child_kill(&c);
		}
		if (exited && now >= deadline)
			break; /* a leftover holds the pipes open: stop reading */
		if (ctx->progress && now - last_progress >= 1000) {
			ctx->progress(ctx->progress_payload, (double)(now - start) / 1000.0,
				      (double)timeout, "running");
			last_progress = now;
		}
		if (poll(p, 3, (int)wait_ms) < 0 && errno != EINTR)
			break;
		if (p[0].revents && !drain(out[0], &r->out))
			out_open = false;
		if (p[1].revents && !drain(errp[0], &r->err))
			err_open = false;
		if (!exited && (p[2].revents || child_fd(&c) < 0)) {
			if (child_reap(&c, &status, false)) {
				exited = true;
				/* Background leftovers of the group go too; give the pipes 200 ms.
				 */
				child_kill(&c);
				if (deadline > sbx_now_ms() + 200)
					deadline = sbx_now_ms() + 200;
			}
		}
	}
	if (!exited) {
		child_kill(&c);
		child_reap(&c, &status, true);
	}
	r->duration_ms = sbx_now_ms() - start;
	if (WIFEXITED(status)) {
		r->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		r->signal = WTERMSIG(status);
		r->exit_code = -r->signal;
	}
done:
	sbx_strv_free(envp);
	if (code_fd >= 0)
		close(code_fd);
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
		if (st[i] >= 0)
			close(st[i]);
	}
	child_close(&c);
	return ret;
}

static int clamp_timeout(const tool_context *ctx, const cJSON *args)
{
	const cJSON *t = sbx_json_get(args, "timeout");
	double v = cJSON_IsNumber(t) ? t->valuedouble : ctx->srv->exec_timeout_default;

	if (!(v >= TIMEOUT_MIN))
		v = TIMEOUT_MIN;
	if (v > TIMEOUT_MAX)
		v = TIMEOUT_MAX;
	return (int)v;
}

static bool out_of_memory(const run *r)
{
	const char *e = capture_text(&r->err);

	return strstr(e, "MemoryError") || strstr(e, "Cannot allocate memory") ||
	       strstr(e, "std::bad_alloc") || strstr(e, "out of memory") ||
	       (r->signal == SIGKILL && !r->timed_out && !r->cancelled);
}

/* The last non-empty line of text, trimmed and cut to fit, into buf ("" when none). */
static void last_line(const char *text, char *buf, size_t size)
{
	const char *end = text + strlen(text), *start;
	size_t n;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	while (start < end && (*start == ' ' || *start == '\t'))
		start++;
	n = (size_t)(end - start) < size - 1 ? (size_t)(end - start) : size - 1;
	memcpy(buf, start, n);
	buf[n] = '\0';
}

/*
 * fail_on_exit: a non-zero exit status is a tool failure (execute_python, as
 * the reference); a shell's status is often meant (grep), so execute_shell
 * leaves it to the caller.
 */
static int run_code(tool_context *ctx, const char *prog, char *const argv[], const char *code,
		    bool fail_on_exit, const cJSON *args, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	int timeout = clamp_timeout(ctx, args);
	run r = {0};
	cJSON *o;
	int ret;

	capture_init(&r.out);
	capture_init(&r.err);
	pthread_mutex_lock(&slots_lock);
	while (slots_used >= MAX_CONCURRENT)
		pthread_cond_wait(&slots_cond, &slots_lock);
	slots_used++;
	pthread_mutex_unlock(&slots_lock);
	ret = spawn_and_wait(ctx, prog, argv, code, timeout, &r, &err);
	pthread_mutex_lock(&slots_lock);
	slots_used--;
	pthread_cond_signal(&slots_cond);
	pthread_mutex_unlock(&slots_lock);
	if (ret < 0) {
		capture_free(&r.out);
		capture_free(&r.err);
		tool_fail(out, ret == -EAGAIN ? TOOL_E_FAILED : TOOL_E_INTERNAL, "%s",
			  sbx_error_message(&err));
		out->error_code = strdup(ret == -EAGAIN ? "E_PROCESSES" : "E_SPAWN");
		return 0;
	}
	o = out->structured = cJSON_CreateObject();
	if (!o)
		return -ENOMEM;
	capture_finish(&r.out);
	capture_finish(&r.err);
	cJSON_AddStringToObject(o, "stdout", capture_text(&r.out));
	cJSON_AddStringToObject(o, "stderr", capture_text(&r.err));
	cJSON_AddNumberToObject(o, "exit_code", r.exit_code);
	cJSON_AddNumberToObject(o, "return_code", r.exit_code);
	cJSON_AddBoolToObject(o, "timed_out", r.timed_out);
	cJSON_AddNumberToObject(o, "duration_ms", (double)r.duration_ms);
	cJSON_AddBoolToObject(o, "truncated", r.out.truncated || r.err.truncated);
	if (r.timed_out) {
		tool_fail(out, TOOL_E_FAILED, "Code execution timed out after %d seconds", timeout);
		out->error_code = strdup("E_TIMEOUT");
	} else if (r.signal == SIGXCPU) {
		tool_fail(out, TOOL_E_FAILED,
			  "Code execution used more than %d seconds of CPU time", timeout + 5);
		out->error_code = strdup("E_TIMEOUT");
	} else if (r.cancelled) {
		tool_fail(out, TOOL_E_FAILED, "Code execution was cancelled");
		out->error_code = strdup("E_CANCELLED");
	} else if (r.exit_code != 0 && out_of_memory(&r)) {
		tool_fail(out, TOOL_E_FAILED, "Code execution ran out of memory (limit %u MB)",
			  exec_default_limits.memory_mb);
		out->error_code = strdup("E_MEMORY");
	} else if (r.exit_code != 0 && fail_on_exit) {
		/* The reference reports a failing script (an exception, a syntax error) as a
		 * failure; its last stderr line usually says why. */
		char why[256];
		last_line(capture_text(&r.err), why, sizeof(why));
		tool_fail(out, TOOL_E_FAILED, "Code exited with status %d%s%s", r.exit_code,
			  why[0] ? ": " : "", why);
		out->error_code = strdup("E_EXIT");
	}
	if (out->error_code)
		cJSON_AddStringToObject(o, "error_code", out->error_code);
	else
		cJSON_AddNullToObject(o, "error_code");
	capture_free(&r.out);
	capture_free(&r.err);
	return 0;
}

static char *python_path;
static pthread_once_t python_once = PTHREAD_ONCE_INIT;

static void find_python(void)
{
	python_path = find_program("python3", "/usr/bin/python3");
}

/* Python reads the whole program from stdin (a memfd) before running it. */
static int execute_python(tool_context *ctx, const cJSON *args, tool_result *out)
{
	char *argv[] = {"python3", "-", NULL};

	pthread_once(&python_once, find_python);
	if (!python_path)
		return -ENOMEM;
	return run_code(ctx, python_path, argv, sbx_json_get_string(args, "code", ""), true, args,
			out);
}

/* The script is an argument (sh -s would let a command eat the rest of it from stdin). */
static int execute_shell(tool_context *ctx, const cJSON *args, tool_result *out)
{
	char *argv[] = {"sh", "-c", (char *)sbx_json_get_string(args, "command", ""), NULL};

	return run_code(ctx, "/bin/sh", argv, "", false, args, out);
}

#define EXEC_OUTPUT_SCHEMA                                                                         \
	"{\"type\":\"object\",\"properties\":{"                                                    \
	"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"                       \
	"\"exit_code\":{\"type\":\"integer\"},\"return_code\":{\"type\":\"integer\"},"             \
	"\"timed_out\":{\"type\":\"boolean\"},\"duration_ms\":{\"type\":\"number\"},"              \
	"\"truncated\":{\"type\":\"boolean\"},\"error_code\":{\"type\":[\"string\",\"null\"]}},"   \
	"\"required\":[\"stdout\",\"stderr\",\"exit_code\",\"return_code\",\"timed_out\","         \
	"\"duration_ms\",\"truncated\"]}"

static const tool_def tools[] = {
	TOOL_DEF(execute_python, .title = "Run Python",
		 .description =
			 "Runs Python 3 code in the workspace directory (a fresh process; files "
			 "are read and written relative to the workspace) and returns stdout, "
			 "stderr and the exit code; a non-zero exit (an exception, a syntax "
			 "error) is a failure. Output is capped at 50 KB per stream (head "
			 "and tail kept). timeout: seconds, default 30, at most 1200.",
		 .input_schema =
			 "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\","
			 "\"maxLength\":1048576,\"description\":\"Python source to run\"},"
			 "\"timeout\":{\"type\":\"number\",\"description\":\"seconds "
			 "(1..1200, default 30)\"}},\"required\":[\"code\"],"
			 "\"additionalProperties\":false}",
		 .output_schema = EXEC_OUTPUT_SCHEMA, .annotations = TOOL_DESTRUCTIVE),
	TOOL_DEF(execute_shell, .title = "Run a shell command",
		 .description =
			 "Runs a POSIX shell script (/bin/sh) in the workspace directory "
			 "and returns stdout, stderr and the exit code, like execute_python.",
		 .input_schema =
			 "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":"
			 "\"string\",\"maxLength\":131000},\"timeout\":{\"type\":\"number\"}},"
			 "\"required\":[\"command\"],\"additionalProperties\":false}",
		 .output_schema = EXEC_OUTPUT_SCHEMA, .annotations = TOOL_DESTRUCTIVE),
};

const tool_def *exec_tools(size_t *n_out)
{
	*n_out = SBX_ELEMENTSOF(tools);
	return tools;
}
