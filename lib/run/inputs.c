/* SPDX-License-Identifier: MIT */
/*
 * What goes into the sandbox's workspace: the task's files, read on the
 * host. They travel as a tar over the relay's stream to the server
 * (PUT /control/files), with no container operation; an older image's
 * server (404, 405) or a tar over the server's body cap goes through the
 * backend's copy_in (an exec'd tar for Docker).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run-internal.h"
#include "rundir.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/docker_tar.h"
#include "sbx/log.h"
#include "sbx/relay.h"

#define INPUT_MAX (256ULL * 1024 * 1024)
/* sandbox-mcp's default --max-body: a larger tar goes by the backend. */
#define STREAM_TAR_MAX (16u << 20)
/* A healthy server unpacks 16 MiB in well under a second; past this (or the
 * deadline) the exec'd tar copies instead. */
#define STREAM_TIMEOUT_MS 3000

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

/*
 * PUT /control/files on the relay's stream. 0 done; 1 the caller copies by
 * the backend: the server does not take it (an older image: 404/405; over its
 * cap: 413), or it answered anything else, or not before the deadline (a
 * server is not trusted with the copy-in: one that drips or garbles its
 * answer gets the exec'd tar, which does not go through it, for the rest of
 * the run, and the episode goes on to its own end); < 0 out of memory.
 */
static int put_files(sbx_run *run, const sbx_sandbox_file *files, size_t n, sbx_error *err)
{
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *t = NULL;
	sbx_relay_response resp = {0};
	sbx_error e = SBX_ERROR_INIT;
	const void *tar;
	size_t len;
	int64_t left;
	int r, status;

	if (!run->relay || run->files_by_backend)
		return 1;
	r = sbx_sandbox_files_pack(files, n, &t, &tar, &len, err);
	if (r < 0)
		return r;
	if (len > STREAM_TAR_MAX)
		return 1;
	/* Never past the episode's deadline: the server is not trusted to answer. */
	left = run->deadline_ms > 0 ? run->deadline_ms - sbx_now_ms() : STREAM_TIMEOUT_MS;
	if (left > STREAM_TIMEOUT_MS)
		left = STREAM_TIMEOUT_MS;
	r = sbx_relay_request(run->relay, "PUT", "/control/files", NULL, tar, len, false,
			      (int)(left < 1 ? 1 : left), &resp, &e);
	status = r < 0 ? 0 : resp.status;
	sbx_relay_response_free(&resp);
	if (status == 200)
		return 0;
	if (r == -ENOMEM)
		return sbx_error_set(err, r, "out of memory");
	/* An older image keeps answering so, a hostile server anything: ask it once. */
	run->files_by_backend = status != 413;
	if (status == 404 || status == 405 || status == 413)
		sbx_log_debug("files by the backend: the server answered HTTP %d", status);
	else
		sbx_log_warning("files by the backend: the server did not take them (%s)",
				r < 0 ? sbx_error_message(&e) : "an answer other than 200");
	return 1;
}

int sbx_run__copy_files_in(sbx_run *run, bool starting, bool oracle, sbx_error *err)
{
	_cleanup_(input_set_clear) input_set s = {0};
	int r = read_inputs(run->task, starting, oracle, &s, err);

	if (r < 0 || s.n == 0)
		return r;
	r = put_files(run, s.files, s.n, err);
	if (r <= 0)
		return r;
	return run->backend->ops->copy_in(run->backend, run->workspace, s.files, s.n, err);
}
