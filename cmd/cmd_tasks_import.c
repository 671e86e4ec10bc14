/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl tasks import PATH --out DIR: a reference task folder (task.json,
 * starting_files/, oracle/) becomes one of ours: DIR/task.yaml, written by
 * the same mapping `run` uses on task.json, plus copies of the files it names.
 * With --answer-ranges the grading becomes ours: the cells the oracle adds,
 * and the given cells gated as unchanged.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sbx/grade.h"
#include "sbx/file.h"
#include "sbx/path.h"
#include "sbx/task.h"

#define MAX_TASK_FILE (256u << 20)

static int copy_into(const sbx_task *t, const char *rel, const char *out, sbx_error *err)
{
	_cleanup_free_ char *src = NULL, *data = NULL;
	size_t len;
	int r;

	if (asprintf(&src, "%s/%s", t->dir, rel) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_file_read_capped(AT_FDCWD, src, MAX_TASK_FILE, &data, &len, err);
	if (r < 0)
		return r;
	return sbx_path_write_beneath(out, rel, data, len, err);
}

/* An existing empty directory is fine (mkdir -p habits); anything in it is the user's. */
static int make_out(const char *out, sbx_error *err)
{
	_cleanup_free_ char *yaml = NULL;

	if (mkdir(out, 0755) == 0)
		return 0;
	if (errno != EEXIST)
		return sbx_error_set(err, -errno, "'%s': %s", out, strerror(errno));
	if (asprintf(&yaml, "%s/task.yaml", out) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (access(yaml, F_OK) == 0)
		return sbx_error_set(err, -EEXIST, "'%s' already holds a task.yaml", out);
	return 0;
}

/*
 * The imported task's id: id, else the name of the folder it goes to, so
 * `run --task NAME` reports as NAME (the reference's own id would not).
 */
static int set_id(char **yaml, const char *out, const char *id, sbx_error *err)
{
	_cleanup_free_ char *base = NULL, *text = NULL;
	const char *line = strstr(*yaml, "\nid: "), *eol;
	size_t len = strlen(out);

	while (len > 1 && out[len - 1] == '/')
		len--;
	base = strndup(out, len);
	if (!base)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (!id)
		id = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
	if (!sbx_task_id_valid(id))
		return sbx_error_set(
			err, -EINVAL,
			"task id '%s': use letters, digits, '_' and '-' (give --id ID)", id);
	assert(line);
	eol = strchr(line + 1, '\n');
	if (asprintf(&text, "%.*s\nid: %s%s", (int)(line - *yaml), *yaml, id, eol ? eol : "") < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	free(*yaml);
	*yaml = TAKE_PTR(text);
	return 0;
}

int cmd_tasks__import(const char *path, const char *out, const char *id, unsigned flags)
{
	sbx_error err = SBX_ERROR_INIT, note = SBX_ERROR_INIT;
	_cleanup_free_ char *yaml = NULL;
	sbx_task *t = NULL, *imported = NULL;
	int r;

	r = sbx_task_load(path, &t, &err);
	if (r >= 0 && !t->reference)
		r = sbx_error_set(&err, -EINVAL, "'%s' is a task.yaml already: nothing to import",
				  t->path);
	if (r >= 0)
		r = sbx_task_reference_to_yaml(t->path, flags, &yaml, &err);
	if (r >= 0)
		r = set_id(&yaml, out, id, &err);
	if (r >= 0)
		r = make_out(out, &err);
	for (size_t i = 0; r >= 0 && i < t->n_files; i++)
		r = copy_into(t, t->files[i], out, &err);
	for (size_t i = 0; r >= 0 && i < t->n_oracles; i++)
		r = copy_into(t, t->oracles[i], out, &err);
	if (r >= 0)
		r = sbx_path_write_beneath(out, "task.yaml", yaml, strlen(yaml), &err);
	/* What we wrote must load as it stands. */
	if (r >= 0)
		r = sbx_task_load(out, &imported, &err);
	if (r < 0) {
		cli_error("tasks: import: %s", err.msg);
		sbx_task_free(t);
		return r == -ENOMEM || r == -EIO ? EXIT_ENGINE : EXIT_USAGE;
	}
	printf("%s: imported from %s (task.yaml, %zu starting file%s, %zu oracle file%s)\n", out,
	       t->path, t->n_files, t->n_files == 1 ? "" : "s", t->n_oracles,
	       t->n_oracles == 1 ? "" : "s");
	/* The reference grades whole sheets, inputs too; validate asks for answer ranges. */
	if (sbx_grade_task_check(imported, &note) < 0)
		printf("note: %s (--answer-ranges does that when the oracle only adds cells)\n",
		       note.msg);
	else
		printf("%s: it validates: sandboxctl run --task %s\n", out, out);
	sbx_task_free(imported);
	sbx_task_free(t);
	return EXIT_PASS;
}
