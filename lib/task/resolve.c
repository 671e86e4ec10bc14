/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sbx/cleanup.h"
#include "sbx/suggest.h"
#include "sbx/task.h"

#define MAX_TASKS 4096

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *sbx_task_dir_default(void)
{
	const char *env = getenv("SBX_TASKS_DIR");

	if (env && env[0])
		return strdup(env);
	if (is_dir("tasks"))
		return strdup("tasks");
#ifdef SBX_TASKS_INSTALL_DIR
	if (is_dir(SBX_TASKS_INSTALL_DIR))
		return strdup(SBX_TASKS_INSTALL_DIR);
#endif
#ifdef SBX_TASKS_SOURCE_DIR
	if (is_dir(SBX_TASKS_SOURCE_DIR))
		return strdup(SBX_TASKS_SOURCE_DIR);
#endif
	return strdup("tasks");
}

/* dir/task.yaml, else the reference's dir/task.json, else Harbor's task.toml; NULL on OOM. */
static char *task_file_in(const char *dir)
{
	static const char *const names[] = {"task.json", "task.toml"};
	char *file;

	if (asprintf(&file, "%s/task.yaml", dir) < 0)
		return NULL;
	for (size_t i = 0; i < 2 && !is_file(file); i++) {
		free(file);
		if (asprintf(&file, "%s/%s", dir, names[i]) < 0)
			return NULL;
		if (i == 1 && !is_file(file)) {
			free(file);
			/* For the message: the file we look for first. */
			if (asprintf(&file, "%s/task.yaml", dir) < 0)
				return NULL;
		}
	}
	return file;
}

bool sbx_task_dir_is_task(const char *dir)
{
	_cleanup_free_ char *file = task_file_in(dir);

	return file && is_file(file);
}

static int path_to_yaml(const char *path, char **out, sbx_error *err)
{
	char *file;

	if (is_dir(path)) {
		if (!(file = task_file_in(path)))
			return sbx_error_set(err, -ENOMEM, "out of memory");
	} else {
		file = strdup(path);
		if (!file)
			return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	if (!is_file(file)) {
		sbx_error_set(err, -ENOENT, "'%s': no such task file", file);
		free(file);
		return -ENOENT;
	}
	*out = file;
	return 0;
}

/* "not found", with the closest task's name when it looks like a typo of one. */
static int task_not_found(const char *tasks_dir, const char *name, sbx_error *err)
{
	char **names = NULL;
	const char *guess = NULL;
	size_t n = 0;
	int r;

	if (sbx_task_list(tasks_dir, &names, &n, NULL) == 0)
		guess = sbx_suggest(name, (const char *const *)names, n);
	if (guess)
		r = sbx_error_set(err, -ENOENT, "task '%s' not found in '%s'; did you mean '%s'?",
				  name, tasks_dir, guess);
	else
		r = sbx_error_set(err, -ENOENT, "task '%s' not found in '%s'", name, tasks_dir);
	sbx_task_names_free(names);
	return r;
}

int sbx_task_resolve(const char *tasks_dir, const char *name_or_path, char **out, sbx_error *err)
{
	_cleanup_free_ char *deflt = NULL, *file = NULL, *dir = NULL;

	if (strchr(name_or_path, '/') || !sbx_task_id_valid(name_or_path))
		return path_to_yaml(name_or_path, out, err);
	if (!tasks_dir) {
		deflt = sbx_task_dir_default();
		if (!deflt)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		tasks_dir = deflt;
	}
	if (asprintf(&dir, "%s/%s", tasks_dir, name_or_path) < 0 || !(file = task_file_in(dir)))
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (is_file(file)) {
		*out = TAKE_PTR(file);
		return 0;
	}
	/* A name that is also a local path ("mytask" in the working directory). */
	if (is_dir(name_or_path) || is_file(name_or_path))
		return path_to_yaml(name_or_path, out, err);
	return task_not_found(tasks_dir, name_or_path, err);
}

void sbx_task_names_free(char **names)
{
	sbx_strv_free(names);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sbx_task_list(const char *tasks_dir, char ***out, size_t *n_out, sbx_error *err)
{
	DIR *d = opendir(tasks_dir);
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	int r = 0;

	if (!d)
		return sbx_error_set(err, -errno, "tasks directory '%s': %s", tasks_dir,
				     strerror(errno));
	names = malloc(sizeof(*names));
	if (!names) {
		closedir(d);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	names[0] = NULL; /* NULL-terminated at every step, so a failure frees what it holds */
	while ((de = readdir(d))) {
		_cleanup_free_ char *file = NULL, *sub = NULL;
		char **grown;

		if (!sbx_task_id_valid(de->d_name))
			continue;
		if (asprintf(&sub, "%s/%s", tasks_dir, de->d_name) < 0 ||
		    !(file = task_file_in(sub))) {
			r = -ENOMEM;
			break;
		}
		if (!is_file(file))
			continue;
		if (n >= MAX_TASKS) {
			r = sbx_error_set(err, -E2BIG, "tasks directory '%s': more than %d tasks",
					  tasks_dir, MAX_TASKS);
			break;
		}
		grown = realloc(names, (n + 2) * sizeof(*names));
		if (!grown) {
			r = -ENOMEM;
			break;
		}
		names = grown;
		names[n + 1] = NULL;
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (r < 0) {
		sbx_task_names_free(names);
		return r == -ENOMEM ? sbx_error_set(err, r, "out of memory") : r;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	if (n_out)
		*n_out = n;
	return 0;
}
