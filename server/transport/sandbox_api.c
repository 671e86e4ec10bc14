/* SPDX-License-Identifier: MIT */
/*
 * The host's API for a sandbox without a task (`serve`'s /v1/sandboxes),
 * under /control, so only the host that owns the sandbox reaches it (the
 * unix socket, through its bridge streams; never the published port, never
 * the relay):
 *
 *   POST /control/sandbox/exec  {"cmd": [argv], "stdin" | "stdin_b64", "env": {k: v},
 *                                "cwd", "workdir", "timeout": seconds}
 *        → {"returncode", "stdout", "stderr", "stdout_b64"?, "stderr_b64"?,
 *           "truncated", "timed_out"}
 *   GET  /control/sandbox/file?path=P&workdir=W  → the file's bytes
 *   PUT  /control/sandbox/file?path=P&workdir=W  (raw body) → 204
 *
 * Everything runs through sandbox-spawner as the agent's uid, first as
 * sandbox-io (images/init/sandbox-io.c), which enters the directory, finds
 * the program on PATH and opens the files, so the kernel's permissions for
 * that uid decide. Errors are {"error": code, "message": text}.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_server.h"
#include "spawn-protocol.h"
#include "code_spawn.h"
#include "sbx/base64.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/utf8.h"

#define DEFAULT_WORKDIR "/workspace"
#define DEFAULT_TIMEOUT (24LL * 3600 * 1000)
#define FILE_TIMEOUT_MS (300LL * 1000)
#define NOTE_MAX	4096
#define MAX_PROCESSES	4096

static const spawn_limits unlimited = {
	.cpu_seconds = 0xffffffffu,
	.max_processes = MAX_PROCESSES,
	.address_space = ~0ULL,
	.max_file_bytes = ~0ULL,
};

/* An output stream with its cap: the bytes past it are dropped and the cut noted. */
typedef struct capped {
	sbx_buf b;
	bool truncated;
} capped;

static void capped_sink(void *userdata, const char *data, size_t n)
{
	capped *c = userdata;
	size_t room = c->b.max > c->b.len ? c->b.max - c->b.len : 0;

	if (n > room) {
		c->truncated = true;
		n = room;
	}
	if (n && sbx_buf_append(&c->b, data, n) < 0)
		c->truncated = true;
}

static enum MHD_Result fail(http_request *req, unsigned status, const char *code,
			    const char *message)
{
	cJSON *o = cJSON_CreateObject();

	if (o) {
		cJSON_AddStringToObject(o, "error", code);
		cJSON_AddStringToObject(o, "message", message);
	}
	return http_reply_json(req, status, o);
}

static char helper_path[PATH_MAX];

/* sandbox-io, beside this program; $SANDBOX_IO overrides it (tests on a host). */
static void find_helper(void)
{
	const char *env = getenv("SANDBOX_IO");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && env[0] == '/') {
		snprintf(helper_path, sizeof(helper_path), "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash && (size_t)(slash - exe) + sizeof("/sandbox-io") <= sizeof(helper_path))
		snprintf(helper_path, sizeof(helper_path), "%.*s/sandbox-io", (int)(slash - exe),
			 exe);
}

static const char *helper(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, find_helper);
	return helper_path[0] ? helper_path : NULL;
}

/* True when the n bytes are valid UTF-8 without a NUL: they can travel as a JSON string. */
static bool text_safe(const char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = p[i] ? sbx_utf8_seq((const unsigned char *)p + i, n - i) : 0;

		if (!k)
			return false;
		i += k;
	}
	return true;
}

/* "name": the text, or "name": "" and "name_b64": the bytes. */
static bool add_output(cJSON *o, const char *name, const sbx_buf *b)
{
	char key[32];
	_cleanup_free_ char *b64 = NULL;

	if (text_safe(b->data ? b->data : "", b->len))
		return cJSON_AddStringToObject(o, name, b->len ? sbx_buf_str(b) : "") != NULL;
	snprintf(key, sizeof(key), "%s_b64", name);
	b64 = sbx_base64_encode(b->data, b->len);
	return b64 && cJSON_AddStringToObject(o, name, "") && cJSON_AddStringToObject(o, key, b64);
}

/* The child's environment: the server's, each of env's "k": "v" replacing or added. */
static char **exec_env(const cJSON *env)
{
	size_t n = 0, k = 0, extra = (size_t)cJSON_GetArraySize(env);
	char **out;
	const cJSON *it;

	for (char **e = environ; *e; e++)
		n++;
	out = calloc(n + extra + 1, sizeof(char *));
	if (!out)
		return NULL;
	for (char **e = environ; *e; e++) {
		size_t klen = strcspn(*e, "=");
		bool replaced = false;

		cJSON_ArrayForEach (it, env)
			replaced |=
				strlen(it->string) == klen && strncmp(it->string, *e, klen) == 0;
		if (!replaced && !(out[k++] = strdup(*e)))
			goto oom;
	}
	cJSON_ArrayForEach (it, env)
		if (asprintf(&out[k++], "%s=%s", it->string, it->valuestring) < 0) {
			out[--k] = NULL;
			goto oom;
		}
	return out;
oom:
	sbx_strv_free(out);
	return NULL;
}

/* The checks the host made already, again: this is the boundary the spawner trusts. */
static const char *check_exec(const cJSON *body)
{
	const cJSON *cmd = sbx_json_get(body, "cmd"), *env = sbx_json_get(body, "env"), *it;

	if (!cJSON_IsArray(cmd) || cJSON_GetArraySize(cmd) < 1 ||
	    cJSON_GetArraySize(cmd) > SBX_SPAWN_MAX_STRINGS - 8)
		return "'cmd' must be a non-empty array of strings";
	cJSON_ArrayForEach (it, cmd)
		if (!cJSON_IsString(it))
			return "'cmd' must be a non-empty array of strings";
	if (!cJSON_GetArrayItem(cmd, 0)->valuestring[0])
		return "'cmd' names no program";
	if (env && !cJSON_IsObject(env))
		return "'env' must be an object of strings";
	cJSON_ArrayForEach (it, env)
		if (!cJSON_IsString(it) || !it->string[0] || strchr(it->string, '='))
			return "'env' must map names (without '=') to strings";
	for (const char *const *k =
		     (const char *const[]){"stdin", "stdin_b64", "cwd", "workdir", NULL};
	     *k; k++)
		if (sbx_json_get(body, *k) && !cJSON_IsString(sbx_json_get(body, *k)))
			return "'stdin', 'stdin_b64', 'cwd' and 'workdir' must be strings";
	return NULL;
}

/* cwd relative to workdir, or itself when absolute; malloc'd. */
static char *resolve_dir(const char *workdir, const char *cwd)
{
	char *out = NULL;

	if (!cwd || !cwd[0])
		return strdup(workdir);
	if (cwd[0] == '/')
		return strdup(cwd);
	return asprintf(&out, "%s/%s", workdir, cwd) < 0 ? NULL : out;
}

typedef struct io_run {
	capped out, err;
	spawn_outcome o;
} io_run;

/* Runs sandbox-io with argv (argv[0] its name) at the root. */
static int run_helper(char **argv, char **envp, const void *in, size_t in_len, long long timeout_ms,
		      size_t out_max, size_t err_max, io_run *r, sbx_error *err)
{
	/* An exec may start a service for the next one (`server &`), as under docker exec. */
	bool keep = strcmp(argv[1], "exec") == 0;
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	spawn_job job = {
		.prog = helper(),
		.argv = argv,
		.envp = envp ? envp : environ,
		.stdin_data = in,
		.stdin_len = in_len,
		.cwd_fd = root,
		.timeout_ms = timeout_ms,
		.limits = unlimited,
		.keep_leftovers = keep,
		.out = capped_sink,
		.err = capped_sink,
		.out_userdata = &r->out,
		.err_userdata = &r->err,
	};

	sbx_buf_init(&r->out.b, out_max);
	sbx_buf_init(&r->err.b, err_max);
	if (!job.prog)
		return sbx_error_set(err, -ENOENT, "sandbox-io is not installed beside the server");
	if (root < 0)
		return sbx_error_set(err, -errno, "open /: %s", strerror(errno));
	return spawn_run(&job, &r->o, err);
}

static void io_run_clear(io_run *r)
{
	sbx_buf_free(&r->out.b);
	sbx_buf_free(&r->err.b);
}

static enum MHD_Result exec_answer(http_request *req, io_run *r)
{
	cJSON *o = cJSON_CreateObject();
	/* A signal's death as a shell and docker exec report it (143 for SIGTERM). */
	int rc = r->o.timed_out ? SANDBOX_EXEC_TIMEOUT_RC
		 : r->o.signal	? 128 + r->o.signal
				: r->o.exit_code;

	if (!o || !cJSON_AddNumberToObject(o, "returncode", rc) ||
	    !add_output(o, "stdout", &r->out.b) || !add_output(o, "stderr", &r->err.b) ||
	    !cJSON_AddBoolToObject(o, "truncated", r->out.truncated || r->err.truncated) ||
	    !cJSON_AddBoolToObject(o, "timed_out", r->o.timed_out)) {
		cJSON_Delete(o);
		return fail(req, 500, "internal", "out of memory");
	}
	return http_reply_json(req, 200, o);
}

static enum MHD_Result sandbox_exec(http_request *req)
{
	_cleanup_json_ cJSON *body = NULL;
	_cleanup_(io_run_clear) io_run r = {0};
	_cleanup_free_ char *dir = NULL, *in = NULL;
	_cleanup_free_ char **argv = NULL;
	char **envp = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const cJSON *cmd, *t, *it;
	const char *why, *b64;
	long long timeout_ms = DEFAULT_TIMEOUT;
	size_t in_len = 0, k = 0;
	int ret;

	if (sbx_json_parse(req->body, req->body_len, &body, &err) < 0 || !cJSON_IsObject(body))
		return fail(req, 400, "bad_request", "the body must be a JSON object");
	why = check_exec(body);
	if (why)
		return fail(req, 400, "bad_request", why);
	t = sbx_json_get(body, "timeout");
	if (t && !cJSON_IsNull(t)) {
		if (!cJSON_IsNumber(t) || !(t->valuedouble > 0) || t->valuedouble > 1e7)
			return fail(req, 400, "bad_request", "'timeout': seconds, > 0");
		timeout_ms = (long long)(t->valuedouble * 1000.0);
	}
	b64 = sbx_json_get_string(body, "stdin_b64", NULL);
	if (b64) {
		ssize_t n;

		in = strdup(b64);
		if (!in || (n = sbx_base64_decode(in)) < 0)
			return fail(req, 400, "bad_request", "'stdin_b64' is not base64");
		in_len = (size_t)n;
	} else if ((in = strdup(sbx_json_get_string(body, "stdin", "")))) {
		in_len = strlen(in);
	}
	dir = resolve_dir(sbx_json_get_string(body, "workdir", DEFAULT_WORKDIR),
			  sbx_json_get_string(body, "cwd", NULL));
	cmd = sbx_json_get(body, "cmd");
	argv = calloc((size_t)cJSON_GetArraySize(cmd) + 4, sizeof(char *));
	envp = exec_env(sbx_json_get(body, "env"));
	if (!in || !dir || !argv || !envp) {
		sbx_strv_free(envp);
		return fail(req, 500, "internal", "out of memory");
	}
	argv[k++] = "sandbox-io";
	argv[k++] = "exec";
	argv[k++] = dir;
	cJSON_ArrayForEach (it, cmd)
		argv[k++] = it->valuestring;
	ret = run_helper(argv, envp, in, in_len, timeout_ms, SANDBOX_OUTPUT_MAX, SANDBOX_OUTPUT_MAX,
			 &r, &err);
	sbx_strv_free(envp);
	if (ret < 0)
		return fail(req, 500, "spawn_failed", sbx_error_message(&err));
	return exec_answer(req, &r);
}

/* sandbox-io's exit status (an errno) as the API's answer. */
static enum MHD_Result file_error(http_request *req, io_run *r)
{
	const char *note;

	while (r->err.b.len && r->err.b.data[r->err.b.len - 1] == '\n')
		r->err.b.data[--r->err.b.len] = '\0'; /* one line, as every error's message */
	note = r->err.b.len ? sbx_buf_str(&r->err.b) : "sandbox-io failed";
	if (r->o.timed_out)
		return fail(req, 504, "timeout", "the transfer did not end in time");
	switch (r->o.signal ? -1 : r->o.exit_code) {
	case ENOENT:
	case ENOTDIR:
	case ELOOP:
	case ENAMETOOLONG:
		return fail(req, 404, "file_not_found", note);
	case EISDIR:
		return fail(req, 409, "is_a_directory", note);
	case EACCES:
	case EPERM:
	case EROFS:
		return fail(req, 403, "permission_denied", note);
	case EFBIG:
		return fail(req, 413, "too_large", note);
	case ENOSPC:
	case EDQUOT:
		return fail(req, 507, "no_space", note);
	default:
		return fail(req, 500, "io_error", note);
	}
}

static const char *query(http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result sandbox_file(http_request *req, bool put)
{
	_cleanup_(io_run_clear) io_run r = {0};
	const char *path = query(req, "path"), *workdir = query(req, "workdir");
	sbx_error err = SBX_ERROR_INIT;
	char max[32];
	int ret;

	if (!path || !path[0] || strlen(path) >= PATH_MAX)
		return fail(req, 400, "bad_request", "?path= names the file");
	if (!workdir || workdir[0] != '/')
		workdir = DEFAULT_WORKDIR;
	if (put && req->body_len > SANDBOX_FILE_MAX)
		return fail(req, 413, "too_large", "a file is at most 100 MiB");
	snprintf(max, sizeof(max), "%llu", (unsigned long long)SANDBOX_FILE_MAX);
	ret = run_helper(
		put ? (char *[]){"sandbox-io", "write", (char *)workdir, (char *)path, NULL}
		    : (char *[]){"sandbox-io", "read", (char *)workdir, (char *)path, max, NULL},
		NULL, put ? req->body : NULL, put ? req->body_len : 0, FILE_TIMEOUT_MS,
		put ? NOTE_MAX : SANDBOX_FILE_MAX, NOTE_MAX, &r, &err);
	if (ret < 0)
		return fail(req, 500, "spawn_failed", sbx_error_message(&err));
	if (r.o.timed_out || r.o.signal || r.o.exit_code != 0)
		return file_error(req, &r);
	if (put)
		return http_reply(req, 204, NULL, NULL, NULL);
	{
		size_t len = 0;
		char *data = sbx_buf_steal(&r.out.b, &len);

		if (!data)
			return fail(req, 500, "internal", "out of memory");
		return http_reply_bytes(req, 200, "application/octet-stream", data, len, NULL);
	}
}

bool http_sandbox_route(http_request *req, const char *url, enum MHD_Result *result)
{
	bool get = strcmp(req->method, "GET") == 0, post = strcmp(req->method, "POST") == 0,
	     put = strcmp(req->method, "PUT") == 0;

	if (strncmp(url, "/sandbox/", 9) != 0)
		return false;
	url += 8;
	if (strcmp(url, "/exec") == 0)
		*result = post ? sandbox_exec(req) : fail(req, 405, "bad_method", "POST only");
	else if (strcmp(url, "/file") == 0)
		*result = get || put ? sandbox_file(req, put)
				     : fail(req, 405, "bad_method", "GET or PUT only");
	else
		*result = fail(req, 404, "not_found", "no such /control/sandbox path");
	return true;
}
