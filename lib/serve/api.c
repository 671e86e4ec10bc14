/* SPDX-License-Identifier: MIT */
/*
 * The API's pure half: which route a request names, whether it carries the
 * token, and whether a POST /v1/episodes body makes sense. No sockets here,
 * so the unit test can throw anything at it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve-internal.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/provenance.h"
#include "sbx/task.h"

bool sbx_serve__token_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	/* Walks all of b whatever a holds: the time says nothing about where they differ. */
	for (size_t i = 0; i < lb; i++)
		d |= (unsigned char)(b[i] ^ (i < la ? a[i] : 0));
	return d == 0;
}

bool sbx_serve__authorized(const char *token, const char *path, const char *authorization,
			   const char **rest)
{
	size_t tl = strlen(token);

	if (!token[0])
		return false;
	if (authorization && strncmp(authorization, "Bearer ", 7) == 0 &&
	    sbx_serve__token_equal(authorization + 7, token)) {
		*rest = path;
		return true;
	}
	if (path[0] == '/') {
		const char *seg = path + 1, *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);
		char cand[80];

		if (n >= sizeof(cand))
			return false;
		memcpy(cand, seg, n);
		cand[n] = 0;
		if (n == tl && sbx_serve__token_equal(cand, token)) {
			*rest = end ? end : "/";
			return true;
		}
	}
	return false;
}

/* The id segment: a run id (sbx_run_id_valid), copied into id. */
static bool take_id(const char *s, size_t n, char id[SERVE_ID_MAX + 1])
{
	if (n == 0 || n > SERVE_ID_MAX)
		return false;
	memcpy(id, s, n);
	id[n] = 0;
	return sbx_run_id_valid(id);
}

/* /v1/sandboxes[/{id}[/exec|/files]]: path without the prefix, len bytes of it. */
static int sandbox_route(const char *method, const char *rest, size_t len,
			 char id[SERVE_ID_MAX + 1])
{
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	bool post = strcmp(method, "POST") == 0, del = strcmp(method, "DELETE") == 0;
	bool put = strcmp(method, "PUT") == 0;
	const char *slash;

	if (len == 0)
		return post ? SERVE_ROUTE_SBX_CREATE : get ? SERVE_ROUTE_SBX_LIST : -405;
	if (rest[0] != '/')
		return -404;
	rest++;
	len--;
	slash = memchr(rest, '/', len);
	if (!take_id(rest, slash ? (size_t)(slash - rest) : len, id))
		return -404;
	if (!slash)
		return get ? SERVE_ROUTE_SBX_GET : del ? SERVE_ROUTE_SBX_DELETE : -405;
	len -= (size_t)(slash - rest);
	if (len == 5 && strncmp(slash, "/exec", 5) == 0)
		return post ? SERVE_ROUTE_SBX_EXEC : -405;
	if (len == 6 && strncmp(slash, "/files", 6) == 0)
		return get || put ? SERVE_ROUTE_SBX_FILES : -405;
	return -404;
}

int sbx_serve__route(const char *method, const char *path, char id[SERVE_ID_MAX + 1])
{
	static const char eps[] = "/v1/episodes", sbs[] = "/v1/sandboxes";
	size_t len = strcspn(path, "?");
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	bool post = strcmp(method, "POST") == 0, del = strcmp(method, "DELETE") == 0;
	const char *rest, *slash;

	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len == 10 && strncmp(path, "/v1/health", 10) == 0)
		return get ? SERVE_ROUTE_HEALTH : -405;
	if (len == 8 && strncmp(path, "/metrics", 8) == 0)
		return get ? SERVE_ROUTE_METRICS : -405;
	if (len >= sizeof(sbs) - 1 && strncmp(path, sbs, sizeof(sbs) - 1) == 0)
		return sandbox_route(method, path + sizeof(sbs) - 1, len - (sizeof(sbs) - 1), id);
	if (len < sizeof(eps) - 1 || strncmp(path, eps, sizeof(eps) - 1) != 0)
		return -404;
	if (len == sizeof(eps) - 1)
		return post ? SERVE_ROUTE_CREATE : get ? SERVE_ROUTE_LIST : -405;
	if (path[sizeof(eps) - 1] != '/')
		return -404;
	rest = path + sizeof(eps);
	len -= sizeof(eps);
	slash = memchr(rest, '/', len);
	if (!slash) {
		if (!take_id(rest, len, id))
			return -404;
		return get ? SERVE_ROUTE_GET : del ? SERVE_ROUTE_ABORT : -405;
	}
	if (!take_id(rest, (size_t)(slash - rest), id))
		return -404;
	if ((size_t)(rest + len - slash) == 7 && strncmp(slash, "/finish", 7) == 0)
		return post ? SERVE_ROUTE_FINISH : -405;
	return -404;
}

void sbx_serve__create_req_clear(serve_create_req *r)
{
	free(r->task);
	free(r->tags_json);
	*r = (serve_create_req){0};
}

static int check_tags(const cJSON *tags, sbx_error *err)
{
	const cJSON *t;
	int n = 0;

	if (!cJSON_IsObject(tags))
		return sbx_error_set(err, -EINVAL, "'tags' must be an object");
	cJSON_ArrayForEach (t, tags) {
		if (++n > SERVE_TAGS_MAX)
			return sbx_error_set(err, -EINVAL, "'tags': at most %d", SERVE_TAGS_MAX);
		if (!cJSON_IsString(t) && !cJSON_IsNumber(t) && !cJSON_IsBool(t))
			return sbx_error_set(err, -EINVAL,
					     "tag '%.64s': a string, a number or a boolean",
					     t->string);
	}
	return 0;
}

/* A JSON number that is a whole number in [min, max]. */
static bool is_whole(const cJSON *it, double min, double max)
{
	return cJSON_IsNumber(it) && it->valuedouble >= min && it->valuedouble <= max &&
	       floor(it->valuedouble) == it->valuedouble;
}

int sbx_serve__parse_create(const char *body, size_t len, uint32_t max_timeout_s,
			    serve_create_req *out, sbx_error *err)
{
	_cleanup_json_ cJSON *j = NULL;
	serve_create_req r = {0};
	const cJSON *it;
	int k;

	if (len > SERVE_BODY_MAX)
		return sbx_error_set(err, -EINVAL, "body over %d bytes", SERVE_BODY_MAX);
	if (sbx_json_parse(body, len, &j, NULL) < 0 || !cJSON_IsObject(j))
		return sbx_error_set(err, -EINVAL, "the body must be a JSON object");
	cJSON_ArrayForEach (it, j) {
		const char *k2 = it->string;

		if (strcmp(k2, "task") && strcmp(k2, "seed") && strcmp(k2, "timeout") &&
		    strcmp(k2, "tags"))
			return sbx_error_set(err, -EINVAL,
					     "unknown key '%.64s' (task, seed, timeout, tags)", k2);
	}
	it = cJSON_GetObjectItemCaseSensitive(j, "task");
	if (!cJSON_IsString(it) || !it->valuestring[0] || strlen(it->valuestring) > 256)
		return sbx_error_set(err, -EINVAL, "'task' (a task name) is required");
	/* A name, not a path: the service serves the tasks it was given. */
	if (strchr(it->valuestring, '/') || it->valuestring[0] == '.')
		return sbx_error_set(err, -EINVAL, "task '%.64s': a task name, not a path",
				     it->valuestring);
	it = cJSON_GetObjectItemCaseSensitive(j, "seed");
	if (it && !cJSON_IsNull(it)) {
		if (!is_whole(it, 0, (double)SBX_TASK_SEED_MAX))
			return sbx_error_set(err, -EINVAL, "'seed': an integer 0..%llu",
					     (unsigned long long)SBX_TASK_SEED_MAX);
		r.seeded = true;
		r.seed = (uint64_t)it->valuedouble;
	}
	it = cJSON_GetObjectItemCaseSensitive(j, "timeout");
	if (it && !cJSON_IsNull(it)) {
		if (!is_whole(it, 1, (double)max_timeout_s))
			return sbx_error_set(err, -EINVAL, "'timeout': whole seconds, 1..%u",
					     max_timeout_s);
		r.timeout_s = (uint32_t)it->valuedouble;
	}
	it = cJSON_GetObjectItemCaseSensitive(j, "tags");
	if (it && !cJSON_IsNull(it)) {
		k = check_tags(it, err);
		if (k < 0)
			return k;
		r.tags_json = cJSON_PrintUnformatted(it);
		if (!r.tags_json)
			return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r.task = strdup(cJSON_GetObjectItemCaseSensitive(j, "task")->valuestring);
	if (!r.task) {
		sbx_serve__create_req_clear(&r);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	*out = r;
	return 0;
}

char *sbx_serve__error_json(const char *msg)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "error", msg))
		return NULL;
	return cJSON_PrintUnformatted(o);
}
