/* SPDX-License-Identifier: MIT */
/*
 * /v1/sandboxes/{id}/exec and /files: checked here (the contract's errors
 * are the service's), then handed to the sandbox's own server
 * (server/transport/sandbox_api.c) on one of its open bridge streams, which
 * runs them through the spawner as the sandbox user. Its answers come back
 * as they are: JSON for exec and errors, raw bytes for a file read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sandboxes.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

#define EXEC_BODY_MAX	(144u << 20) /* stdin: 100 MiB as base64, with room */
#define FILE_MAX	(100u << 20) /* sandbox_api.c's SANDBOX_FILE_MAX */
#define OUTPUT_MAX	(10u << 20)  /* sandbox_api.c's SANDBOX_OUTPUT_MAX, per stream */
#define EXEC_ANSWER_MAX (2 * (OUTPUT_MAX / 3 * 4 + 16) * 6 + 4096)
#define SLACK_MS	30000 /* past an exec's own timeout, for the answer to arrive */
#define FILE_TIMEOUT_MS 330000
#define SMALL_BODY	(1u << 20) /* an exec body past this takes a transfer slot */
#define TRANSFER_WAIT_S 30

size_t sbx_serve__body_max(const char *path)
{
	size_t n = strcspn(path, "?");

	if (strncmp(path, "/v1/sandboxes/", 14) != 0)
		return SERVE_BODY_MAX;
	if (n > 6 && strncmp(path + n - 6, "/files", 6) == 0)
		return FILE_MAX;
	if (n > 5 && strncmp(path + n - 5, "/exec", 5) == 0)
		return EXEC_BODY_MAX;
	return SERVE_BODY_MAX;
}

bool sbx_serve__transfer_busy(sbx_serve *s, const char *method, const char *path,
			      unsigned long long declared, bool *taken)
{
	char id[SERVE_ID_MAX + 1];
	int route = sbx_serve__route(method, path, id);
	struct timespec until;
	bool busy = false;

	*taken = false;
	if (route != SERVE_ROUTE_SBX_FILES &&
	    !(route == SERVE_ROUTE_SBX_EXEC && declared > SMALL_BODY))
		return false;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += TRANSFER_WAIT_S;
	pthread_mutex_lock(&s->lock);
	while (s->transfers >= SERVE_TRANSFERS_MAX && !busy)
		busy = pthread_cond_timedwait(&s->transfer_done, &s->lock, &until) != 0 &&
		       s->transfers >= SERVE_TRANSFERS_MAX;
	if (!busy) {
		s->transfers++;
		*taken = true;
	}
	pthread_mutex_unlock(&s->lock);
	return busy;
}

void sbx_serve__transfer_end(sbx_serve *s)
{
	pthread_mutex_lock(&s->lock);
	s->transfers--;
	pthread_cond_signal(&s->transfer_done);
	pthread_mutex_unlock(&s->lock);
}

static enum MHD_Result send_bytes(struct MHD_Connection *c, unsigned status, char *data, size_t len,
				  const char *type)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		len, data ? data : "", data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result r;

	if (!resp) {
		if (data)
			free(data);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	r = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result send_json(struct MHD_Connection *c, int status, char *text)
{
	if (!text && status != 204)
		return MHD_NO;
	return send_bytes(c, (unsigned)status, text, text ? strlen(text) : 0,
			  text ? "application/json" : NULL);
}

static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *code,
				  const char *message)
{
	char *out = NULL;

	status = sbx_serve__sandbox_error(&out, status, code, message);
	return send_json(c, status, out);
}

/* A request that failed on the way to the sandbox: gone meanwhile (404), or unreachable (502). */
static enum MHD_Result send_unreachable(struct MHD_Connection *c, serve_sandbox *sb,
					const sbx_error *err)
{
	if (atomic_load(&sb->removed))
		return send_error(c, 404, "sandbox_not_found",
				  "the sandbox was removed (deleted, expired or the service "
				  "stopping) while the request ran");
	return send_error(c, 502, "sandbox_unreachable", sbx_error_message(err));
}

/*
 * The sandbox's "no such file" (file_not_found; not_found from an image
 * older than the distinct codes), as opposed to a 404 of its server's own.
 */
static bool file_not_found(int status, const sbx_buf *answer)
{
	return status == 404 && (strstr(sbx_buf_str(answer), "\"error\":\"file_not_found\"") ||
				 strstr(sbx_buf_str(answer), "\"error\":\"not_found\""));
}

/* A server that has no /control/sandbox/ (an image older than this API) answers its own 404. */
static bool old_image(int status, const sbx_buf *answer)
{
	return status == 404 && !file_not_found(status, answer);
}

/* The sandbox's 404 for a file, with the code that says it is the file (not the sandbox). */
static enum MHD_Result send_file_not_found(struct MHD_Connection *c, const sbx_buf *answer)
{
	_cleanup_json_ cJSON *j = NULL;
	const char *msg;

	if (sbx_json_parse(answer->data, answer->len, &j, NULL) < 0)
		j = NULL;
	msg = sbx_json_get_string(j, "message", "no such file or directory");
	return send_error(c, 404, "file_not_found", msg);
}

static enum MHD_Result send_old_image(struct MHD_Connection *c)
{
	return send_error(c, 501, "image_unsupported",
			  "the sandbox's image has no exec and files API (/control/sandbox): "
			  "use an image `sandboxctl build` made from this version");
}

/* The contract's keys, each of the right type; user the image's sandbox user. */
static int check_exec(const cJSON *j, char **out)
{
	const cJSON *it;

	if (!cJSON_IsObject(j))
		return sbx_serve__sandbox_error(out, 400, "bad_request",
						"the body must be a JSON object");
	cJSON_ArrayForEach (it, j) {
		const char *k = it->string;

		if (strcmp(k, "cmd") && strcmp(k, "stdin") && strcmp(k, "stdin_b64") &&
		    strcmp(k, "env") && strcmp(k, "cwd") && strcmp(k, "user") &&
		    strcmp(k, "timeout")) {
			char msg[160];

			snprintf(msg, sizeof(msg),
				 "unknown key '%.64s' (cmd, stdin, stdin_b64, env, cwd, user, "
				 "timeout)",
				 k);
			return sbx_serve__sandbox_error(out, 400, "bad_request", msg);
		}
	}
	it = sbx_json_get(j, "cmd");
	if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) < 1)
		return sbx_serve__sandbox_error(out, 400, "bad_request",
						"'cmd' (an array of strings) is required");
	if (sbx_json_get(j, "stdin") && sbx_json_get(j, "stdin_b64"))
		return sbx_serve__sandbox_error(out, 400, "bad_request",
						"'stdin' or 'stdin_b64', not both");
	it = sbx_json_get(j, "user");
	if (it && !cJSON_IsNull(it) &&
	    (!cJSON_IsString(it) || strcmp(it->valuestring, SERVE_SANDBOX_USER) != 0)) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "user '%.64s' is not available: exec runs as the image's sandbox user "
			 "'%s' (root is not offered)",
			 cJSON_IsString(it) ? it->valuestring : "?", SERVE_SANDBOX_USER);
		return sbx_serve__sandbox_error(out, 400, "user_unsupported", msg);
	}
	it = sbx_json_get(j, "timeout");
	if (it && !cJSON_IsNull(it) && (!cJSON_IsNumber(it) || !(it->valuedouble > 0)))
		return sbx_serve__sandbox_error(out, 400, "bad_request",
						"'timeout': seconds, a positive number");
	return 0;
}

static enum MHD_Result exec(sbx_serve *s, struct MHD_Connection *c, serve_sandbox *sb,
			    const char *body, size_t len)
{
	_cleanup_json_ cJSON *j = NULL;
	_cleanup_free_ char *fwd = NULL, *out = NULL;
	_cleanup_(sbx_buf_free) sbx_buf answer = SBX_BUF_INIT(EXEC_ANSWER_MAX);
	sbx_error err = SBX_ERROR_INIT;
	double left = (double)(sb->expires_at - (int64_t)time(NULL)), timeout;
	const cJSON *t;
	int status = 0, k;

	if (sbx_json_parse(body, len, &j, NULL) < 0)
		j = NULL;
	k = check_exec(j, &out);
	if (k)
		return send_json(c, k, TAKE_PTR(out));
	/* No exec outlives its sandbox. */
	t = sbx_json_get(j, "timeout");
	timeout = cJSON_IsNumber(t) && t->valuedouble < left ? t->valuedouble : left;
	if (timeout < 0.001)
		timeout = 0.001;
	cJSON_DeleteItemFromObjectCaseSensitive(j, "user");
	cJSON_DeleteItemFromObjectCaseSensitive(j, "timeout");
	cJSON_AddNumberToObject(j, "timeout", timeout);
	cJSON_AddStringToObject(j, "workdir", sb->workdir);
	fwd = cJSON_PrintUnformatted(j);
	if (!fwd)
		return send_error(c, 500, "internal", "out of memory");
	k = sbx_warm_request(sb->w, "POST", "/control/sandbox/exec", fwd, strlen(fwd),
			     (int)(timeout * 1000) + SLACK_MS, &status, &answer, &err);
	if (k < 0)
		return send_unreachable(c, sb, &err);
	pthread_mutex_lock(&s->lock);
	s->m.sandbox_execs += status == 200;
	if (status == 200 && strstr(sbx_buf_str(&answer), "\"timed_out\":true"))
		s->m.sandbox_exec_timeouts++;
	pthread_mutex_unlock(&s->lock);
	if (old_image(status, &answer))
		return send_old_image(c);
	return send_json(c, status, sbx_buf_steal(&answer, NULL));
}

static enum MHD_Result files(sbx_serve *s, struct MHD_Connection *c, serve_sandbox *sb, bool put,
			     const char *body, size_t len)
{
	const char *path = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "path");
	_cleanup_(sbx_buf_free) sbx_buf url = SBX_BUF_INIT(16384);
	_cleanup_(sbx_buf_free) sbx_buf answer = SBX_BUF_INIT(FILE_MAX + 4096);
	sbx_error err = SBX_ERROR_INIT;
	int status = 0, k;

	if (!path || !path[0] || strlen(path) > 4096)
		return send_error(c, 400, "bad_request", "?path= names the file");
	k = sbx_buf_puts(&url, "/control/sandbox/file?path=");
	if (k >= 0)
		k = sbx_url_escape(&url, path);
	if (k >= 0)
		k = sbx_buf_puts(&url, "&workdir=");
	if (k >= 0)
		k = sbx_url_escape(&url, sb->workdir);
	if (k >= 0)
		k = sbx_warm_request(sb->w, put ? "PUT" : "GET", sbx_buf_str(&url),
				     put ? (body ? body : "") : NULL, put ? len : 0,
				     FILE_TIMEOUT_MS, &status, &answer, &err);
	if (k < 0)
		return send_unreachable(c, sb, &err);
	pthread_mutex_lock(&s->lock);
	if (status / 100 == 2)
		(*(put ? &s->m.sandbox_writes : &s->m.sandbox_reads))++;
	pthread_mutex_unlock(&s->lock);
	if (old_image(status, &answer))
		return send_old_image(c);
	if (file_not_found(status, &answer))
		return send_file_not_found(c, &answer);
	if (status == 204)
		return send_json(c, 204, NULL);
	{
		size_t n = 0;
		char *data = sbx_buf_steal(&answer, &n);

		return send_bytes(c, (unsigned)status, data, n,
				  status == 200 ? "application/octet-stream" : "application/json");
	}
}

enum MHD_Result sbx_serve__sandbox_request(sbx_serve *s, struct MHD_Connection *c, int route,
					   const char *id, const char *method, const char *body,
					   size_t len)
{
	serve_sandbox *sb;
	char *out = NULL;
	enum MHD_Result r;
	int status;

	switch (route) {
	case SERVE_ROUTE_SBX_CREATE:
		status = sbx_serve__sandbox_create(s, body, len, &out);
		return send_json(c, status, out);
	case SERVE_ROUTE_SBX_LIST:
		status = sbx_serve__sandbox_list(s, &out);
		return send_json(c, status, out);
	case SERVE_ROUTE_SBX_DELETE:
		status = sbx_serve__sandbox_delete(s, id, &out);
		return send_json(c, status, out);
	default:
		break;
	}
	sb = sbx_serve__sandbox_get(s, id);
	if (!sb)
		return send_error(c, 404, "sandbox_not_found", "no such sandbox");
	if (route == SERVE_ROUTE_SBX_EXEC)
		r = exec(s, c, sb, body, len);
	else if (route == SERVE_ROUTE_SBX_FILES)
		r = files(s, c, sb, strcmp(method, "PUT") == 0, body, len);
	else
		r = send_json(c, 200, sbx_serve__sandbox_show(sb));
	sbx_serve__sandbox_put(s, sb);
	return r;
}
