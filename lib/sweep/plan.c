/* SPDX-License-Identifier: MIT */
/* The plan: sweep.json, and which episode is which. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/sweep.h"
#include "sbx/task.h"
#include "sweep-internal.h"

#define PLAN_MAX_BYTES (16 << 20)

char *sbx_sweep__strdup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

int sbx_sweep__write_atomic(const char *dir, const char *name, const char *data, size_t len,
			    sbx_error *err)
{
	_cleanup_free_ char *tmp = NULL, *path = NULL;
	_cleanup_close_ int fd = -1, dfd = -1;
	int r;

	if (asprintf(&tmp, "%s/.%s.tmp", dir, name) < 0 || asprintf(&path, "%s/%s", dir, name) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return sbx_error_set(err, -errno, "'%s': %s", tmp, strerror(errno));
	r = sbx_write_all(fd, data, len);
	if (r < 0) {
		unlink(tmp);
		return sbx_error_set(err, r, "'%s': write: %s", tmp, strerror(-r));
	}
	if (fsync(fd) < 0 || rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		return sbx_error_set(err, r, "'%s': %s", path, strerror(-r));
	}
	/* The rename itself is durable only once the directory is. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return 0;
}

void sbx_sweep_plan_free(sbx_sweep_plan *p)
{
	if (!p)
		return;
	sbx_strv_free_n(p->tasks, p->n_tasks);
	free(p->seedable);
	sbx_strv_free_n(p->agents, p->n_agents);
	sbx_strv_free_n(p->tags, p->n_tags);
	sbx_free_all(p->id, p->image, p->tasks_dir, p->image_id, p->tasks_commit, p->version);
	free(p);
}

size_t sbx_sweep_plan_size(const sbx_sweep_plan *p)
{
	return p->n_tasks * p->n_agents * p->epochs;
}

void sbx_sweep_plan_episode(const sbx_sweep_plan *p, size_t i, sbx_sweep_episode *out)
{
	size_t per_epoch = p->n_tasks * p->n_agents;

	*out = (sbx_sweep_episode){.index = i};
	out->epoch = (unsigned)(i / per_epoch);
	/* Task-major inside an epoch: the agents of one task run side by side. */
	out->task = (i % per_epoch) / p->n_agents;
	out->agent = i % p->n_agents;
	if (p->seeded && p->seedable && p->seedable[out->task]) {
		out->seeded = true;
		out->seed = p->seed_from + out->epoch;
	}
}

int sbx_sweep_plan_new_id(sbx_sweep_plan *p, sbx_error *err)
{
	unsigned char b[4];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return sbx_error_set(err, -errno, "sweep id: getrandom: %s", strerror(errno));
	free(p->id);
	if (asprintf(&p->id, "%02x%02x%02x%02x", b[0], b[1], b[2], b[3]) < 0) {
		p->id = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

void sbx_sweep_plan_run_id(const sbx_sweep_plan *p, const sbx_sweep_episode *ep, unsigned attempt,
			   char *out, size_t size)
{
	/* A task given as a path (--task-dir) is named by its folder, in run-id characters. */
	const char *task = p->tasks[ep->task], *slash = strrchr(task, '/');
	char name[SBX_TASK_MAX_ID + 1];
	size_t n = 0;

	if (slash && slash[1])
		task = slash + 1;
	for (; *task && n < SBX_TASK_MAX_ID; task++)
		name[n++] =
			strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
			       *task)
				? *task
				: '-';
	name[n] = '\0';
	/* Unique across sweeps, so `sandboxctl ps` and labels never mix two of them. */
	snprintf(out, size, "%s%s%s.a%zu.e%u.t%u", p->id ? p->id : "", p->id ? "." : "", name,
		 ep->agent, ep->epoch, attempt);
}

/*
 * Every name in v set, not empty and given once; else -EINVAL with
 * "<kind> N: empty <what>" or "<kind> 'NAME' named twice".
 */
static int check_names(char *const *v, size_t n, const char *kind, const char *what, sbx_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!v[i] || !*v[i])
			return sbx_error_set(err, -EINVAL, "%s %zu: empty %s", kind, i + 1, what);
		for (size_t j = 0; j < i; j++)
			if (strcmp(v[i], v[j]) == 0)
				return sbx_error_set(err, -EINVAL, "%s '%s' named twice", kind,
						     v[i]);
	}
	return 0;
}

int sbx_sweep_plan_check(const sbx_sweep_plan *p, sbx_error *err)
{
	int r;

	if (p->id && (strlen(p->id) != 8 || strspn(p->id, "0123456789abcdef") != 8))
		return sbx_error_set(err, -EINVAL, "sweep id '%s': expected 8 hex digits", p->id);
	if (p->n_tasks == 0 || p->n_tasks > SBX_SWEEP_MAX_TASKS)
		return sbx_error_set(err, -EINVAL, "a sweep needs 1..%d tasks, not %zu",
				     SBX_SWEEP_MAX_TASKS, p->n_tasks);
	if (p->n_agents == 0 || p->n_agents > SBX_SWEEP_MAX_AGENTS)
		return sbx_error_set(err, -EINVAL, "a sweep needs 1..%d agents, not %zu",
				     SBX_SWEEP_MAX_AGENTS, p->n_agents);
	if (p->epochs == 0 || p->epochs > SBX_SWEEP_MAX_EPOCHS)
		return sbx_error_set(err, -EINVAL, "epochs must be 1..%d", SBX_SWEEP_MAX_EPOCHS);
	if (sbx_sweep_plan_size(p) > SBX_SWEEP_MAX_EPISODES)
		return sbx_error_set(err, -EINVAL, "%zu episodes: more than the limit of %d",
				     sbx_sweep_plan_size(p), SBX_SWEEP_MAX_EPISODES);
	if (p->seeded && p->seed_from + p->epochs - 1 > SBX_TASK_SEED_MAX)
		return sbx_error_set(err, -EINVAL, "seeds past %llu", SBX_TASK_SEED_MAX);
	/* Results name a task or agent by its string: two equal columns would merge. */
	r = check_names(p->tasks, p->n_tasks, "task", "name", err);
	if (r < 0)
		return r;
	r = check_names(p->agents, p->n_agents, "agent", "command", err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < p->n_tags; i++)
		if (!p->tags[i] || !strchr(p->tags[i], '=') || p->tags[i][0] == '=')
			return sbx_error_set(err, -EINVAL, "tag '%s': expected key=value",
					     p->tags[i] ? p->tags[i] : "");
	if (p->n_pass_at == 0 || p->n_pass_at > SBX_SWEEP_MAX_PASS_AT)
		return sbx_error_set(err, -EINVAL, "pass@k: 1..%d values of k",
				     SBX_SWEEP_MAX_PASS_AT);
	for (size_t i = 0; i < p->n_pass_at; i++)
		if (p->pass_at[i] == 0 || p->pass_at[i] > p->epochs)
			return sbx_error_set(err, -EINVAL, "pass@%u: k must be 1..epochs (%u)",
					     p->pass_at[i], p->epochs);
	return 0;
}

/* The plan's limits: the deadline at the top, the rest in "limits" around "network". */
static const sbx_limits_key plan_timeout[] = {{SBX_LIMITS_TIMEOUT, "timeout_s"}};
static const sbx_limits_key plan_limits[] = {
	{SBX_LIMITS_MEMORY, "memory"},	 {SBX_LIMITS_CPUS, "cpus"},	{SBX_LIMITS_PIDS, "pids"},
	{SBX_LIMITS_RUNTIME, "runtime"}, {SBX_LIMITS_GRACE, "grace_s"},
};
static const sbx_limits_key plan_seccomp[] = {{SBX_LIMITS_SECCOMP, "seccomp"}};

static void add_str0(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

char *sbx_sweep_plan_json(const sbx_sweep_plan *p)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	cJSON *a, *tags, *l;

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "schema_version", 1);
	add_str0(o, "id", p->id);
	a = cJSON_AddArrayToObject(o, "tasks");
	for (size_t i = 0; a && i < p->n_tasks; i++) {
		cJSON *t = cJSON_CreateObject();

		cJSON_AddItemToArray(a, t);
		cJSON_AddStringToObject(t, "name", p->tasks[i]);
		cJSON_AddBoolToObject(t, "seedable", p->seedable && p->seedable[i]);
	}
	a = cJSON_AddArrayToObject(o, "agents");
	for (size_t i = 0; a && i < p->n_agents; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(p->agents[i]));
	cJSON_AddNumberToObject(o, "epochs", p->epochs);
	cJSON_AddNumberToObject(o, "episodes", (double)sbx_sweep_plan_size(p));
	if (p->seeded)
		cJSON_AddNumberToObject(o, "seed_from", (double)p->seed_from);
	else
		cJSON_AddNullToObject(o, "seed_from");
	sbx_limits_json_write(o, &p->limits, plan_timeout, SBX_ELEMENTSOF(plan_timeout));
	cJSON_AddNumberToObject(o, "retries", p->retries);
	add_str0(o, "image", p->image);
	l = cJSON_AddObjectToObject(o, "limits");
	sbx_limits_json_write(l, &p->limits, plan_limits, SBX_ELEMENTSOF(plan_limits));
	cJSON_AddStringToObject(l, "network", p->published ? "published" : "none");
	sbx_limits_json_write(l, &p->limits, plan_seccomp, SBX_ELEMENTSOF(plan_seccomp));
	add_str0(o, "tasks_dir", p->tasks_dir);
	a = cJSON_AddArrayToObject(o, "pass_at");
	for (size_t i = 0; a && i < p->n_pass_at; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(p->pass_at[i]));
	tags = cJSON_AddObjectToObject(o, "tags");
	for (size_t i = 0; tags && i < p->n_tags; i++) {
		const char *eq = strchr(p->tags[i], '=');
		_cleanup_free_ char *k = eq ? strndup(p->tags[i], (size_t)(eq - p->tags[i])) : NULL;

		if (k)
			cJSON_AddStringToObject(tags, k, eq + 1);
	}
	add_str0(o, "image_id", p->image_id);
	add_str0(o, "tasks_commit", p->tasks_commit);
	cJSON_AddBoolToObject(o, "tasks_dirty", p->tasks_dirty);
	add_str0(o, "sandboxctl_version", p->version);
	cJSON_AddNumberToObject(o, "created_at", (double)p->created_at);
	return cJSON_Print(o);
}

static char *get_str0(const cJSON *o, const char *k)
{
	const char *s = sbx_json_get_string(o, k, NULL);

	return s ? strdup(s) : NULL;
}

/* j's key as an array of 1..max entries: *out and its size *n. */
static int get_list(const cJSON *j, const char *key, size_t max, const cJSON **out, size_t *n,
		    sbx_error *err)
{
	const cJSON *a = sbx_json_get(j, key);

	*n = cJSON_IsArray(a) ? (size_t)cJSON_GetArraySize(a) : 0;
	if (*n == 0 || *n > max)
		return sbx_error_set(err, -EINVAL, "\"%s\": expected 1..%zu %s", key, max, key);
	*out = a;
	return 0;
}

static int get_count(const cJSON *o, const char *k, double max, unsigned *out)
{
	const cJSON *v = sbx_json_get(o, k);

	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > max ||
	    v->valuedouble != (double)(unsigned)v->valuedouble)
		return -EINVAL;
	*out = (unsigned)v->valuedouble;
	return 0;
}

int sbx_sweep_plan_parse(const char *text, size_t len, sbx_sweep_plan **out, sbx_error *err)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = NULL;
	_cleanup_json_ cJSON *j = NULL;
	const cJSON *a, *v, *tags;
	size_t n;
	int r;

	r = sbx_json_parse(text, len, &j, err);
	if (r < 0)
		return r;
	if (!cJSON_IsObject(j))
		return sbx_error_set(err, -EINVAL, "not a JSON object");
	p = calloc(1, sizeof(*p));
	if (!p)
		return sbx_error_set(err, -ENOMEM, "out of memory");

	r = get_list(j, "tasks", SBX_SWEEP_MAX_TASKS, &a, &n, err);
	if (r < 0)
		return r;
	p->tasks = calloc(n, sizeof(*p->tasks));
	p->seedable = calloc(n, sizeof(*p->seedable));
	if (!p->tasks || !p->seedable)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	cJSON_ArrayForEach (v, a) {
		const char *name = sbx_json_get_string(v, "name", NULL);

		if (!name)
			return sbx_error_set(err, -EINVAL, "\"tasks\": an entry without a name");
		p->seedable[p->n_tasks] = sbx_json_get_bool(v, "seedable", false);
		p->tasks[p->n_tasks] = strdup(name);
		if (!p->tasks[p->n_tasks++])
			return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r = get_list(j, "agents", SBX_SWEEP_MAX_AGENTS, &a, &n, err);
	if (r < 0)
		return r;
	p->agents = calloc(n, sizeof(*p->agents));
	if (!p->agents)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	cJSON_ArrayForEach (v, a) {
		if (!cJSON_IsString(v))
			return sbx_error_set(err, -EINVAL, "\"agents\": expected strings");
		p->agents[p->n_agents] = strdup(v->valuestring);
		if (!p->agents[p->n_agents++])
			return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	if (get_count(j, "epochs", SBX_SWEEP_MAX_EPOCHS, &p->epochs) < 0 ||
	    get_count(j, "retries", 1000, &p->retries) < 0 || !sbx_json_get(j, "timeout_s") ||
	    sbx_limits_json_read(j, plan_timeout, SBX_ELEMENTSOF(plan_timeout), &p->limits))
		return sbx_error_set(err, -EINVAL, "\"epochs\", \"retries\", \"timeout_s\": bad");
	v = sbx_json_get(j, "seed_from");
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 0 || v->valuedouble > (double)SBX_TASK_SEED_MAX)
			return sbx_error_set(err, -EINVAL, "\"seed_from\": out of range");
		p->seeded = true;
		p->seed_from = (uint64_t)v->valuedouble;
	}
	a = sbx_json_get(j, "pass_at");
	if (!cJSON_IsArray(a))
		a = NULL;
	cJSON_ArrayForEach (v, a) {
		if (p->n_pass_at >= SBX_SWEEP_MAX_PASS_AT || !cJSON_IsNumber(v) ||
		    v->valuedouble < 1 || v->valuedouble > SBX_SWEEP_MAX_EPOCHS)
			return sbx_error_set(err, -EINVAL, "\"pass_at\": bad");
		p->pass_at[p->n_pass_at++] = (unsigned)v->valuedouble;
	}
	if (p->n_pass_at == 0)
		p->pass_at[p->n_pass_at++] = 1;
	tags = sbx_json_get(j, "tags");
	n = cJSON_IsObject(tags) ? (size_t)cJSON_GetArraySize(tags) : 0;
	if (n > 1024)
		return sbx_error_set(err, -EINVAL, "\"tags\": too many");
	p->tags = calloc(n ? n : 1, sizeof(*p->tags));
	if (!p->tags)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (n == 0)
		tags = NULL;
	cJSON_ArrayForEach (v, tags) {
		if (!cJSON_IsString(v) ||
		    asprintf(&p->tags[p->n_tags], "%s=%s", v->string, v->valuestring) < 0)
			return sbx_error_set(err, -EINVAL, "\"tags\": expected strings");
		p->n_tags++;
	}
	p->id = get_str0(j, "id");
	p->image = get_str0(j, "image");
	v = sbx_json_get(j, "limits");
	if (v) {
		unsigned bad =
			cJSON_IsObject(v)
				? sbx_limits_json_read(v, plan_limits, SBX_ELEMENTSOF(plan_limits),
						       &p->limits) |
					  sbx_limits_json_read(v, plan_seccomp,
							       SBX_ELEMENTSOF(plan_seccomp),
							       &p->limits)
				: ~0u;

		if (bad & ~(1u << SBX_LIMITS_CPUS))
			return sbx_error_set(err, -EINVAL, "\"limits\": bad");
		p->published = strcmp(sbx_json_get_string(v, "network", "none"), "published") == 0;
		if (bad)
			return sbx_error_set(err, -EINVAL, "\"limits\": bad cpus");
	}
	p->tasks_dir = get_str0(j, "tasks_dir");
	p->image_id = get_str0(j, "image_id");
	p->tasks_commit = get_str0(j, "tasks_commit");
	p->tasks_dirty = sbx_json_get_bool(j, "tasks_dirty", false);
	p->version = get_str0(j, "sandboxctl_version");
	p->created_at = (int64_t)sbx_json_get_number(j, "created_at", 0);
	r = sbx_sweep_plan_check(p, err);
	if (r < 0)
		return r;
	*out = TAKE_PTR(p);
	return 0;
}

int sbx_sweep_plan_write(const sbx_sweep_plan *p, const char *dir, sbx_error *err)
{
	_cleanup_free_ char *text = sbx_sweep_plan_json(p);

	if (!text)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return sbx_sweep__write_atomic(dir, "sweep.json", text, strlen(text), err);
}

int sbx_sweep_plan_read(const char *dir, sbx_sweep_plan **out, sbx_error *err)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	size_t len;
	int r;

	if (asprintf(&path, "%s/sweep.json", dir) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (access(path, F_OK) < 0)
		return sbx_error_set(err, -ENOENT, "'%s' is not a sweep directory (no sweep.json)",
				     dir);
	r = sbx_file_read_capped(AT_FDCWD, path, PLAN_MAX_BYTES, &text, &len, err);
	if (r < 0)
		return r;
	r = sbx_sweep_plan_parse(text, len, out, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "'%s'", path);
	return 0;
}
