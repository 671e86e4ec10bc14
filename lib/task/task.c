/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/path.h"
#include "sbx/task.h"
#include "task_schema.h"

#define TITLE_MAX  256
#define PROMPT_MAX (64 * 1024)

static const char *const task_keys[] = {"id",	     "title",	    "difficulty", "prompt", "files",
					"outputs",   "oracle",	    "grading",	  "limits", "gui",
					"generator", "libreoffice", "tools",	  "image",  NULL};
static const char *const limit_keys[] = {"deadline", "memory", "cpus", "pids", NULL};
static const char *const difficulties[] = {"easy", "medium", "hard", NULL};

const char *sbx_task_difficulty_name(sbx_task_difficulty d)
{
	return d <= SBX_TASK_HARD ? difficulties[d] : "unknown";
}

static const char *const toolsets[] = {"all", "gui", NULL};

const char *sbx_task_toolset_name(sbx_task_toolset t)
{
	return t <= SBX_TASK_TOOLS_GUI ? toolsets[t] : "unknown";
}

bool sbx_task_id_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > SBX_TASK_MAX_ID || s[0] == '-' || s[0] == '_')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

sbx_task *sbx_task_free(sbx_task *t)
{
	if (!t)
		return NULL;
	sbx_free_all(t->dir, t->path, t->id, t->title, t->prompt);
	sbx_strv_free(t->files);
	sbx_strv_free(t->outputs);
	sbx_strv_free(t->oracles);
	sbx_grading_spec_clear(&t->grading);
	free(t->generator);
	free(t->image);
	sbx_task__harbor_free(t->harbor);
	free(t);
	return NULL;
}

SBX_DEFINE_CLEANUP(sbx_task, sbx_task_free)

int sbx_task__read_file(const char *path, char **out, size_t *len_out, sbx_error *err)
{
	return sbx_file_read_capped(AT_FDCWD, path, SBX_YTREE_MAX_INPUT, out, len_out, err);
}

/* "2g", "512MiB", "1073741824" -> bytes (binary multiples). */
static int parse_memory(const sbx_schema *s, const sbx_ynode *node, uint64_t *out)
{
	static const char *const units = "kmgt";
	const uint64_t min = 4ull << 20, max = 1ull << 40;
	const char *p;
	double v = -1, mult = 1;
	char *end = NULL;

	if (node->kind == SBX_YNODE_SCALAR && node->len && node->value[0] >= '0' &&
	    node->value[0] <= '9') {
		errno = 0;
		v = strtod(node->value, &end);
		if (errno)
			v = -1;
	}
	if (v >= 0 && *end) {
		p = strchr(units, end[0] | 0x20);
		if (!p || !end[0]) {
			v = -1;
		} else {
			mult = ldexp(1, 10 * (int)(p - units + 1));
			end++;
			if (strcmp(end, "") != 0 && strcasecmp(end, "b") != 0 &&
			    strcasecmp(end, "ib") != 0)
				v = -1;
		}
	}
	v *= mult;
	if (!(v >= (double)min && v <= (double)max))
		return sbx_schema__fail(s, node,
					"limits.memory must be a size between 4m and 1t (bytes, or "
					"with a k/m/g/t suffix)");
	*out = (uint64_t)v;
	return 0;
}

static int parse_limits(const sbx_schema *s, const sbx_ynode *node, sbx_limits *l)
{
	const sbx_ynode *v;
	int64_t i64;
	int r;

	r = sbx_schema__map(s, node, "limits", limit_keys);
	if (r < 0)
		return r;
	if ((v = sbx_ytree__get(node, "deadline"))) {
		r = sbx_schema__int(s, v, "limits.deadline", 1, 7 * 24 * 3600, &i64);
		if (r < 0)
			return r;
		l->timeout_s = (uint32_t)i64;
	}
	if ((v = sbx_ytree__get(node, "memory"))) {
		r = parse_memory(s, v, &l->memory);
		if (r < 0)
			return r;
	}
	if ((v = sbx_ytree__get(node, "cpus"))) {
		r = sbx_schema__number(s, v, "limits.cpus", 0.01, 1024, &l->cpus);
		if (r < 0)
			return r;
	}
	if ((v = sbx_ytree__get(node, "pids"))) {
		r = sbx_schema__int(s, v, "limits.pids", 8, 1 << 22, &i64);
		if (r < 0)
			return r;
		l->pids = (uint32_t)i64;
	}
	return 0;
}

/* Each file must be a regular file beneath dir (no symlink escapes). */
static int check_files(const sbx_schema *s, const sbx_ynode *node, const char *key, const char *dir,
		       char **files)
{
	_cleanup_close_ int dfd = -1;

	if (!dir)
		return 0;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return sbx_error_set(s->err, -errno, "'%s': %s", dir, strerror(errno));
	for (size_t i = 0; files[i]; i++) {
		const sbx_ynode *at = node->kind == SBX_YNODE_SEQ ? node->items[i] : node;
		sbx_error ferr = SBX_ERROR_INIT;
		_cleanup_close_ int fd = -1;
		struct stat st;

		fd = sbx_path_open_beneath(dfd, files[i], O_RDONLY | O_NOCTTY | O_NONBLOCK, 0,
					   false, &ferr);
		if (fd < 0)
			return sbx_schema__fail(s, at,
						"%s: '%s' not found in the task directory (%s)",
						key, files[i], ferr.msg);
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			return sbx_schema__fail(s, at, "%s: '%s' is not a regular file", key,
						files[i]);
	}
	return 0;
}

static bool strv_contains(char **v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

static int unique_basenames(const sbx_schema *s, const sbx_ynode *node, const char *key, char **v)
{
	for (size_t i = 0; v[i]; i++)
		for (size_t j = 0; j < i; j++) {
			const char *a = strrchr(v[i], '/'), *b = strrchr(v[j], '/');

			if (strcmp(a ? a + 1 : v[i], b ? b + 1 : v[j]) == 0)
				return sbx_schema__fail(
					s, node->kind == SBX_YNODE_SEQ ? node->items[i] : node,
					"%s: two entries are named '%s'", key, a ? a + 1 : v[i]);
		}
	return 0;
}

/* Cases name outputs and oracles the task declares; one output/oracle or explicit cases. */
static int check_cases(const sbx_schema *s, const sbx_ynode *root, sbx_task *t)
{
	const sbx_ynode *grading = sbx_ytree__get(root, "grading");
	const sbx_ynode *cases = sbx_ytree__get(grading, "cases");

	for (size_t i = 0; i < t->grading.n_cases; i++) {
		const sbx_grading_case *c = &t->grading.cases[i];
		const sbx_ynode *at = cases ? cases->items[i] : (grading ? grading : root);

		if (c->output && !strv_contains(t->outputs, c->output))
			return sbx_schema__fail(s, sbx_ytree__get(at, "output"),
						"grading.cases[%zu].output: '%s' is not among the "
						"task's outputs",
						i, c->output);
		if (c->oracle && !strv_contains(t->oracles, c->oracle))
			return sbx_schema__fail(s, sbx_ytree__get(at, "oracle"),
						"grading.cases[%zu].oracle: '%s' is not among the "
						"task's oracle files",
						i, c->oracle);
		if ((!c->output && t->n_outputs > 1) || (!c->oracle && t->n_oracles > 1))
			return sbx_schema__fail(s, at,
						"grading: with several outputs or oracle files, "
						"every case must name its output and oracle");
	}
	return 0;
}

int sbx_task_parse(const char *name, const char *dir, const char *text, size_t len, sbx_task **out,
		   sbx_error *err)
{
	_cleanup_(sbx_ytree__freep) sbx_ynode *root = NULL;
	_cleanup_(sbx_task_freep) sbx_task *t = NULL;
	sbx_schema s = {.name = name, .err = err};
	static const char *const required[] = {"id",	  "title",  "difficulty", "prompt",
					       "outputs", "oracle", NULL};
	const sbx_ynode *v;
	int r, d;

	r = sbx_ytree__parse(name, text, len, &root, err);
	if (r < 0)
		return r;
	r = sbx_schema__map(&s, root, "", task_keys);
	if (r < 0)
		return r;
	for (size_t i = 0; required[i]; i++)
		if (!sbx_ytree__get(root, required[i]))
			return sbx_schema__fail(&s, root, "missing required key '%s'", required[i]);
	t = calloc(1, sizeof(*t));
	if (!t)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (dir && !(t->dir = strdup(dir)))
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (!(t->path = strdup(name)))
		return sbx_error_set(err, -ENOMEM, "out of memory");

	v = sbx_ytree__get(root, "id");
	r = sbx_schema__string(&s, v, "id", SBX_TASK_MAX_ID + 1, &t->id);
	if (r < 0)
		return r;
	if (!sbx_task_id_valid(t->id))
		return sbx_schema__fail(&s, v,
					"id must be 1..64 characters of a-z, 0-9, '_' and '-', "
					"starting with a letter or digit");
	r = sbx_schema__string(&s, sbx_ytree__get(root, "title"), "title", TITLE_MAX, &t->title);
	if (r < 0)
		return r;
	r = sbx_schema__enum(&s, sbx_ytree__get(root, "difficulty"), "difficulty", difficulties,
			     &d);
	if (r < 0)
		return r;
	t->difficulty = (sbx_task_difficulty)d;
	r = sbx_schema__string(&s, sbx_ytree__get(root, "prompt"), "prompt", PROMPT_MAX,
			       &t->prompt);
	if (r < 0)
		return r;

	if ((v = sbx_ytree__get(root, "files"))) {
		r = sbx_schema__paths(&s, v, "files", SBX_TASK_MAX_FILES, &t->files, &t->n_files);
		if (r >= 0)
			r = unique_basenames(&s, v, "files", t->files);
		if (r >= 0)
			r = check_files(&s, v, "files", dir, t->files);
		if (r < 0)
			return r;
	}
	v = sbx_ytree__get(root, "outputs");
	r = sbx_schema__paths(&s, v, "outputs", SBX_TASK_MAX_FILES, &t->outputs, &t->n_outputs);
	if (r < 0)
		return r;
	v = sbx_ytree__get(root, "oracle");
	r = sbx_schema__paths(&s, v, "oracle", SBX_TASK_MAX_FILES, &t->oracles, &t->n_oracles);
	if (r >= 0)
		r = check_files(&s, v, "oracle", dir, t->oracles);
	if (r < 0)
		return r;

	v = sbx_ytree__get(root, "grading");
	if (v) {
		r = sbx_grading__parse_node(&s, v, "grading", &t->grading);
	} else {
		/* No grading section: the defaults, as a one-node empty mapping would give. */
		sbx_ynode empty = {.kind = SBX_YNODE_MAP, .line = root->line, .col = root->col};

		r = sbx_grading__parse_node(&s, &empty, "grading", &t->grading);
	}
	if (r >= 0)
		r = check_cases(&s, root, t);
	if (r < 0)
		return r;

	if ((v = sbx_ytree__get(root, "limits"))) {
		r = parse_limits(&s, v, &t->limits);
		if (r < 0)
			return r;
	}
	if ((v = sbx_ytree__get(root, "gui"))) {
		r = sbx_schema__bool(&s, v, "gui", &t->gui);
		if (r < 0)
			return r;
	}
	if ((v = sbx_ytree__get(root, "tools"))) {
		r = sbx_schema__enum(&s, v, "tools", toolsets, &d);
		if (r < 0)
			return r;
		t->tools = (sbx_task_toolset)d;
		if (t->tools == SBX_TASK_TOOLS_GUI && !t->gui)
			return sbx_schema__fail(&s, v, "tools: gui needs gui: true (the desktop)");
	}
	if ((v = sbx_ytree__get(root, "libreoffice"))) {
		r = sbx_schema__bool(&s, v, "libreoffice", &t->libreoffice);
		if (r < 0)
			return r;
	}
	/* Any linux/amd64 image (ours or not: the any-image bundle), checked at launch. */
	if ((v = sbx_ytree__get(root, "image"))) {
		r = sbx_schema__string(&s, v, "image", 256, &t->image);
		if (r < 0)
			return r;
		if (t->gui || t->libreoffice)
			return sbx_schema__fail(&s, v,
						"image: a task with gui or libreoffice runs on "
						"sandboxctl's full image; drop one of them");
	}
	if ((v = sbx_ytree__get(root, "generator"))) {
		r = sbx_task__parse_generator(&s, v, dir, t);
		if (r < 0)
			return r;
	}
	*out = TAKE_PTR(t);
	return 0;
}

int sbx_task_load(const char *path, sbx_task **out, sbx_error *err)
{
	_cleanup_free_ char *file = NULL, *dir = NULL, *text = NULL;
	struct stat st;
	size_t len;
	char *slash;
	int r;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (asprintf(&file, "%s/task.yaml", path) < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		if (access(file, F_OK) < 0) {
			free(file);
			if (asprintf(&file, "%s/task.json", path) < 0)
				return sbx_error_set(err, -ENOMEM, "out of memory");
			if (access(file, F_OK) < 0) {
				free(file);
				if (asprintf(&file, "%s/task.toml", path) < 0)
					return sbx_error_set(err, -ENOMEM, "out of memory");
			}
			if (access(file, F_OK) < 0)
				return sbx_error_set(err, -ENOENT,
						     "'%s': no task.yaml, task.json or task.toml "
						     "there",
						     path);
		}
	} else if (!(file = strdup(path))) {
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	dir = strdup(file);
	if (!dir)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (sbx_task_is_harbor_file(file))
		return sbx_task_harbor_load(file, out, err);
	if (sbx_task_is_reference_file(file)) {
		sbx_task *t = NULL;

		r = sbx_task_reference_to_yaml(file, 0, &text, err);
		if (r >= 0)
			r = sbx_task_parse(file, dir, text, strlen(text), &t, err);
		if (r < 0)
			return r;
		t->reference = true;
		*out = t;
		return 0;
	}
	r = sbx_task__read_file(file, &text, &len, err);
	if (r < 0)
		return r;
	return sbx_task_parse(file, dir, text, len, out, err);
}
