/* SPDX-License-Identifier: MIT */
/*
 * The episode's first phase: the task loaded, the limits resolved, the
 * options checked, the run directory made with the task's snapshot, the
 * provenance read, a seeded instance generated. No sandbox yet.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run-internal.h"
#include "rundir.h"
#include "sbx/cleanup.h"
#include "sbx/image.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "sbx/run.h"

static int snapshot_task(sbx_run *run, sbx_error *err)
{
	_cleanup_free_ char *tdir = NULL, *idir = NULL;
	const sbx_task *t = run->task;
	const char *yaml = sbx_run__base_name(t->path);
	int r;

	if (asprintf(&tdir, "%s/task", run->res.run_dir) < 0 ||
	    asprintf(&idir, "%s/inputs", run->res.run_dir) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_rundir__copy(t->dir, yaml, tdir, yaml, err);
	for (size_t i = 0; r >= 0 && i < t->n_files; i++) {
		r = sbx_rundir__copy(t->dir, t->files[i], tdir, t->files[i], err);
		if (r >= 0)
			r = sbx_rundir__copy(t->dir, t->files[i], idir,
					     sbx_run__base_name(t->files[i]), err);
	}
	for (size_t i = 0; r >= 0 && i < t->n_oracles; i++)
		r = sbx_rundir__copy(t->dir, t->oracles[i], tdir, t->oracles[i], err);
	/*
	 * A task's own generator too: the snapshot must load as a task where it is
	 * (the grading child loads it; a seeded run's task/ names the generator),
	 * and it records what made the instance.
	 */
	if (r >= 0 && t->generator && strcmp(t->generator, "builtin") != 0) {
		_cleanup_free_ char *gen = NULL;

		r = sbx_rundir__copy(t->dir, t->generator, tdir, t->generator, err);
		if (r >= 0 &&
		    (asprintf(&gen, "%s/%s", tdir, t->generator) < 0 || chmod(gen, 0755) < 0))
			r = sbx_error_set(err, gen ? -errno : -ENOMEM, "'%s/%s': %s", tdir,
					  t->generator, strerror(errno));
	}
	return r;
}

/*
 * run --seed: the task's generator writes a fresh instance over the snapshot
 * (runs/<id>/task/), which becomes the task: its files go in, its oracle
 * grades. inputs/ is rewritten to match; provenance stays the source's.
 */
static int instantiate(sbx_run *run, sbx_error *err)
{
	_cleanup_free_ char *tdir = NULL, *idir = NULL;
	const sbx_task *t = run->task;
	int r;

	if (asprintf(&tdir, "%s/task", run->res.run_dir) < 0 ||
	    asprintf(&idir, "%s/inputs", run->res.run_dir) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_task_instantiate(run->task, run->o.seed, tdir, err);
	for (size_t i = 0; r >= 0 && i < t->n_files; i++)
		r = sbx_rundir__copy(t->dir, t->files[i], idir, sbx_run__base_name(t->files[i]),
				     err);
	if (r < 0)
		return r;
	run->res.seeded = true;
	run->res.seed = run->o.seed;
	sbx_run__trace(run, "instance generated from the seed");
	return 0;
}

/* Limits: a flag beats the task, the task beats the defaults. */
static int resolve_limits(sbx_run *run, const sbx_run_opts *opts, sbx_error *err)
{
	static const sbx_limits defaults = SBX_RUN_DEFAULT_LIMITS;
	sbx_run_limits *l = &run->res.limits;

	sbx_limits_resolve(&l->resolved, &opts->limits, &run->task->limits, &defaults);
	l->workspace_bytes = WORKSPACE_BYTES;
	l->tmp_bytes = TMP_BYTES;
	l->run_bytes = RUN_BYTES;
	l->published = opts->published;
	if (l->resolved.memory < 16ULL * 1024 * 1024)
		return sbx_error_set(err, -EINVAL, "memory limit below 16 MiB");
	if (l->resolved.pids < 8)
		return sbx_error_set(err, -EINVAL, "pids limit below 8");
	return 0;
}

/* The image, the agent, --listen and the run id, checked before anything is made. */
static int check_opts(sbx_run *run, const sbx_run_opts *opts, sbx_error *err)
{
	int r;

	run->res.image = strdup(opts->image ? opts->image : sbx_run_task_image(run->task));
	/*
	 * A task that declares libreoffice: true needs it in the sandbox (formulas
	 * the native evaluator does not compute): refuse the slim image up front
	 * rather than grade values nothing computed.
	 */
	if (opts->image && run->task->libreoffice && !run->task->gui &&
	    strncmp(opts->image, "sandboxctl/sandbox-slim", strlen("sandboxctl/sandbox-slim")) == 0)
		return sbx_error_set(
			err, -EINVAL,
			"task '%s' needs LibreOffice (libreoffice: true) and image '%s' "
			"has none: use %s or drop --image",
			run->task->id, opts->image, SBX_IMAGE_FULL);
	run->res.agent = strdup(opts->agent ? opts->agent : "external");
	r = sbx_run__check_agent(run, err);
	if (r < 0)
		return r;
	if (opts->listen && strcmp(opts->listen, "tcp") != 0 && strcmp(opts->listen, "unix") != 0 &&
	    (strncmp(opts->listen, "unix:", 5) != 0 || !opts->listen[5]))
		return sbx_error_set(err, -EINVAL, "--listen '%s': use tcp, unix or unix:PATH",
				     opts->listen);
	if (opts->listen && strncmp(opts->listen, "unix", 4) == 0 && opts->published)
		return sbx_error_set(err, -EINVAL,
				     "--listen unix with --network published: agents connect to "
				     "the published port, not the relay");
	if (opts->run_id && !sbx_run_id_valid(opts->run_id))
		return sbx_error_set(err, -EINVAL,
				     "run id '%s': use letters, digits, '.', '_', '-'",
				     opts->run_id);
	return 0;
}

/* runs/<id>: two runs started in the same second may draw the same id: draw again. */
static int make_run_dir(sbx_run *run, const sbx_run_opts *opts, sbx_error *err)
{
	const char *runs = opts->runs_dir ? opts->runs_dir : "runs";
	int r;

	run->res.run_id = opts->run_id ? strdup(opts->run_id) : sbx_run_id_new(run->task->id);
	if (!run->res.task || !run->res.image || !run->res.agent || !run->res.run_id)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_rundir__create(runs, run->res.run_id, &run->res.run_dir, err);
	for (int i = 0; r == -EEXIST && !opts->run_id && i < 5; i++) {
		free(run->res.run_id);
		run->res.run_id = sbx_run_id_new(run->task->id);
		if (!run->res.run_id)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		sbx_error_clear(err);
		r = sbx_rundir__create(runs, run->res.run_id, &run->res.run_dir, err);
	}
	return r;
}

/* --listen unix[:PATH]: the relay's socket, absolute, so an agent that changes directory still
 * finds it. */
static int unix_socket_path(sbx_run *run, const char *listen, sbx_error *err)
{
	const char *p = listen[4] ? listen + 5 : NULL;
	char cwd[PATH_MAX];
	int k;

	if (!getcwd(cwd, sizeof(cwd)))
		return sbx_error_set(err, -errno, "getcwd: %s", strerror(errno));
	if (p)
		k = p[0] == '/' ? asprintf(&run->unix_socket, "%s", p)
				: asprintf(&run->unix_socket, "%s/%s", cwd, p);
	else
		k = run->res.run_dir[0] == '/'
			    ? asprintf(&run->unix_socket, "%s/relay.sock", run->res.run_dir)
			    : asprintf(&run->unix_socket, "%s/%s/relay.sock", cwd,
				       run->res.run_dir);
	if (k < 0) {
		run->unix_socket = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

static sbx_run *run_new(const sbx_run_opts *opts)
{
	sbx_run *run = calloc(1, sizeof(*run));

	if (!run)
		return NULL;
	run->o = *opts;
	snprintf(run->workspace, sizeof(run->workspace), "%s", SBX_SANDBOX_WORKSPACE);
	run->t0 = sbx_now_ms();
	run->res.started_at = sbx_run__real_ms();
	run->res.agent_exit = -1;
	run->status_version = -1;
	run->agent.pid = 0;
	run->agent.out_fd = run->agent.log_fd = run->agent.lifeline = -1;
	run->agent.exit_code = -1;
	return run;
}

static int load_task(sbx_run *run, const sbx_run_opts *opts, sbx_error *err)
{
	_cleanup_free_ char *tasks_dir = NULL, *yaml = NULL;
	int r;

	tasks_dir = opts->tasks_dir ? strdup(opts->tasks_dir) : sbx_task_dir_default();
	if (!tasks_dir)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_task_resolve(tasks_dir, opts->task, &yaml, err);
	if (r >= 0)
		r = sbx_task_load(yaml, &run->task, err);
	if (r < 0)
		return r;
	run->res.task = strdup(run->task->id);
	if (opts->seeded && !sbx_task_seedable(run->task))
		return sbx_error_set(err, -EINVAL,
				     "task '%s' has no generator: it is not seedable (drop --seed)",
				     run->task->id);
	return 0;
}

int sbx_run_prepare(sbx_run **out, const sbx_run_opts *opts, sbx_error *err)
{
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	int r;

	if (!opts || opts->version != SBX_RUN_OPTS_VERSION || !opts->task)
		return sbx_error_set(err, -EINVAL, "run: bad options");
	run = run_new(opts);
	if (!run)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = load_task(run, opts, err);
	if (r >= 0)
		r = resolve_limits(run, opts, err);
	if (r >= 0)
		r = check_opts(run, opts, err);
	if (r >= 0)
		r = make_run_dir(run, opts, err);
	if (r >= 0 && opts->listen && strncmp(opts->listen, "unix", 4) == 0)
		r = unix_socket_path(run, opts->listen, err);
	if (r >= 0)
		r = snapshot_task(run, err);
	if (r < 0)
		return r;
	sbx_run__trace(run, "task loaded, run directory made");
	if (sbx_provenance_cache_get(opts->provenance_cache, run->task->dir, &run->res.provenance,
				     err) < 0) {
		/* Provenance is information, not a reason to refuse the run. */
		sbx_log_warning("%s", sbx_error_message(err));
		sbx_error_clear(err);
	}
	sbx_run__trace(run, "provenance recorded");
	if (opts->seeded) {
		r = instantiate(run, err);
		if (r < 0)
			return r;
	}
	*out = TAKE_PTR(run);
	return 0;
}

const char *sbx_run_task_image(const sbx_task *t)
{
	if (t->image)
		return t->image;
	if (t->harbor && t->harbor->docker_image)
		return t->harbor->docker_image;
	return t->gui || t->libreoffice ? SBX_IMAGE_FULL : SBX_IMAGE_SLIM;
}
