/* SPDX-License-Identifier: MIT */
/*
 * What goes into the sandbox's workspace: the task's files, read on the
 * host. How they travel (a tar for Docker) is the backend's business.
 */
#include <errno.h>
#include <stdlib.h>

#include "run-internal.h"
#include "rundir.h"
#include "sbx/cleanup.h"

#define INPUT_MAX (256ULL * 1024 * 1024)

typedef struct input_set {
	sbx_sandbox_file *files;
	char **data; /* owned, one per file */
	size_t n;
} input_set;

static void input_set_clear(input_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->data[i]);
	free(s->data);
	free(s->files);
}

/* The starting files (or, for the oracle, the oracles named as the outputs). */
static int read_inputs(const sbx_task *t, bool oracle, input_set *s, sbx_error *err)
{
	size_t n = oracle ? t->n_oracles : t->n_files;

	s->files = calloc(n, sizeof(*s->files));
	s->data = calloc(n, sizeof(*s->data));
	if (!s->files || !s->data)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	for (; s->n < n; s->n++) {
		const char *rel = oracle ? t->oracles[s->n] : t->files[s->n];
		sbx_sandbox_file *f = &s->files[s->n];
		int r;

		f->name =
			oracle && s->n < t->n_outputs ? t->outputs[s->n] : sbx_run__base_name(rel);
		r = sbx_rundir__read(t->dir, rel, INPUT_MAX, &s->data[s->n], &f->len, err);
		if (r < 0)
			return r;
		f->data = s->data[s->n];
	}
	return 0;
}

int sbx_run__copy_files_in(sbx_run *run, bool oracle, sbx_error *err)
{
	_cleanup_(input_set_clear) input_set s = {0};
	int r;

	if ((oracle ? run->task->n_oracles : run->task->n_files) == 0)
		return 0;
	r = read_inputs(run->task, oracle, &s, err);
	if (r < 0)
		return r;
	return run->backend->ops->copy_in(run->backend, SBX_SANDBOX_WORKSPACE, s.files, s.n, err);
}
