/* SPDX-License-Identifier: MIT */
/*
 * What goes into the sandbox's workspace: the task's files, read on the
 * host. How they travel (a tar for Docker) is the backend's business.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	sbx_strv_free_n(s->data, s->n);
	free(s->files);
}

/* An oracle output of that name replaces the starting file of the same name. */
static bool replaced_by_oracle(const sbx_task *t, const char *name)
{
	for (size_t i = 0; i < t->n_oracles; i++) {
		const char *out =
			i < t->n_outputs ? t->outputs[i] : sbx_run__base_name(t->oracles[i]);
		if (strcmp(out, name) == 0)
			return true;
	}
	return false;
}

static int add_input(const sbx_task *t, const char *rel, const char *name, input_set *s,
		     sbx_error *err)
{
	sbx_sandbox_file *f = &s->files[s->n];
	int r = sbx_rundir__read(t->dir, rel, INPUT_MAX, &s->data[s->n], &f->len, err);

	if (r < 0)
		return r;
	f->name = name;
	f->data = s->data[s->n++];
	return 0;
}

/* The starting files, the oracles named as the outputs, or both (the oracle's run). */
static int read_inputs(const sbx_task *t, bool starting, bool oracle, input_set *s, sbx_error *err)
{
	size_t n = (starting ? t->n_files : 0) + (oracle ? t->n_oracles : 0);
	int r = 0;

	s->files = calloc(n ? n : 1, sizeof(*s->files));
	s->data = calloc(n ? n : 1, sizeof(*s->data));
	if (!s->files || !s->data)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; starting && r == 0 && i < t->n_files; i++) {
		const char *name = sbx_run__base_name(t->files[i]);
		if (!(oracle && replaced_by_oracle(t, name)))
			r = add_input(t, t->files[i], name, s, err);
	}
	for (size_t i = 0; oracle && r == 0 && i < t->n_oracles; i++)
		r = add_input(t, t->oracles[i],
			      i < t->n_outputs ? t->outputs[i] : sbx_run__base_name(t->oracles[i]),
			      s, err);
	return r;
}

int sbx_run__copy_files_in(sbx_run *run, bool starting, bool oracle, sbx_error *err)
{
	_cleanup_(input_set_clear) input_set s = {0};
	int r = read_inputs(run->task, starting, oracle, &s, err);

	if (r < 0 || s.n == 0)
		return r;
	return run->backend->ops->copy_in(run->backend, SBX_SANDBOX_WORKSPACE, s.files, s.n, err);
}
