/* SPDX-License-Identifier: MIT */
/*
 * Harbor task directories in the lifecycle: the task's image (built from
 * environment/), the image's own workdir content seeded into the workspace
 * tmpfs, and the oracle (solution/solve.sh run in the sandbox as the agent).
 * The verifier is verify.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rundir.h"
#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/docker.h"
#include "sbx/docker_tar.h"
#include "sbx/file.h"
#include "sbx/image.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/relay.h"

#define SEED_MAX     (64u << 20)
#define AGENT_UID    "1001:1000"
#define SOLUTION_DIR "/tmp/solution"

/*
 * The workdir is /workspace (the tools' workspace, a tmpfs the verifier gets
 * back): a Dockerfile whose WORKDIR is elsewhere (Harbor tasks often use
 * /app) would have its tests look where the agent's work is not, so it is
 * refused in one line rather than graded wrong.
 */
static int check_workdir(sbx_docker *d, const char *id, const sbx_task *t, sbx_error *err)
{
	_cleanup_(sbx_docker_image_freep) sbx_docker_image *img = NULL;
	_cleanup_json_ cJSON *j = NULL;
	const char *wd;

	if (sbx_docker_image_inspect(d, id, &img, err) < 0 || !img->raw_json ||
	    sbx_json_parse(img->raw_json, strlen(img->raw_json), &j, err) < 0)
		return sbx_error_prefix(err, -EIO, "task image %s", id);
	wd = sbx_json_get_string(sbx_json_get(j, "Config"), "WorkingDir", "");
	if (wd[0] && strcmp(wd, "/") != 0 && strcmp(wd, SBX_SANDBOX_WORKSPACE) != 0 &&
	    strcmp(wd, SBX_SANDBOX_WORKSPACE "/") != 0)
		return sbx_error_set(err, -EINVAL,
				     "%s/%s/Dockerfile: WORKDIR '%.200s': a Harbor task's workdir "
				     "must be " SBX_SANDBOX_WORKSPACE " (docs/harbor.md)",
				     t->dir, t->harbor->environment, wd);
	return 0;
}

int sbx_run__harbor_image(sbx_run *run, sbx_error *err)
{
	const sbx_task_harbor *h = run->task->harbor;
	sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
	sbx_image_task_opts io = {0};
	_cleanup_docker_ sbx_docker *d = NULL;
	_cleanup_free_ char *ctx = NULL, *tag = NULL, *id = NULL;
	sbx_docker_kv label = {SBX_LABEL_TEST, "1"};
	double t = sbx_now_msf();
	int r;

	/* --image, then the task's ready image: nothing to build. */
	if (run->o.image || h->docker_image)
		return 0;
	o.host = run->o.engine;
	if (asprintf(&ctx, "%s/%s", run->task->dir, h->environment) < 0 ||
	    /* Not under sandboxctl/: a task's Dockerfile is hostile input, so its image runs
	     * as any foreign image does (our PID 1 from the bundle, whatever its
	     * ENTRYPOINT or labels say; lib/image/foreign.c's image_is_ours). */
	    asprintf(&tag, "sandboxctl-task/%s", run->task->id) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_docker_open(&d, &o, err);
	if (r < 0)
		return r;
	io.context_dir = ctx;
	io.repo = tag;
	io.timeout_s = h->build_timeout_s;
	if (run->o.test) {
		io.labels = &label;
		io.n_labels = 1;
	}
	r = sbx_image_build_task(d, &io, &id, err);
	if (r >= 0)
		r = check_workdir(d, id, run->task, err);
	if (r < 0)
		return r;
	free(run->res.image);
	run->res.image = TAKE_PTR(id);
	sbx_log_debug("run: task image %s ready (built or found) in %.0f ms", run->res.image,
		      sbx_now_msf() - t);
	return 0;
}

/* Runs a shell command line as uid in the sandbox; 0 with *code, or -errno. */
static int sh(sbx_run *run, const char *uid, const char *line, long timeout_ms, sbx_buf *out,
	      int *code, sbx_error *err)
{
	sbx_backend_exec x = {
		.argv = (const char *const[]){"/bin/sh", "-c", line, NULL},
		.user = uid,
		.cwd = SBX_SANDBOX_WORKSPACE,
		.timeout_ms = timeout_ms,
		.max_bytes = 1u << 20,
	};

	if (!run->backend->ops->exec)
		return sbx_error_set(err, -ENOTSUP, "backend '%s' cannot run Harbor tasks",
				     run->backend->ops->name);
	return run->backend->ops->exec(run->backend, &x, out, out, code, err);
}

int sbx_run__harbor_seed(sbx_run *run, sbx_error *err)
{
	_cleanup_free_ void *tar = NULL;
	size_t len = 0;
	int code = -1, r;

	if (!run->backend->ops->image_tar || !run->backend->ops->copy_in_tar)
		return sbx_error_set(err, -ENOTSUP, "backend '%s' cannot run Harbor tasks",
				     run->backend->ops->name);
	r = run->backend->ops->image_tar(run->backend, SBX_SANDBOX_WORKSPACE, SEED_MAX, &tar, &len,
					 err);
	if (r == -ENOENT) {
		sbx_error_clear(err);
		return 0; /* the image has nothing there */
	}
	if (r == -EFBIG)
		return sbx_error_prefix(err, r, "the image's %s is over %u MiB",
					SBX_SANDBOX_WORKSPACE, SEED_MAX >> 20);
	if (r >= 0)
		r = run->backend->ops->copy_in_tar(run->backend, "/", tar, len, err);
	/* The image's modes came along: the agent (group 1000) must be able to write. */
	if (r >= 0)
		r = sh(run, NULL,
		       "chmod -R ug+rwX " SBX_SANDBOX_WORKSPACE
		       " && chmod 2775 " SBX_SANDBOX_WORKSPACE,
		       30000, NULL, &code, err);
	if (r >= 0 && code != 0)
		r = sbx_error_set(err, -EIO, "making the seeded workspace writable: exit %d", code);
	return r;
}

/* The task's dir/rel as a tar under prefix, owned by the server's uid. */
int sbx_run__tar_dir(const char *dir, const char *rel, const char *prefix, sbx_docker_tar **out,
		     const void **data, size_t *len, sbx_error *err)
{
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *t = NULL;
	_cleanup_free_ char *path = NULL;
	int r;

	if (asprintf(&path, "%s/%s", dir, rel) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_docker_tar_new(&t, 256u << 20, err);
	if (r >= 0) /* the same files give the same archive (its sha256 is recorded) */
		sbx_docker_tar_set_mtime(t, 1700000000);
	if (r >= 0 && prefix && prefix[0])
		r = sbx_docker_tar_add_dir(t, prefix, 02775, 1000, 1000, err);
	if (r >= 0)
		r = sbx_docker_tar_add_tree(t, path, prefix, 1000, 1000, err);
	if (r >= 0)
		r = sbx_docker_tar_finish(t, data, len, err);
	if (r < 0)
		return r;
	*out = TAKE_PTR(t);
	return 0;
}

/* Appends the oracle's output to agent.log, as a host agent's would be. */
static void log_output(sbx_run *run, const sbx_buf *out)
{
	_cleanup_free_ char *path = NULL;
	int fd;

	if (asprintf(&path, "%s/agent.log", run->res.run_dir) < 0)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	if (out->len)
		(void)sbx_write_all(fd, out->data, out->len);
	close(fd);
}

int sbx_run__harbor_oracle(sbx_run *run, sbx_error *err)
{
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *t = NULL;
	_cleanup_(sbx_buf_free) sbx_buf out = SBX_BUF_INIT(1u << 20);
	const void *tar;
	size_t len;
	long left = (long)(run->deadline_ms - sbx_now_ms());
	int code = -1, r;

	if (!run->task->harbor->solution)
		return sbx_error_set(err, -ENOENT, "task '%s' has no solution/solve.sh",
				     run->task->id);
	r = sbx_run__tar_dir(run->task->dir, "solution", "solution", &t, &tar, &len, err);
	if (r >= 0)
		r = run->backend->ops->copy_in_tar(run->backend, "/tmp", tar, len, err);
	if (r < 0)
		return r;
	r = sh(run, AGENT_UID,
	       "if command -v bash >/dev/null 2>&1; then exec bash " SOLUTION_DIR "/solve.sh; "
	       "else exec sh " SOLUTION_DIR "/solve.sh; fi",
	       left > 1000 ? left : 1000, &out, &code, err);
	log_output(run, &out);
	if (r == -ENOBUFS) {
		sbx_error_clear(err);
		r = 0; /* a chatty solution; its output is capped, not an error */
	}
	if (r == -ETIME) {
		/* Past the deadline: not completed; the wait sees the deadline (timeout). */
		sbx_error_clear(err);
		sbx_log_warning("solve.sh still ran at the deadline");
		return 0;
	}
	if (r < 0)
		return r;
	run->res.agent_exit = code;
	sbx_log_debug("run: solve.sh exited %d", code);
	return sbx_run__oracle_complete(run, err);
}
