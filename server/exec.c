/* SPDX-License-Identifier: MIT */
/*
 * execute_python and execute_shell: the code runs in a child process in the
 * workspace, in its own process group, under rlimits (address space, CPU,
 * processes, file size), with a timeout after which the whole group is
 * killed. stdout and stderr are read with poll() and capped (head and tail
 * kept, a marker in between).
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "server.h"
#include "task.h"

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

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
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
 * Built before fork; freed with free_env.
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
			for (size_t j = 0; j < k; j++)
				free(env[j]);
			free(env);
			return NULL;
		}
	return env;
}

static void free_env(char **env)
{
	for (char **e = env; e && *e; e++)
		free(*e);
	free(env);
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

typedef struct run {
	int exit_code;
	int signal;
	bool timed_out, cancelled;
	long long duration_ms;
	capture out, err;
} run;

static void kill_group(pid_t pgid)
{
	for (int i = 0; i < 3 && kill(-pgid, SIGKILL) == 0; i++)
		;
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
	int code_fd = -1, out[2] = {-1, -1}, errp[2] = {-1, -1}, st[2] = {-1, -1}, pidfd = -1;
	long long start = now_ms(), deadline = start + (long long)timeout * 1000, last_progress;
	bool out_open = true, err_open = true, exited = false;
	int status = 0, child_errno = 0, ret = 0;
	size_t len = code ? strlen(code) : 0;
	char **envp = child_env(ctx);
	pid_t pid, parent;

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
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		ret = sbx_error_set(err, -errno, "fork: %s", strerror(errno));
		goto done;
	}
	if (pid == 0)
		child(ctx, prog, argv, envp, code_fd, out[1], errp[1], st[1], timeout, parent);
	setpgid(pid, pid); /* also in the parent: no window where kill(-pid) misses */
	close(out[1]);
	close(errp[1]);
	close(st[1]);
	out[1] = errp[1] = st[1] = -1;
	if (read(st[0], &child_errno, sizeof(child_errno)) == (ssize_t)sizeof(child_errno)) {
		waitpid(pid, NULL, 0);
		ret = sbx_error_set(err, -child_errno, "cannot run '%s': %s", prog,
				    strerror(child_errno));
		goto done;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(errp[0], F_SETFL, O_NONBLOCK);
	last_progress = start;
	while (out_open || err_open || !exited) {
		struct pollfd p[3] = {{out_open ? out[0] : -1, POLLIN, 0},
				      {err_open ? errp[0] : -1, POLLIN, 0},
				      {exited ? -1 : pidfd, POLLIN, 0}};
		long long now = now_ms(), wait_ms = 100;

		if (!exited && ctx->cancelled && atomic_load(ctx->cancelled)) {
			r->cancelled = true;
			kill_group(pid);
		}
		if (!exited && now >= deadline && !r->timed_out) {
			r->timed_out = true;
			kill_group(pid);
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
		if (!exited && (p[2].revents || pidfd < 0)) {
			pid_t w = waitpid(pid, &status, pidfd < 0 ? WNOHANG : 0);
			if (w == pid) {
				exited = true;
				/* Background leftovers of the group go too; give the pipes 200 ms.
				 */
				kill_group(pid);
				if (deadline > now_ms() + 200)
					deadline = now_ms() + 200;
			}
		}
	}
	if (!exited) {
		kill_group(pid);
		waitpid(pid, &status, 0);
	}
	r->duration_ms = now_ms() - start;
	if (WIFEXITED(status)) {
		r->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		r->signal = WTERMSIG(status);
		r->exit_code = -r->signal;
	}
done:
	free_env(envp);
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
	if (pidfd >= 0)
		close(pidfd);
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
	{
		.name = "execute_python",
		.title = "Run Python",
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
		.output_schema = EXEC_OUTPUT_SCHEMA,
		.annotations = TOOL_DESTRUCTIVE,
		.fn = execute_python,
	},
	{
		.name = "execute_shell",
		.title = "Run a shell command",
		.description = "Runs a POSIX shell script (/bin/sh) in the workspace directory "
			       "and returns stdout, stderr and the exit code, like execute_python.",
		.input_schema =
			"{\"type\":\"object\",\"properties\":{\"command\":{\"type\":"
			"\"string\",\"maxLength\":131000},\"timeout\":{\"type\":\"number\"}},"
			"\"required\":[\"command\"],\"additionalProperties\":false}",
		.output_schema = EXEC_OUTPUT_SCHEMA,
		.annotations = TOOL_DESTRUCTIVE,
		.fn = execute_shell,
	},
};

const tool_def *exec_tools(size_t *n_out)
{
	*n_out = SBX_ELEMENTSOF(tools);
	return tools;
}
