/* SPDX-License-Identifier: MIT */
/* sandboxctl tasks validate [NAME|PATH...]: each task loads, and its oracle and files grade as they
 * must. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "sbx/docker.h"
#include "sbx/grade.h"
#include "sbx/image.h"
#include "sbx/log.h"
#include "sbx/task.h"

/*
 * A Harbor task's image: its docker_image, or every FROM of its Dockerfile,
 * must be on the engine (nothing is pulled). No engine: said, not failed.
 */
static int check_harbor_image(const sbx_task *t, sbx_error *err)
{
	_cleanup_docker_ sbx_docker *d = NULL;
	_cleanup_free_ char *df = NULL;
	sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
	sbx_error e = SBX_ERROR_INIT;

	if (sbx_docker_open(&d, &o, &e) < 0) {
		sbx_fputs_escaped_line(t->path, stdout);
		printf(": base images not checked (no engine: %s)\n", e.msg);
		return 0;
	}
	if (t->harbor->docker_image) {
		if (!sbx_image_present(d, t->harbor->docker_image))
			return sbx_error_set(
				err, -ENOENT,
				"%s: environment.docker_image '%s' is not on the engine", t->path,
				t->harbor->docker_image);
		return 0;
	}
	if (asprintf(&df, "%s/%s/Dockerfile", t->dir, t->harbor->environment) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return sbx_image_check_bases(d, df, err);
}

static bool validate_one(const char *name)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;

	if (cmd_tasks__load(name, &t, &err) < 0 ||
	    (t->harbor ? check_harbor_image(t, &err) : sbx_grade_task_check(t, &err)) < 0) {
		printf("%s\n", err.msg);
		sbx_task_free(t);
		return false;
	}
	if (t->reference) {
		sbx_fputs_escaped_line(t->path, stdout);
		printf(": read as a reference task (task.json; 'sandboxctl tasks import' makes a "
		       "task.yaml of it)\n");
	}
	sbx_fputs_escaped_line(t->path, stdout);
	printf(": OK\n");
	sbx_task_free(t);
	return true;
}

int cmd_tasks__validate(int n, char **names)
{
	_cleanup_free_ char *dir = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char **all = NULL;
	bool ok = true;

	if (n > 0) {
		for (int i = 0; i < n; i++)
			ok = validate_one(names[i]) && ok;
		return ok ? EXIT_PASS : EXIT_USAGE;
	}
	dir = cmd_tasks__dir();
	if (!dir)
		return EXIT_ENGINE;
	if (sbx_task_list(dir, &all, NULL, &err) < 0) {
		cli_error("tasks: %s", err.msg);
		return EXIT_USAGE;
	}
	for (char **p = all; *p; p++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, *p);
		ok = validate_one(path) && ok;
	}
	sbx_task_names_free(all);
	return ok ? EXIT_PASS : EXIT_USAGE;
}
