/* SPDX-License-Identifier: MIT */
/*
 * A task's self-check: the oracle must grade PASS against itself, every
 * workbook among the starting files must open and hold the sheets its gate
 * cases name, and the untouched starting files (what an agent that does
 * nothing leaves behind) must score 0, or the score would reward doing nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/log.h"
#include "sbx/path.h"
#include "sbx/grade.h"
#include "sbx/sheet.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Copies src_dir/rel to out/name (name may hold directories). */
static int place(const char *src_dir, const char *rel, const char *out, const char *name,
		 sbx_error *err)
{
	_cleanup_free_ char *src = NULL, *data = NULL;
	size_t len = 0;
	int r;

	if (asprintf(&src, "%s/%s", src_dir, rel) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_file_read_capped(AT_FDCWD, src, 256u << 20, &data, &len, err);
	if (r < 0)
		return r;
	return sbx_path_write_beneath(out, name, data, len, err);
}

/* Grades a scratch output directory holding the oracles (or the starting files). */
static int grade_scratch(const sbx_task *task, bool oracle, sbx_grade_result **out, sbx_error *err)
{
	char tmp[] = "/tmp/sbx-check-XXXXXX";
	int r = 0;

	if (!mkdtemp(tmp))
		return sbx_error_set(err, -errno, "scratch directory: %s", strerror(errno));
	if (oracle) {
		/* Each case's oracle placed where the case reads its output (first wins). */
		for (size_t i = 0; r >= 0 && i < task->grading.n_cases; i++) {
			const sbx_grading_case *c = &task->grading.cases[i];
			const char *o = c->output ? c->output : task->outputs[0];
			_cleanup_free_ char *p = NULL;

			if (asprintf(&p, "%s/%s", tmp, o) < 0) {
				r = sbx_error_set(err, -ENOMEM, "out of memory");
				break;
			}
			if (access(p, F_OK) == 0)
				continue;
			r = place(task->dir, c->oracle ? c->oracle : task->oracles[0], tmp, o, err);
		}
	} else {
		for (size_t i = 0; r >= 0 && i < task->n_files; i++)
			r = place(task->dir, task->files[i], tmp, base_name(task->files[i]), err);
	}
	if (r >= 0)
		r = sbx_grade_task(task, tmp, out, err);
	/* Ours (mkdtemp), holding only what place() wrote. */
	(void)sbx_path_remove_tree_at(AT_FDCWD, tmp);
	return r;
}

static bool is_workbook(const char *path)
{
	const char *dot = strrchr(base_name(path), '.');

	return dot && (strcasecmp(dot, ".ods") == 0 || strcasecmp(dot, ".xlsx") == 0);
}

/* The gate cases reading the output named like this starting file: each range's sheet is in it. */
static int check_gate_sheets(const sbx_task *task, const char *file, const sbx_book *book,
			     sbx_error *err)
{
	for (size_t i = 0; i < task->grading.n_cases; i++) {
		const sbx_grading_case *c = &task->grading.cases[i];
		const char *o = c->output ? c->output : task->outputs[0];

		if (!c->gate || strcmp(base_name(o), base_name(file)) != 0)
			continue;
		for (size_t j = 0; j < c->opts.n_ranges; j++) {
			const char *sheet = c->opts.ranges[j].sheet;

			if (sheet && !sbx_book_find(book, sheet))
				return sbx_error_set(err, -EINVAL,
						     "%s: gate case '%s': the starting file '%s' "
						     "has no sheet '%s'",
						     task->path, c->name, file, sheet);
		}
	}
	return 0;
}

/* Every workbook among the starting files opens, and holds the sheets its gate cases name. */
static int check_starting_files(const sbx_task *task, sbx_error *err)
{
	for (size_t i = 0; i < task->n_files; i++) {
		_cleanup_(sbx_book_freep) sbx_book *book = NULL;
		_cleanup_free_ char *path = NULL;
		sbx_error e = SBX_ERROR_INIT;
		int r;

		if (!is_workbook(task->files[i]))
			continue;
		if (asprintf(&path, "%s/%s", task->dir, task->files[i]) < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		r = sbx_book_open(path, NULL, &book, &e);
		if (r < 0)
			return sbx_error_set(err, r, "%s: the starting file '%s' does not open: %s",
					     task->path, task->files[i], sbx_error_message(&e));
		r = check_gate_sheets(task, task->files[i], book, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int sbx_grade_task_check(const sbx_task *task, sbx_error *err)
{
	_cleanup_(sbx_grade_result_freep) sbx_grade_result *self = NULL;
	_cleanup_(sbx_grade_result_freep) sbx_grade_result *null = NULL;
	int r;

	r = grade_scratch(task, true, &self, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "%s", task->path);
	if (self->status != SBX_GRADE_PASS)
		return sbx_error_set(
			err, -EINVAL,
			"%s: the oracle graded against itself is %s (%.2f%%), not PASS", task->path,
			sbx_grade_status_name(self->status), 100.0 * self->score);
	r = check_starting_files(task, err);
	if (r < 0)
		return r;
	r = grade_scratch(task, false, &null, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "%s: the starting files", task->path);
	/* The reference grades whole sheets, inputs included: its tasks run as they are, and
	 * only an untouched workspace that passes is an error there. */
	if (task->reference && null->score != 0 && null->status != SBX_GRADE_PASS) {
		sbx_log_warning("%s: the untouched starting files score %.2f%% (%llu/%llu cells), "
				"as the reference grades whole sheets; 'sandboxctl tasks import "
				"--answer-ranges' makes a task.yaml that grades only the cells "
				"the agent must produce",
				task->path, 100.0 * null->score, (unsigned long long)null->matched,
				(unsigned long long)null->graded);
		return 0;
	}
	if (null->score != 0 || null->status == SBX_GRADE_PASS)
		return sbx_error_set(err, -EINVAL,
				     "%s: the untouched starting files score %.2f%% (%llu/%llu "
				     "cells): grade only the cells the agent must produce "
				     "(ranges), and check the inputs in a gate case",
				     task->path, 100.0 * null->score,
				     (unsigned long long)null->matched,
				     (unsigned long long)null->graded);
	return 0;
}
