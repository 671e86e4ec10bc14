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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output_capture.h"
#include "server.h"
#include "code_spawn.h"
#include "task_session.h"
#include "sbx/cleanup.h"

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

typedef struct run {
	spawn_outcome o;
	capture out, err;
} run;

static void sink(void *userdata, const char *data, size_t n)
{
	capture_add(userdata, data, n);
}

static int spawn_and_wait(tool_context *ctx, const char *prog, char *const argv[], const char *code,
			  int timeout, run *r, sbx_error *err)
{
	char **envp = child_env(ctx);
	spawn_job job = {
		.prog = prog,
		.argv = argv,
		.envp = envp,
		.stdin_data = code,
		.stdin_len = code ? strlen(code) : 0,
		.cwd_fd = ctx->workspace_fd,
		.timeout_ms = (long long)timeout * 1000,
		.limits = {.cpu_seconds = (uint32_t)timeout + 5,
			   .max_processes = exec_default_limits.max_processes,
			   .address_space = (uint64_t)exec_default_limits.memory_mb << 20,
			   .max_file_bytes = (uint64_t)exec_default_limits.max_file_mb << 20},
		.out = sink,
		.err = sink,
		.out_userdata = &r->out,
		.err_userdata = &r->err,
		.cancelled = ctx->cancelled,
		.progress = ctx->progress,
		.progress_payload = ctx->progress_payload,
	};
	int ret;

	if (!envp)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	ret = spawn_run(&job, &r->o, err);
	sbx_strv_free(envp);
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
	       (r->o.signal == SIGKILL && !r->o.timed_out && !r->o.cancelled);
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
	cJSON_AddNumberToObject(o, "exit_code", r.o.exit_code);
	cJSON_AddNumberToObject(o, "return_code", r.o.exit_code);
	cJSON_AddBoolToObject(o, "timed_out", r.o.timed_out);
	cJSON_AddNumberToObject(o, "duration_ms", (double)r.o.duration_ms);
	cJSON_AddBoolToObject(o, "truncated", r.out.truncated || r.err.truncated);
	if (r.o.timed_out) {
		tool_fail(out, TOOL_E_FAILED, "Code execution timed out after %d seconds", timeout);
		out->error_code = strdup("E_TIMEOUT");
	} else if (r.o.signal == SIGXCPU) {
		tool_fail(out, TOOL_E_FAILED,
			  "Code execution used more than %d seconds of CPU time", timeout + 5);
		out->error_code = strdup("E_TIMEOUT");
	} else if (r.o.cancelled) {
		tool_fail(out, TOOL_E_FAILED, "Code execution was cancelled");
		out->error_code = strdup("E_CANCELLED");
	} else if (r.o.exit_code != 0 && out_of_memory(&r)) {
		tool_fail(out, TOOL_E_FAILED, "Code execution ran out of memory (limit %u MB)",
			  exec_default_limits.memory_mb);
		out->error_code = strdup("E_MEMORY");
	} else if (r.o.exit_code != 0 && fail_on_exit) {
		/* The reference reports a failing script (an exception, a syntax error) as a
		 * failure; its last stderr line usually says why. */
		char why[256];
		last_line(capture_text(&r.err), why, sizeof(why));
		tool_fail(out, TOOL_E_FAILED, "Code exited with status %d%s%s", r.o.exit_code,
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
