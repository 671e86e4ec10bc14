/* SPDX-License-Identifier: MIT */
/*
 * The episode's second phase: a sandbox made and started (or a warm one
 * claimed), the relay opened with its token, the server waited for, the
 * task's files sent in. Every failure is recorded in the result (the first
 * wins) and the sandbox, once it exists, is left for finish to remove.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/image.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "sbx/run.h"

/* Out of memory on the host during launch: recorded like every other launch failure. */
static int launch_oom(sbx_run *run, sbx_error *err)
{
	return sbx_run__fail(run, sbx_error_set(err, -ENOMEM, "out of memory"), "host", err);
}

static int open_stream(sbx_stream **out, void *userdata, sbx_error *err)
{
	sbx_run *run = userdata;

	return run->backend->ops->open_stream(run->backend, out, err);
}

static void give_back_stream(sbx_stream *s, void *userdata)
{
	sbx_run *run = userdata;

	if (run->backend)
		run->backend->ops->keep_stream(run->backend, s);
	else
		sbx_stream_close(s);
}

static void copy_in(sbx_run *run)
{
	double t = sbx_now_msf();

	/*
	 * The oracle's files go in with the task's, except on a GUI task: there
	 * Calc opens the starting file and the oracle saves over it as an agent
	 * would, so the episode shows the reload of a saved file too.
	 */
	bool with_oracle = sbx_run__is_oracle(run) && !run->task->gui;

	run->copy_result = sbx_run__copy_files_in(run, true, with_oracle, &run->copy_err);
	run->oracle_in = run->copy_result >= 0 && with_oracle;
	sbx_run__phase_end(run, SBX_PHASE_COPY_IN, t, 0, NULL, NULL);
}

static int wait_ready(sbx_run *run, sbx_error *err)
{
	uint32_t limit_s = run->o.ready_timeout_s ? run->o.ready_timeout_s
			   : run->task->gui	  ? 120
						  : 30;
	int64_t t0 = sbx_now_ms(), until = t0 + (int64_t)limit_s * 1000;
	long pause_ms = 0;

	for (;;) {
		sbx_relay_response resp = {0};
		sbx_error e = SBX_ERROR_INIT;
		/* /health: 200 from every server version (the reference's /task/status is 404
		 * until a task starts). */
		int r = sbx_relay_request(run->relay, "GET", "/health", NULL, NULL, 0, false, 5000,
					  &resp, &e);
		int status = resp.status;

		sbx_relay_response_free(&resp);
		if (r >= 0 && status == 200)
			return 0;
		if (run->o.interrupted && *run->o.interrupted)
			return sbx_error_replace(err, -EINTR,
						 "interrupted while waiting for the server");
		if (sbx_run__sandbox_dead(run, err))
			return err->code ? err->code : -ECHILD;
		if (sbx_now_ms() >= until)
			return sbx_run__fail(
				run,
				sbx_error_replace(
					err, -ETIMEDOUT,
					"sandbox '%s': the server did not answer within %u s (%s)",
					run->backend->id, limit_s,
					r < 0 ? sbx_error_message(&e) : "bad status"),
				"not_ready", err);
		sbx_run__ready_pause(&pause_ms, sbx_now_ms() - t0);
	}
}

/* A fresh 128-bit token for the relay, from the kernel's CSPRNG, as hex. */
static int new_token(char out[33], sbx_error *err)
{
	unsigned char b[16];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return sbx_error_set(err, -errno, "relay token: getrandom: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

/*
 * runs/<id>/connection.json (0600): what an outside agent needs to connect,
 * token included. Only the run's owner can read it.
 */
static int write_connection(sbx_run *run, sbx_error *err)
{
	_cleanup_json_ cJSON *c = cJSON_CreateObject();
	_cleanup_free_ char *text = NULL, *path = NULL, *mcp = NULL, *sse = NULL, *bearer = NULL;
	_cleanup_close_ int fd = -1;

	if (!c || asprintf(&mcp, "%s/mcp", run->url) < 0 ||
	    asprintf(&sse, "%s/mcp/sse", run->url) < 0 ||
	    asprintf(&bearer, "Bearer %s", run->token) < 0 ||
	    asprintf(&path, "%s/connection.json", run->res.run_dir) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	cJSON_AddStringToObject(c, "run_id", run->res.run_id);
	cJSON_AddStringToObject(c, "mcp_url", mcp);
	cJSON_AddStringToObject(c, "sse_url", sse);
	cJSON_AddStringToObject(c, "rest_url", run->url);
	cJSON_AddStringToObject(c, "endpoint", run->res.endpoint);
	cJSON_AddStringToObject(c, "authorization", bearer);
	if (run->unix_socket && !run->res.published)
		cJSON_AddStringToObject(c, "unix_socket", run->unix_socket);
	cJSON_AddNumberToObject(c, "deadline", (double)run->res.deadline);
	text = cJSON_PrintUnformatted(c);
	if (!text)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0 ||
	    write(fd, text, strlen(text)) != (ssize_t)strlen(text) || write(fd, "\n", 1) != 1)
		return sbx_error_set(err, -errno, "%s: %s", path, strerror(errno));
	free(run->connection);
	run->connection = TAKE_PTR(text);
	return 0;
}

const char *sbx_run_get_connection(const sbx_run *run)
{
	return run->connection;
}

/* Starts the relay on 127.0.0.1 with a fresh token and writes connection.json. */
static int open_relay(sbx_run *run, sbx_error *err)
{
	sbx_relay_opts ro = SBX_RELAY_OPTS_INIT;
	_cleanup_free_ char *transcript = NULL;
	int r;

	if (asprintf(&transcript, "%s/transcript.jsonl", run->res.run_dir) < 0)
		return launch_oom(run, err);
	ro.port = run->o.port;
	ro.open = open_stream;
	ro.open_userdata = run;
	/* A sandbox with episodes left keeps its bridges for the next one. */
	if (run->res.warm && run->warm_info.reuse > run->res.reused + 1 &&
	    run->backend->ops->keep_stream)
		ro.give_back = give_back_stream;
	ro.transcript_path = transcript;
	/* Published mode made it before create: the server checks the same one. */
	r = run->token[0] ? 0 : new_token(run->token, err);
	if (r < 0)
		return sbx_run__fail(run, r, "relay", err);
	ro.token = run->token;
	ro.unix_path = run->unix_socket;
	r = sbx_relay_start(&run->relay, &ro, err);
	if (r < 0)
		return sbx_run__fail(run, r, "relay", err);
	/* The agent's URLs carry the token; result.json keeps only the address. */
	if (run->unix_socket) {
		if (asprintf(&run->url, "http://localhost/%s", run->token) < 0 ||
		    asprintf(&run->res.endpoint, "unix:%s", run->unix_socket) < 0)
			return launch_oom(run, err);
	} else if (asprintf(&run->url, "http://127.0.0.1:%u/%s", sbx_relay_port(run->relay),
			    run->token) < 0 ||
		   asprintf(&run->res.endpoint, "http://127.0.0.1:%u", sbx_relay_port(run->relay)) <
			   0) {
		return launch_oom(run, err);
	}
	return sbx_run__fail(run, write_connection(run, err), "relay", err);
}

/*
 * A warm sandbox's server knows only the pool's deadline: tell it the
 * episode's, so get_task_status counts down to the one the host enforces.
 * A server without /control (an older image) keeps the pool's.
 */
static int send_deadline(sbx_run *run, sbx_error *err)
{
	sbx_relay_response resp = {0};
	char body[64];
	int n = snprintf(body, sizeof(body), "{\"deadline\":%" PRId64 "}", run->res.deadline);
	int r = sbx_relay_request(run->relay, "POST", "/control/deadline", NULL, body, (size_t)n,
				  true, 5000, &resp, err);
	int status = resp.status;

	sbx_relay_response_free(&resp);
	if (r < 0 || status == 404)
		return r;
	if (status != 200)
		return sbx_error_set(err, -EPROTO,
				     "the server refused the episode's deadline: HTTP %d", status);
	return 0;
}

/*
 * The sandbox runs: wait for the server, send the task's files over the
 * stream that answered (PUT /control/files: no container operation), then
 * the GUI, then on_ready. Shared by a cold launch and a warm claim, so both
 * end in the same state.
 */
static int attach_task(sbx_run *run, sbx_error *err)
{
	double t;
	int r;

	t = sbx_now_msf();
	r = wait_ready(run, err);
	if (r >= 0 && run->res.warm)
		r = sbx_run__fail(run, send_deadline(run, err), "not_ready", err);
	run->ready = r >= 0;
	sbx_run__phase_end(run, SBX_PHASE_READY, t, 0, NULL, NULL);
	if (r < 0)
		return r;
	copy_in(run);
	if (run->copy_result < 0)
		return sbx_run__fail(run,
				     sbx_error_replace(err, run->copy_result,
						       "copying the starting files in: %s",
						       sbx_error_message(&run->copy_err)),
				     "copy_in", err);
	sbx_relay_warm(run->relay);
	sbx_run__start_task(run);
	if (run->task->gui) {
		t = sbx_now_msf();
		r = sbx_run__wait_gui(run, err);
		sbx_run__phase_end(run, SBX_PHASE_READY, t, 0, NULL, NULL);
		run->res.gui_ready_ms = sbx_now_msf() - run->start_done_ms;
		if (r < 0)
			return sbx_run__fail(run, r, "gui_not_ready", err);
	}
	if (run->o.on_ready)
		run->o.on_ready(run, run->o.on_ready_userdata);
	return 0;
}

/* The deadline counts from now; PID 1 enforces it (plus grace) on its own. */
static void set_deadline(sbx_run *run)
{
	run->res.deadline = sbx_run__real_ms() / 1000 + run->res.limits.resolved.timeout_s;
	run->deadline_ms = sbx_now_ms() + (int64_t)run->res.limits.resolved.timeout_s * 1000;
}

/* The run's backend (the engine's, or opts.backend's), and a Harbor task's image. */
static int connect_backend(sbx_run *run, sbx_error *err)
{
	int r;

	r = sbx_label_owner_self(&run->owner, err);
	if (r < 0)
		return sbx_run__fail(run, r, "engine", err);
	r = run->o.backend
		    ? run->o.backend(&run->backend, run->o.engine, run->o.backend_userdata, err)
		    : sbx_backend_docker_new_at(&run->backend, run->o.engine, err);
	if (r < 0)
		return sbx_run__fail(run, r, "engine", err);
	run->res.backend = strdup(run->backend->ops->name);
	sbx_run__trace(run, "engine connected");
	if (run->task->harbor) {
		r = sbx_run__harbor_image(run, err);
		if (r < 0)
			return sbx_run__fail(run, r,
					     r == -ENOENT   ? "image_missing"
					     : r == -EINVAL ? "image_workdir"
							    : "image_build",
					     err);
	}
	return 0;
}

/* The sandbox's environment: what PID 1 opens, which tools, the published port's token. */
typedef struct launch_env {
	char *open_env, *token_env;
	const char *env[4];
	size_t n;
} launch_env;

static void launch_env_clear(launch_env *e)
{
	free(e->open_env);
	free(e->token_env);
}

static int fill_env(sbx_run *run, launch_env *e, sbx_error *err)
{
	int r;

	/* GUI tasks: PID 1 opens the first starting file in Calc once it has arrived. */
	if (run->task->gui && run->task->n_files > 0) {
		if (asprintf(&e->open_env, "SANDBOX_OPEN=" SBX_SANDBOX_WORKSPACE "/%s",
			     sbx_run__base_name(run->task->files[0])) < 0) {
			e->open_env = NULL;
			return launch_oom(run, err);
		}
		e->env[e->n++] = e->open_env;
	}
	/* The server offers only these tools: a GUI-only task cannot be done through the API. */
	if (run->task->tools == SBX_TASK_TOOLS_GUI)
		e->env[e->n++] = "SANDBOX_TOOLSET=gui";
	/* Published: the port is the agent's door, so it asks for the relay's token. */
	if (run->res.limits.published) {
		r = new_token(run->token, err);
		if (r < 0)
			return sbx_run__fail(run, r, "relay", err);
		if (asprintf(&e->token_env, "SANDBOX_HTTP_TOKEN=%s", run->token) < 0) {
			e->token_env = NULL;
			return launch_oom(run, err);
		}
		e->env[e->n++] = e->token_env;
	}
	return 0;
}

static void fill_spec(sbx_run *run, sbx_sandbox_spec *spec)
{
	spec->image = run->res.image;
	spec->run_id = run->res.run_id;
	spec->task = run->task->id;
	spec->owner = run->owner;
	spec->created = sbx_run__real_ms() / 1000;
	spec->limits = run->res.limits.resolved;
	spec->workspace_bytes = run->res.limits.workspace_bytes;
	/* Only a Harbor task's own workdir: every other sandbox is as before. */
	if (strcmp(run->workspace, SBX_SANDBOX_WORKSPACE) != 0)
		spec->workspace = run->workspace;
	spec->tmp_bytes = run->res.limits.tmp_bytes;
	spec->run_bytes = run->res.limits.run_bytes;
	spec->gui = run->task->gui;
	spec->published = run->res.limits.published;
	spec->test = run->o.test;
}

/* Published: agents connect straight to the port; the lifecycle keeps the relay. */
static int publish(sbx_run *run, sbx_error *err)
{
	run->res.published = strdup(run->backend->endpoint);
	free(run->url);
	run->url = NULL;
	if (asprintf(&run->url, "http://%s/%s", run->backend->endpoint, run->token) < 0) {
		run->url = NULL;
		return launch_oom(run, err);
	}
	free(run->res.endpoint);
	if (asprintf(&run->res.endpoint, "http://%s", run->backend->endpoint) < 0) {
		run->res.endpoint = NULL;
		return launch_oom(run, err);
	}
	/* The agent's URLs are the published ones. */
	return sbx_run__fail(run, write_connection(run, err), "relay", err);
}

int sbx_run_launch(sbx_run *run, sbx_error *err)
{
	sbx_sandbox_spec spec = {0};
	_cleanup_(launch_env_clear) launch_env env = {0};
	double t;
	int r;

	r = connect_backend(run, err);
	if (r < 0)
		return r;
	fill_spec(run, &spec);
	r = fill_env(run, &env, err);
	if (r < 0)
		return r;
	if (env.n > 0)
		spec.env = env.env;
	set_deadline(run);
	spec.deadline = run->res.deadline;

	t = sbx_now_msf();
	r = run->backend->ops->create(run->backend, &spec, err);
	if (r < 0) {
		bool missing = r == -ENOENT || (err && err->http_status == 404);
		if (missing)
			sbx_error_prefix(err, r, "image '%s' (%s)", spec.image,
					 sbx_image_missing_advice(spec.image));
		return sbx_run__phase_end(run, SBX_PHASE_CREATE, t, r,
					  missing ? "image_missing" : "engine", err);
	}
	sbx_run__phase_end(run, SBX_PHASE_CREATE, t, 0, NULL, NULL);
	run->res.sandbox_id = strdup(run->backend->id);
	run->res.applied = run->backend->applied;
	if (run->backend->image_id)
		run->res.image_id = strdup(run->backend->image_id);

	r = open_relay(run, err);
	if (r < 0)
		return r;

	t = sbx_now_msf();
	r = run->backend->ops->start(run->backend, err);
	sbx_run__phase_end(run, SBX_PHASE_START, t, r, "engine", err);
	run->start_done_ms = sbx_now_msf();
	run->launched = true;
	if (r < 0)
		return r;
	if (run->backend->endpoint && (r = publish(run, err)) < 0)
		return r;
	if (run->task->harbor && (r = sbx_run__harbor_seed(run, err)) < 0)
		return sbx_run__fail(run, r, "copy_in", err);
	r = attach_task(run, err);
	/* The verifier's sandbox is made while the agent works, off the episode's path,
	 * whoever drives the episode: run and sweep, or a client of serve or mcp. */
	if (r >= 0)
		sbx_run__verifier_prestart(run);
	return r;
}

bool sbx_run_warm_fits(const sbx_run *run, const sbx_warm *w)
{
	const sbx_run_limits *l = &run->res.limits;
	const sbx_warm_info *i = sbx_warm_get_info(w);

	/* A GUI task's PID 1 opens its file at start: it cannot be started ahead. */
	return !run->task->gui && !run->task->harbor && !l->published &&
	       strcmp(i->image, run->res.image) == 0 &&
	       sbx_limits_same_sandbox(&i->limits, &l->resolved) &&
	       i->deadline >= sbx_run__real_ms() / 1000 + l->resolved.timeout_s;
}

int sbx_run_launch_warm(sbx_run *run, sbx_warm *w, sbx_error *err)
{
	int r;

	assert(sbx_run_warm_fits(run, w));
	r = sbx_label_owner_self(&run->owner, err);
	if (r < 0) {
		sbx_warm_free(w);
		return sbx_run__fail(run, r, "engine", err);
	}
	run->warm_info = *sbx_warm_get_info(w);
	run->res.reused = run->warm_info.reused;
	run->res.reuse = run->warm_info.reuse;
	run->res.reset_ms = run->warm_info.reset_ms;
	run->res.reset_kill_ms = run->warm_info.reset_kill_ms;
	run->res.reset_agent_ms = run->warm_info.reset_agent_ms;
	run->res.reset_clean_ms = run->warm_info.reset_clean_ms;
	run->res.reset_verify_ms = run->warm_info.reset_verify_ms;
	run->backend = sbx_warm__take_backend(w);
	run->res.warm = true;
	run->res.backend = strdup(run->backend->ops->name);
	run->res.sandbox_id = strdup(run->backend->id);
	run->res.applied = run->backend->applied;
	if (run->backend->image_id)
		run->res.image_id = strdup(run->backend->image_id);
	set_deadline(run);
	run->start_done_ms = sbx_now_msf();
	run->launched = true;
	r = open_relay(run, err);
	if (r < 0)
		return r;
	return attach_task(run, err);
}
