/* SPDX-License-Identifier: MIT */
/*
 * Harbor task directories: task.toml (ECOSYSTEM-NOTES §3) into the task
 * model. What changes how or where the task runs is checked strictly
 * (unknown keys in [environment], [agent], [verifier] are errors, anything
 * asking for network is refused); [task] and [metadata] are descriptive and
 * taken as they come, so tasks written for Harbor load.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sbx/cleanup.h"
#include "sbx/path.h"
#include "sbx/task.h"
#include "task_schema.h"
#include "toml.h"

#define TOML_NAME "task.toml"

bool sbx_task_is_harbor_file(const char *path)
{
	size_t n = strlen(path), k = strlen(TOML_NAME);

	return n >= k && strcmp(path + n - k, TOML_NAME) == 0 && (n == k || path[n - k - 1] == '/');
}

static void harbor_free(sbx_task_harbor *h)
{
	if (h)
		sbx_free_all(h->environment, h->docker_image, h->solution, h->name, h->workdir, h);
}

const char *sbx_task_harbor_workdir_refusal(const char *wd)
{
	/* The sandbox's mounts (a tmpfs there would cover or be covered by them), and where
	 * the verifier's programs and loader read (a planted ld.so.preload, a PATH shim). */
	static const char *const at_or_under[] = {
		"/proc",	 "/sys",	 "/dev",	   "/tmp",
		"/run",		 "/tests",	 "/logs",	   "/opt/sandboxctl",
		"/etc",		 "/bin",	 "/sbin",	   "/lib",
		"/lib32",	 "/lib64",	 "/libx32",	   "/boot",
		"/usr/bin",	 "/usr/sbin",	 "/usr/lib",	   "/usr/lib32",
		"/usr/lib64",	 "/usr/libexec", "/usr/local/bin", "/usr/local/sbin",
		"/usr/local/lib"};
	static const char *const exactly[] = {"/opt", "/usr", "/usr/local", "/var"};

	if (wd[0] != '/')
		return "not an absolute path";
	if (strcmp(wd, "/") == 0)
		return "the root cannot be the workspace";
	if (strlen(wd) > SBX_TASK_HARBOR_WORKDIR_MAX)
		return "too long";
	for (const char *c = wd + 1; *c; c = c[strcspn(c, "/")] ? c + strcspn(c, "/") + 1 : "") {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return "not a plain path (an empty, '.' or '..' component)";
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)c[i]) && !strchr("._-", c[i]))
				return "only letters, digits, '.', '_' and '-' in its components";
	}
	for (size_t i = 0; i < SBX_ELEMENTSOF(at_or_under); i++)
		if (sbx_path_within(wd, at_or_under[i]))
			return "the sandbox's own mount or a system directory";
	for (size_t i = 0; i < SBX_ELEMENTSOF(exactly); i++)
		if (strcmp(wd, exactly[i]) == 0)
			return "the sandbox's own mount or a system directory";
	return NULL;
}

/* wd (n bytes) as the task's workdir, one trailing '/' dropped; *why when refused. */
static int set_workdir(sbx_task_harbor *h, const char *wd, size_t n, const char **why)
{
	char *w;

	if (n > 1 && wd[n - 1] == '/')
		n--;
	w = strndup(wd, n);
	if (!w)
		return -ENOMEM;
	*why = sbx_task_harbor_workdir_refusal(w);
	if (*why) {
		free(w);
		return -EINVAL;
	}
	free(h->workdir);
	h->workdir = w;
	return 0;
}

/* A timeout in seconds: a number (Harbor writes 600.0) from 1 s to a day. */
static int seconds(const sbx_schema *s, const sbx_ynode *v, const char *key, uint32_t *out)
{
	double d;
	int r = sbx_schema__number(s, v, key, 1, 86400, &d);

	if (r >= 0)
		*out = (uint32_t)(d + 0.5);
	return r;
}

/* network_mode: only "no-network" is what a sandbox is; anything else asks for network. */
static int no_network(const sbx_schema *s, const sbx_ynode *v, const char *key)
{
	if (v->kind != SBX_YNODE_SCALAR || v->plain || strcmp(v->value, "no-network") != 0)
		return sbx_schema__fail(s, v,
					"%s '%s' asks for network; sandboxes have none (use "
					"\"no-network\")",
					key, v->kind == SBX_YNODE_SCALAR ? v->value : "?");
	return 0;
}

/* A key whose only accepted value is "empty" (an empty table or list, false, 0). */
static int empty_only(const sbx_schema *s, const sbx_ynode *v, const char *key, const char *why)
{
	bool empty = v->kind != SBX_YNODE_SCALAR ? v->n == 0
						 : v->plain && (strcmp(v->value, "false") == 0 ||
								strcmp(v->value, "0") == 0);
	return empty ? 0 : sbx_schema__fail(s, v, "%s: %s", key, why);
}

/* [environment] workdir: wins over the Dockerfile's WORKDIR. */
static int declared_workdir(const sbx_schema *s, const sbx_ynode *v, sbx_task_harbor *h)
{
	const char *why = "not a string";
	int r = v->kind == SBX_YNODE_SCALAR && !v->plain
			? set_workdir(h, v->value, strlen(v->value), &why)
			: -EINVAL;

	if (r == -ENOMEM)
		return sbx_error_set(s->err, r, "out of memory");
	if (r < 0)
		return sbx_schema__fail(s, v, "environment.workdir '%.200s': %s",
					v->kind == SBX_YNODE_SCALAR ? v->value : "?", why);
	return 0;
}

static int parse_environment(const sbx_schema *s, const sbx_ynode *m, sbx_task *t)
{
	static const char *const keys[] = {
		"build_timeout_sec", "docker_image",   "os",	    "cpus",
		"memory_mb",	     "storage_mb",     "gpus",	    "network_mode",
		"allowed_hosts",     "allow_internet", "env",	    "workdir",
		"healthcheck",	     "mcp_servers",    "gpu_types", NULL};
	int r = sbx_schema__map(s, m, "environment", keys);

	for (size_t i = 0; r >= 0 && i < m->n; i++) {
		const char *k = m->keys[i]->value;
		const sbx_ynode *v = m->items[i];
		double d;

		if (strcmp(k, "build_timeout_sec") == 0)
			r = seconds(s, v, "environment.build_timeout_sec",
				    &t->harbor->build_timeout_s);
		else if (strcmp(k, "docker_image") == 0)
			r = sbx_schema__string(s, v, "environment.docker_image", 255,
					       &t->harbor->docker_image);
		else if (strcmp(k, "os") == 0 &&
			 (v->kind != SBX_YNODE_SCALAR || strcmp(v->value, "linux") != 0))
			r = sbx_schema__fail(s, v, "environment.os: only \"linux\" is supported");
		else if (strcmp(k, "cpus") == 0 &&
			 (r = sbx_schema__number(s, v, "environment.cpus", 0.01, 64, &d)) >= 0)
			t->limits.cpus = d;
		else if (strcmp(k, "memory_mb") == 0 &&
			 (r = sbx_schema__number(s, v, "environment.memory_mb", 16, 1 << 20, &d)) >=
				 0)
			t->limits.memory = (uint64_t)d << 20;
		else if (strcmp(k, "storage_mb") == 0)
			r = sbx_schema__number(s, v, "environment.storage_mb", 0, 1 << 24, &d);
		else if (strcmp(k, "network_mode") == 0)
			r = no_network(s, v, "environment.network_mode");
		else if (strcmp(k, "allowed_hosts") == 0 || strcmp(k, "allow_internet") == 0)
			r = empty_only(s, v, k, "asks for network; sandboxes have none");
		else if (strcmp(k, "gpus") == 0 || strcmp(k, "gpu_types") == 0)
			r = empty_only(s, v, k, "GPUs are not supported");
		else if (strcmp(k, "workdir") == 0)
			r = declared_workdir(s, v, t->harbor);
		else if (strcmp(k, "env") == 0 || strcmp(k, "healthcheck") == 0 ||
			 strcmp(k, "mcp_servers") == 0)
			r = empty_only(s, v, k, "not supported");
	}
	return r;
}

static int parse_agent(const sbx_schema *s, const sbx_ynode *m, sbx_task *t)
{
	static const char *const keys[] = {"timeout_sec", "user", "network_mode", NULL};
	int r = sbx_schema__map(s, m, "agent", keys);

	for (size_t i = 0; r >= 0 && i < m->n; i++) {
		const char *k = m->keys[i]->value;

		if (strcmp(k, "timeout_sec") == 0)
			r = seconds(s, m->items[i], "agent.timeout_sec", &t->limits.timeout_s);
		else if (strcmp(k, "network_mode") == 0)
			r = no_network(s, m->items[i], "agent.network_mode");
		/* user: the agent always runs as the sandbox's agent uid. */
	}
	return r;
}

static int parse_verifier(const sbx_schema *s, const sbx_ynode *m, sbx_task *t)
{
	static const char *const keys[] = {"timeout_sec", "env", "user", "environment_mode", NULL};
	int r = sbx_schema__map(s, m, "verifier", keys);

	for (size_t i = 0; r >= 0 && i < m->n; i++) {
		const char *k = m->keys[i]->value;

		if (strcmp(k, "timeout_sec") == 0)
			r = seconds(s, m->items[i], "verifier.timeout_sec",
				    &t->harbor->verifier_timeout_s);
		else if (strcmp(k, "env") == 0)
			r = empty_only(s, m->items[i], "verifier.env", "not supported");
		/* environment_mode: the verifier always gets a sandbox of its own. */
	}
	return r;
}

static int parse_root(const sbx_schema *s, const sbx_ynode *root, sbx_task *t)
{
	static const char *const keys[] = {
		"schema_version", "version",	 "task",
		"metadata",	  "environment", "agent",
		"verifier",	  "steps",	 "multi_step_reward_strategy",
		"source",	  NULL};
	int r = sbx_schema__map(s, root, "", keys);

	for (size_t i = 0; r >= 0 && i < root->n; i++) {
		const char *k = root->keys[i]->value;
		const sbx_ynode *v = root->items[i];

		if (strcmp(k, "steps") == 0 || strcmp(k, "multi_step_reward_strategy") == 0)
			r = sbx_schema__fail(s, root->keys[i],
					     "multi-step tasks ([[steps]]) are not supported");
		else if ((strcmp(k, "task") == 0 || strcmp(k, "metadata") == 0) &&
			 v->kind != SBX_YNODE_MAP)
			r = sbx_schema__fail(s, v, "[%s] must be a table", k);
		else if (strcmp(k, "environment") == 0)
			r = parse_environment(s, v, t);
		else if (strcmp(k, "agent") == 0)
			r = parse_agent(s, v, t);
		else if (strcmp(k, "verifier") == 0)
			r = parse_verifier(s, v, t);
	}
	if (r >= 0) {
		const sbx_ynode *task = sbx_ytree__get(root, "task");
		const sbx_ynode *name = sbx_ytree__get(task, "name");

		if (name && name->kind == SBX_YNODE_SCALAR && !name->plain)
			r = sbx_schema__string(s, name, "task.name", 200, &t->harbor->name);
	}
	return r;
}

/* The id: the directory's name, lowercased, other characters as '-'. */
static char *harbor_id(const char *dir)
{
	const char *base = strrchr(dir, '/');
	char id[SBX_TASK_MAX_ID + 1];
	size_t n = 0;

	base = base && base[1] ? base + 1 : dir;
	for (; *base && n < SBX_TASK_MAX_ID; base++) {
		char c = (char)tolower((unsigned char)*base);

		id[n++] = strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", c) && c ? c : '-';
	}
	id[n] = '\0';
	while (n > 0 && (id[0] == '-' || id[0] == '_'))
		memmove(id, id + 1, n--);
	return strdup(sbx_task_id_valid(id) ? id : "harbor-task");
}

/* A regular file rel beneath dir (no symlink followed): its contents or just whether. */
static int need_file(const char *dir, const char *rel, size_t max, char **text, sbx_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r = sbx_path_read_beneath(dir, rel, max, &buf, &len, err);

	if (r == -ENOENT)
		return sbx_error_replace(
			err, r, "%s: %s is missing (a Harbor task directory needs it)", dir, rel);
	if (r < 0)
		return sbx_error_prefix(err, r, "%s/%s", dir, rel);
	if (text)
		*text = TAKE_PTR(buf);
	return 0;
}

/*
 * environment/Dockerfile exists, and the last stage's last WORKDIR (if any,
 * and unless task.toml declares one) is the workdir: the workspace, where
 * the tests look for the agent's work. (A base image's own WORKDIR is read
 * from the built image, at launch.)
 */
static int check_dockerfile(const char *dir, sbx_task_harbor *h, sbx_error *err)
{
	_cleanup_free_ char *text = NULL;
	const char *p, *last = NULL, *why = NULL;
	unsigned line = 0, last_line = 0;
	int r = need_file(dir, "environment/Dockerfile", SBX_TASK_HARBOR_INSTRUCTION_MAX, &text,
			  err);

	for (p = text; r >= 0 && p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		line++;
		p += strspn(p, " \t");
		/* A new stage starts without one of its own (it inherits its base's). */
		if (strncasecmp(p, "FROM", 4) == 0 && (p[4] == ' ' || p[4] == '\t'))
			last = NULL;
		if (strncasecmp(p, "WORKDIR", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
			last = p + 7 + strspn(p + 7, " \t");
			last_line = line;
		}
	}
	if (r >= 0 && last && !h->workdir) {
		size_t n = strcspn(last, "\r\n");

		while (n > 0 && (last[n - 1] == ' ' || last[n - 1] == '\t'))
			n--;
		/* The builder unquotes WORKDIR "/app" (no variables: '$' is refused below). */
		if (n >= 2 && (last[0] == '"' || last[0] == '\'') && last[n - 1] == last[0]) {
			last++;
			n -= 2;
		}
		r = set_workdir(h, last, n, &why);
		if (r == -ENOMEM)
			return sbx_error_set(err, r, "out of memory");
		if (r < 0)
			r = sbx_error_set(
				err, r,
				"%s/environment/Dockerfile:%u: WORKDIR '%.*s': %s, cannot "
				"be the task's workdir (docs/harbor.md)",
				dir, last_line, (int)(n > 200 ? 200 : n), last, why);
	}
	return r;
}

int sbx_task_harbor_load(const char *path, sbx_task **out, sbx_error *err)
{
	_cleanup_(sbx_ytree__freep) sbx_ynode *root = NULL;
	_cleanup_free_ char *text = NULL;
	sbx_schema s = {.name = path, .err = err};
	const char *slash = strrchr(path, '/');
	sbx_task *t;
	size_t len;
	int r = sbx_task__read_file(path, &text, &len, err);

	if (r >= 0)
		r = sbx_toml__parse(path, text, len, &root, err);
	if (r < 0)
		return r;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->harbor = calloc(1, sizeof(*t->harbor)))) {
		free(t);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	t->harbor->verifier_timeout_s = SBX_TASK_HARBOR_TIMEOUT_S;
	t->harbor->build_timeout_s = SBX_TASK_HARBOR_TIMEOUT_S;
	t->dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	t->path = strdup(path);
	t->harbor->environment = strdup("environment");
	t->grading.cases = NULL;
	if (!t->dir || !t->path || !t->harbor->environment || !(t->id = harbor_id(t->dir))) {
		sbx_task_free(t);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r = parse_root(&s, root, t);
	if (r >= 0)
		r = need_file(t->dir, "instruction.md", SBX_TASK_HARBOR_INSTRUCTION_MAX, &t->prompt,
			      err);
	if (r >= 0)
		r = need_file(t->dir, "tests/test.sh", SBX_TASK_HARBOR_INSTRUCTION_MAX, NULL, err);
	if (r >= 0 && !t->harbor->docker_image)
		r = check_dockerfile(t->dir, t->harbor, err);
	if (r >= 0 &&
	    need_file(t->dir, "solution/solve.sh", SBX_TASK_HARBOR_INSTRUCTION_MAX, NULL, NULL) >=
		    0 &&
	    !(t->harbor->solution = strdup("solution/solve.sh")))
		r = sbx_error_set(err, -ENOMEM, "out of memory");
	if (r >= 0 && !(t->title = strdup(t->harbor->name ? t->harbor->name : t->id)))
		r = sbx_error_set(err, -ENOMEM, "out of memory");
	if (r < 0) {
		sbx_task_free(t);
		return r;
	}
	t->difficulty = SBX_TASK_MEDIUM;
	*out = t;
	return 0;
}

void sbx_task__harbor_free(sbx_task_harbor *h)
{
	harbor_free(h);
}
