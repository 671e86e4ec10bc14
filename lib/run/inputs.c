/* SPDX-License-Identifier: MIT */
/* What goes into the sandbox's workspace: a tar made from the task's files. */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "run-internal.h"
#include "rundir.h"
#include "sbx/cleanup.h"
#include "sbx/docker_tar.h"

#define INPUT_MAX (256ULL * 1024 * 1024)

/* A tar of the starting files (or, for the oracle, the oracles named as the outputs). */
static int make_tar(sbx_run *run, bool oracle, sbx_docker_tar **out, const void **data, size_t *len,
		    sbx_error *err)
{
	const sbx_task *t = run->task;
	sbx_docker_tar *tar = NULL;
	size_t n = oracle ? t->n_oracles : t->n_files;
	int r;

	r = sbx_docker_tar_new(&tar, 0, err);
	if (r < 0)
		return r;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		_cleanup_free_ char *buf = NULL;
		const char *rel = oracle ? t->oracles[i] : t->files[i];
		const char *name =
			oracle ? (i < t->n_outputs ? t->outputs[i] : sbx_run__base_name(rel))
			       : sbx_run__base_name(rel);
		size_t blen;

		r = sbx_rundir__read(t->dir, rel, INPUT_MAX, &buf, &blen, err);
		if (r >= 0 && strchr(name, '/')) {
			_cleanup_free_ char *dir = strdup(name);
			if (!dir)
				r = -ENOMEM;
			else
				r = sbx_docker_tar_add_dir(tar, dirname(dir), 02775, 1000, 1000,
							   err);
		}
		if (r >= 0)
			r = sbx_docker_tar_add_file(tar, name, buf, blen, 0664, 1000, 1000, err);
	}
	if (r >= 0)
		r = sbx_docker_tar_finish(tar, data, len, err);
	if (r < 0) {
		sbx_docker_tar_free(tar);
		return r;
	}
	*out = tar;
	return 0;
}

int sbx_run__copy_files_in(sbx_run *run, bool oracle, sbx_error *err)
{
	sbx_docker_tar *tar = NULL;
	const void *data;
	size_t len;
	int r;

	if ((oracle ? run->task->n_oracles : run->task->n_files) == 0)
		return 0;
	r = make_tar(run, oracle, &tar, &data, &len, err);
	if (r >= 0)
		r = run->backend->ops->copy_in(run->backend, SBX_SANDBOX_WORKSPACE, data, len, err);
	sbx_docker_tar_free(tar);
	return r;
}
