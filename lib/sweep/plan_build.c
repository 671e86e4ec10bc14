/* SPDX-License-Identifier: MIT */
/*
 * Building a plan from what `sandboxctl sweep` was asked: the task list
 * (names, every task, a task file), the episodes' limits, id and
 * provenance; loading each task and agent before anything runs; sizing the
 * job slots from the engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbx-config.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/run.h"
#include "sbx/sweep.h"
#include "sbx/task.h"
#include "sweep-internal.h"

#define TASK_FILE_MAX (4 << 20)

sbx_sweep_plan *sbx_sweep_plan_new(void)
{
	sbx_sweep_plan *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->epochs = 1;
	p->retries = SBX_SWEEP_DEFAULT_RETRIES;
	p->pass_at[p->n_pass_at++] = 1;
	return p;
}

int sbx_sweep_plan_push(char ***list, size_t *n, const char *s, size_t max)
{
	char **nv;

	if (*n >= max)
		return -E2BIG;
	nv = realloc(*list, (*n + 1) * sizeof(**list));
	if (!nv)
		return -ENOMEM;
	*list = nv;
	if (!(nv[*n] = strdup(s)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

int sbx_sweep_plan_add_pass_at(sbx_sweep_plan *p, unsigned k)
{
	for (size_t i = 0; i < p->n_pass_at; i++)
		if (p->pass_at[i] == k)
			return 0;
	if (p->n_pass_at >= SBX_SWEEP_MAX_PASS_AT)
		return -E2BIG;
	p->pass_at[p->n_pass_at++] = k;
	return 0;
}

/* The plan's tasks directory, or the default one; malloc'd, NULL when out of memory. */
static char *tasks_dir(const sbx_sweep_plan *p)
{
	return p->tasks_dir ? strdup(p->tasks_dir) : sbx_task_dir_default();
}

int sbx_sweep_plan_add_all_tasks(sbx_sweep_plan *p, sbx_error *err)
{
	_cleanup_free_ char *dir = tasks_dir(p);
	char **names = NULL;
	size_t n = 0;
	int r;

	if (!dir)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_task_list(dir, &names, &n, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (sbx_sweep_plan_push(&p->tasks, &p->n_tasks, names[i], SBX_SWEEP_MAX_TASKS) < 0)
			break;
	sbx_task_names_free(names);
	return 0;
}

int sbx_sweep_plan_add_task_file(sbx_sweep_plan *p, const char *path, sbx_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	char *save = NULL;
	int r = sbx_file_read_capped(AT_FDCWD, path, TASK_FILE_MAX, &text, &len, err);

	if (r < 0)
		return r;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *e;

		line += strspn(line, " \t\r");
		e = line + strcspn(line, "#");
		while (e > line && strchr(" \t\r", e[-1]))
			e--;
		*e = '\0';
		if (*line &&
		    sbx_sweep_plan_push(&p->tasks, &p->n_tasks, line, SBX_SWEEP_MAX_TASKS) < 0)
			return sbx_error_set(err, -E2BIG, "too many tasks");
	}
	return 0;
}

int sbx_sweep_plan_add_task_dir(sbx_sweep_plan *p, const char *dir, sbx_error *err)
{
	_cleanup_free_ char *abs = realpath(dir, NULL);
	char **names = NULL;
	size_t n = 0;
	int r = 0;

	if (!abs)
		return sbx_error_set(err, -errno, "--task-dir '%s': %s", dir, strerror(errno));
	if (sbx_task_dir_is_task(abs))
		return sbx_sweep_plan_push(&p->tasks, &p->n_tasks, abs, SBX_SWEEP_MAX_TASKS) < 0
			       ? sbx_error_set(err, -E2BIG, "--task-dir: more than %d tasks",
					       SBX_SWEEP_MAX_TASKS)
			       : 0;
	r = sbx_task_list(abs, &names, &n, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "--task-dir");
	if (n == 0)
		r = sbx_error_set(err, -ENOENT,
				  "--task-dir '%s': no task.toml, task.yaml or task.json in it or "
				  "its subdirectories",
				  dir);
	for (size_t i = 0; r == 0 && i < n; i++) {
		_cleanup_free_ char *sub = NULL;

		if (asprintf(&sub, "%s/%s", abs, names[i]) < 0 ||
		    sbx_sweep_plan_push(&p->tasks, &p->n_tasks, sub, SBX_SWEEP_MAX_TASKS) < 0)
			r = sbx_error_set(err, -E2BIG, "--task-dir: more than %d tasks",
					  SBX_SWEEP_MAX_TASKS);
	}
	sbx_task_names_free(names);
	return r;
}

int sbx_sweep_plan_finish(sbx_sweep_plan *p, const sbx_run_opts *limits, sbx_error *err)
{
	int r;

	if (!p->tasks_dir) {
		/* Absolute in sweep.json, so --resume from anywhere finds the same tasks. */
		_cleanup_free_ char *def = sbx_task_dir_default();

		p->tasks_dir = def ? realpath(def, NULL) : NULL;
	}
	p->image = sbx_sweep__strdup0(limits->image);
	p->limits = limits->limits;
	p->published = limits->published;
	r = sbx_sweep_plan_new_id(p, err);
	if (r < 0)
		return r;
	p->version = strdup(SBX_VERSION);
	p->created_at = (int64_t)time(NULL);
	return sbx_sweep_plan_check(p, err);
}

/* Adds image to the NULL-terminated list (room for one per task) unless it is there. */
static int add_image(char **images, const char *image)
{
	size_t i = 0;

	for (; images[i]; i++)
		if (strcmp(images[i], image) == 0)
			return 0;
	images[i] = strdup(image);
	return images[i] ? 0 : -ENOMEM;
}

/* Task i of the plan, loaded: its seedability (a new plan's), memory limit and image noted. */
static int load_task(sbx_sweep_plan *p, size_t i, bool resumed, const char *dir,
		     sbx_sweep_needs *needs, sbx_error *err)
{
	_cleanup_free_ char *yaml = NULL;
	sbx_task *t = NULL;
	sbx_error e = SBX_ERROR_INIT;
	int r;

	if (sbx_task_resolve(dir, p->tasks[i], &yaml, &e) < 0 || sbx_task_load(yaml, &t, &e) < 0)
		return sbx_error_set(err, e.code, "task '%s': %s", p->tasks[i],
				     sbx_error_message(&e));
	if (!resumed)
		p->seedable[i] = sbx_task_seedable(t);
	if (t->limits.memory > needs->max_memory)
		needs->max_memory = t->limits.memory;
	r = add_image(needs->images, p->image ? p->image : sbx_run_task_image(t));
	sbx_task_free(t);
	return r < 0 ? sbx_error_set(err, r, "out of memory") : 0;
}

int sbx_sweep_plan_load(sbx_sweep_plan *p, sbx_sweep_needs *out, sbx_error *err)
{
	_cleanup_free_ char *dir = tasks_dir(p);
	sbx_sweep_needs needs = {.images = calloc(p->n_tasks + 1, sizeof(char *))};
	/* A resumed plan keeps its own: the seeds of its episodes must not change. */
	bool resumed = p->seedable != NULL;
	int r = 0;

	if (!resumed)
		p->seedable = calloc(p->n_tasks, sizeof(*p->seedable));
	if (!dir || !p->seedable || !needs.images)
		r = sbx_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; r == 0 && i < p->n_tasks; i++)
		r = load_task(p, i, resumed, dir, &needs, err);
	/* A mistyped or missing agent would fail every episode like it: refuse it now. */
	for (size_t i = 0; r == 0 && i < p->n_agents; i++)
		r = sbx_run_check_agent(p->agents[i], NULL, err);
	if (r < 0) {
		sbx_sweep_needs_clear(&needs);
		return r;
	}
	*out = needs;
	return 0;
}

void sbx_sweep_needs_clear(sbx_sweep_needs *n)
{
	sbx_strv_free(n->images);
	*n = (sbx_sweep_needs){0};
}

void sbx_sweep_plan_stamp(sbx_sweep_plan *p, char *image_id)
{
	_cleanup_free_ char *dir = tasks_dir(p);
	sbx_provenance prov = {0};

	free(p->image_id);
	p->image_id = image_id;
	if (dir && sbx_provenance_get(dir, &prov, NULL) == 0 && prov.known) {
		p->tasks_commit = strdup(prov.commit);
		p->tasks_dirty = prov.dirty;
	}
	sbx_provenance_clear(&prov);
}

unsigned sbx_sweep_jobs(const sbx_sweep_plan *p, const sbx_sweep_needs *needs, int ncpu,
			int64_t mem, uint64_t *per)
{
	/* A sandbox's CPU limit is a cap, not a reservation: CPUs bound the
	 * count, the memory limits bound it harder. */
	uint64_t each = p->limits.memory    ? p->limits.memory
			: needs->max_memory ? needs->max_memory
					    : 2ULL << 30;
	long by_mem = mem > 0 ? (long)((uint64_t)mem * 8 / 10 / each) : 1;
	long jobs = ncpu > 0 ? ncpu : 1;

	if (by_mem < jobs)
		jobs = by_mem < 1 ? 1 : by_mem;
	if (per)
		*per = each;
	return (unsigned)jobs;
}
