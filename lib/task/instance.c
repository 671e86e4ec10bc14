/* SPDX-License-Identifier: MIT */
/*
 * Task instances from seeds: a task's generator writes a fresh starting file
 * and oracle for each seed, so RL and repeated evals never see one fixed
 * file. Built-in generators (tasks/<id>/gen.c) are compiled in; a task folder
 * may instead carry its own program, run on the host (like a build script:
 * a task folder is code the user chose to run).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen.h" /* tasks/common: the built-in generators' interface */
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/path.h"
#include "sbx/task.h"
#include "task_schema.h"
#include "task_generators.h"

extern char **environ;

#define X(id) extern const gen_def gen_def_##id;
SBX_TASK_GENERATORS
#undef X

static const gen_def *const builtin[] = {
#define X(id) &gen_def_##id,
	SBX_TASK_GENERATORS
#undef X
};

static const gen_def *find_builtin(const char *id)
{
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (strcmp(builtin[i]->id, id) == 0)
			return builtin[i];
	return NULL;
}

int sbx_task__parse_generator(const sbx_schema *s, const sbx_ynode *node, const char *dir,
			      sbx_task *t)
{
	_cleanup_free_ char *path = NULL;
	struct stat st;
	int r;

	r = sbx_schema__string(s, node, "generator", 4096, &t->generator);
	if (r < 0)
		return r;
	if (strcmp(t->generator, "builtin") == 0) {
		if (!find_builtin(t->id))
			return sbx_schema__fail(s, node,
						"generator: builtin: sandboxctl has no built-in "
						"generator for task '%s'",
						t->id);
		return 0;
	}
	r = sbx_schema__relpath(s, node, "generator", t->generator);
	if (r < 0 || !dir)
		return r;
	if (asprintf(&path, "%s/%s", dir, t->generator) < 0)
		return sbx_error_set(s->err, -ENOMEM, "out of memory");
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return sbx_schema__fail(s, node,
					"generator: '%s' is not an executable file in the task "
					"directory",
					t->generator);
	return 0;
}

bool sbx_task_seedable(const sbx_task *task)
{
	return task && task->generator;
}

/*
 * Waits for the generator; once *stop is set, ends its group: SIGTERM, then
 * SIGKILL. Polled (20 ms) rather than a blocking waitpid, so a signal that
 * lands just before the wait is not missed. Returns 0 or -EINTR when stopped.
 */
static int wait_generator(pid_t pid, const volatile sig_atomic_t *stop, int *status)
{
	const struct timespec tick = {0, 20 * 1000000L};
	int64_t kill_at = 0;
	pid_t w;

	if (!stop) {
		while ((w = waitpid(pid, status, 0)) < 0 && errno == EINTR)
			;
		return w < 0 ? -errno : 0;
	}
	while ((w = waitpid(pid, status, WNOHANG)) == 0 || (w < 0 && errno == EINTR)) {
		if (*stop && !kill_at) {
			(void)kill(-pid, SIGTERM);
			kill_at = sbx_now_ms() + SBX_TASK_GENERATOR_STOP_MS;
		} else if (kill_at && sbx_now_ms() >= kill_at) {
			(void)kill(-pid, SIGKILL);
		}
		nanosleep(&tick, NULL);
	}
	if (w < 0)
		return -errno;
	/* What it left in its group (a child it started) goes with it. */
	if (kill_at)
		(void)kill(-pid, SIGKILL);
	return kill_at ? -EINTR : 0;
}

/* PROGRAM DIR [SEED] in the task directory; its output goes to our stderr. */
static int run_program(const sbx_task *task, const uint64_t *seed, const char *dir,
		       const volatile sig_atomic_t *stop, sbx_error *err)
{
	_cleanup_free_ char *prog = NULL, *abs_dir = NULL;
	char seed_s[24];
	posix_spawnattr_t attr;
	char *argv[4];
	pid_t pid;
	int r, status;

	abs_dir = realpath(dir, NULL);
	if (!abs_dir || asprintf(&prog, "%s/%s", task->dir, task->generator) < 0)
		return sbx_error_set(err, -errno ? -errno : -ENOMEM, "generator: '%s': %s", dir,
				     strerror(errno));
	snprintf(seed_s, sizeof(seed_s), "%" PRIu64, seed ? *seed : 0);
	argv[0] = prog;
	argv[1] = abs_dir;
	argv[2] = seed ? seed_s : NULL;
	argv[3] = NULL;
	/*
	 * In a process group of its own: a terminal's Ctrl-C reaches the whole
	 * foreground group, and sandboxctl, not the generator, decides what an
	 * interrupt means (a sweep lets its episodes end as interrupted). The
	 * generator runs to its end; a run interrupted meanwhile starts no sandbox.
	 * With stop (tasks generate) it ends with sandboxctl instead.
	 */
	r = posix_spawnattr_init(&attr);
	if (r == 0) {
		r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
		if (r == 0)
			r = posix_spawnattr_setpgroup(&attr, 0);
		if (r == 0)
			r = posix_spawn(&pid, prog, NULL, &attr, argv, environ);
		posix_spawnattr_destroy(&attr);
	}
	if (r != 0)
		return sbx_error_set(err, -r, "generator '%s': %s", prog, strerror(r));
	r = wait_generator(pid, stop, &status);
	if (r == -EINTR)
		return sbx_error_set(err, r, "generator '%s' stopped: interrupted", prog);
	if (r < 0)
		return sbx_error_set(err, r, "generator '%s': %s", prog, strerror(-r));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return sbx_error_set(err, -EIO, "generator '%s' failed (%s %d)", prog,
				     WIFEXITED(status) ? "exit status" : "signal",
				     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 0;
}

static int check_written(const char *dir, char **v, size_t n, sbx_error *err)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *p = NULL;
		struct stat st;

		if (asprintf(&p, "%s/%s", dir, v[i]) < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode))
			return sbx_error_set(err, -EIO, "generator: it did not write '%s'", v[i]);
	}
	return 0;
}

int sbx_task_generate(const sbx_task *task, const uint64_t *seed, const char *dir, sbx_error *err)
{
	return sbx_task_generate_until(task, seed, dir, NULL, err);
}

int sbx_task_generate_until(const sbx_task *task, const uint64_t *seed, const char *dir,
			    const volatile sig_atomic_t *stop, sbx_error *err)
{
	int r;

	if (!task->generator)
		return sbx_error_set(err, -EINVAL, "task '%s' has no generator: it is not seedable",
				     task->id);
	if (seed && *seed > SBX_TASK_SEED_MAX)
		return sbx_error_set(err, -EINVAL, "seed %" PRIu64 " is above %llu", *seed,
				     SBX_TASK_SEED_MAX);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return sbx_error_set(err, -errno, "'%s': %s", dir, strerror(errno));
	if (strcmp(task->generator, "builtin") == 0) {
		const gen_def *def = find_builtin(task->id);

		if (!def)
			return sbx_error_set(err, -ENOENT, "no built-in generator for '%s'",
					     task->id);
		r = gen_run(def, seed, dir, err);
	} else {
		r = run_program(task, seed, dir, stop, err);
	}
	if (r >= 0)
		r = check_written(dir, task->files, task->n_files, err);
	if (r >= 0)
		r = check_written(dir, task->oracles, task->n_oracles, err);
	return r;
}

int sbx_task_instantiate(sbx_task *task, uint64_t seed, const char *dir, sbx_error *err)
{
	_cleanup_free_ char *ndir = NULL, *npath = NULL;
	const char *base = strrchr(task->path, '/');
	int r;

	base = base ? base + 1 : task->path;
	r = sbx_task_generate(task, &seed, dir, err);
	if (r < 0)
		return r;
	if (asprintf(&npath, "%s/%s", dir, base) < 0 || !(ndir = strdup(dir)))
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (access(npath, F_OK) < 0) {
		_cleanup_free_ char *text = NULL;
		size_t len;

		r = sbx_task__read_file(task->path, &text, &len, err);
		if (r >= 0)
			r = sbx_path_write_beneath(dir, base, text, len, err);
		if (r < 0)
			return r;
	}
	free(task->dir);
	free(task->path);
	task->dir = TAKE_PTR(ndir);
	task->path = TAKE_PTR(npath);
	return 0;
}
