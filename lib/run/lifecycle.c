/* SPDX-License-Identifier: MIT */
/*
 * The episode's state machine: prepare → launch → wait → finish. Every
 * failure after the sandbox exists still reaches finish, which removes it.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "run-internal.h"
#include "rundir.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/image.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "sbx/run.h"

/* How long an agent may take to exit by itself after complete_task. */
#define AGENT_EXIT_GRACE_MS 500

#define STATUS_POLL_MS 200
#define TICK_MS	       10
/* The longest one status long-poll holds the wait: an agent's exit, an
 * interrupt or a frame due are seen at most this late. */
#define WAIT_SLICE_MS 250

/* Out of memory on the host during launch: recorded like every other launch failure. */
static int launch_oom(sbx_run *run, sbx_error *err)
{
	int r = sbx_error_set(err, -ENOMEM, "out of memory");

	sbx_run__set_infra(run, "host", err);
	return r;
}

static int64_t real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const sbx_run_result *sbx_run_get_result(const sbx_run *run)
{
	return &run->res;
}

const sbx_task *sbx_run_get_task(const sbx_run *run)
{
	return run->task;
}

sbx_relay *sbx_run_get_relay(sbx_run *run)
{
	return run->relay;
}

const char *sbx_run_get_url(const sbx_run *run)
{
	return run->url;
}

/* ---- prepare ---------------------------------------------------------------- */

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

int sbx_run_prepare(sbx_run **out, const sbx_run_opts *opts, sbx_error *err)
{
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	_cleanup_free_ char *tasks_dir = NULL, *yaml = NULL;
	const sbx_task_limits *tl;
	sbx_run_limits *l;
	int r;

	if (!opts || opts->version != SBX_RUN_OPTS_VERSION || !opts->task)
		return sbx_error_set(err, -EINVAL, "run: bad options");
	run = calloc(1, sizeof(*run));
	if (!run)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	run->o = *opts;
	snprintf(run->workspace, sizeof(run->workspace), "%s", SBX_SANDBOX_WORKSPACE);
	run->t0 = sbx_now_ms();
	run->res.started_at = real_ms();
	run->res.agent_exit = -1;
	run->status_version = -1;
	run->agent.pid = 0;
	run->agent.out_fd = run->agent.log_fd = run->agent.lifeline = -1;
	run->agent.exit_code = -1;

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

	/* Limits: a flag beats the task, the task beats the defaults. */
	tl = &run->task->limits;
	l = &run->res.limits;
	l->timeout_s = opts->timeout_s	? opts->timeout_s
		       : tl->deadline_s ? tl->deadline_s
					: SBX_RUN_DEFAULT_TIMEOUT_S;
	l->memory = opts->memory       ? opts->memory
		    : tl->memory_bytes ? tl->memory_bytes
				       : SBX_RUN_DEFAULT_MEMORY;
	l->cpus = opts->cpus > 0 ? opts->cpus : tl->cpus > 0 ? tl->cpus : SBX_RUN_DEFAULT_CPUS;
	l->pids = opts->pids ? opts->pids : tl->pids ? tl->pids : SBX_RUN_DEFAULT_PIDS;
	snprintf(l->runtime, sizeof(l->runtime), "%s", opts->runtime ? opts->runtime : "");
	l->grace_s = opts->grace_s ? opts->grace_s : SBX_RUN_DEFAULT_GRACE_S;
	l->workspace_bytes = WORKSPACE_BYTES;
	l->tmp_bytes = TMP_BYTES;
	l->run_bytes = RUN_BYTES;
	l->published = opts->published;
	l->engine_seccomp = opts->engine_seccomp;
	if (l->memory < 16ULL * 1024 * 1024)
		return sbx_error_set(err, -EINVAL, "memory limit below 16 MiB");
	if (l->pids < 8)
		return sbx_error_set(err, -EINVAL, "pids limit below 8");

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
	run->res.run_id = opts->run_id ? strdup(opts->run_id) : sbx_run_id_new(run->task->id);
	if (!run->res.task || !run->res.image || !run->res.agent || !run->res.run_id)
		return sbx_error_set(err, -ENOMEM, "out of memory");

	r = sbx_rundir__create(opts->runs_dir ? opts->runs_dir : "runs", run->res.run_id,
			       &run->res.run_dir, err);
	/* Two runs started in the same second may draw the same id: draw again. */
	for (int i = 0; r == -EEXIST && !opts->run_id && i < 5; i++) {
		free(run->res.run_id);
		run->res.run_id = sbx_run_id_new(run->task->id);
		if (!run->res.run_id)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		sbx_error_clear(err);
		r = sbx_rundir__create(opts->runs_dir ? opts->runs_dir : "runs", run->res.run_id,
				       &run->res.run_dir, err);
	}
	if (r < 0)
		return r;
	if (opts->listen && strncmp(opts->listen, "unix", 4) == 0) {
		const char *p = opts->listen[4] ? opts->listen + 5 : NULL;
		char cwd[PATH_MAX];
		int k;

		/* Absolute, so an agent that changes directory still finds it. */
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
	}
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

/* ---- launch ----------------------------------------------------------------- */

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
	sbx_run__phase_done(run, SBX_PHASE_COPY_IN, t);
}

static bool sandbox_dead(sbx_run *run, sbx_error *err)
{
	sbx_sandbox_status st;
	sbx_error e2 = SBX_ERROR_INIT;

	if (run->backend->ops->status(run->backend, &st, &e2) < 0)
		return false;
	if (st.running)
		return false;
	if (st.oom_killed) {
		sbx_error_replace(err, -ENOMEM, "sandbox '%s' was killed: out of memory",
				  run->backend->id);
		sbx_run__set_sandbox_failed(run, "oom", err);
	} else {
		sbx_error_replace(err, -ECHILD, "sandbox '%s' exited with status %d%s%s",
				  run->backend->id, st.exit_code, st.detail[0] ? ": " : "",
				  st.detail);
		sbx_run__set_sandbox_failed(run, "sandbox_died", err);
	}
	return true;
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
		if (sandbox_dead(run, err))
			return err->code ? err->code : -ECHILD;
		if (sbx_now_ms() >= until) {
			sbx_error_replace(
				err, -ETIMEDOUT,
				"sandbox '%s': the server did not answer within %u s (%s)",
				run->backend->id, limit_s,
				r < 0 ? sbx_error_message(&e) : "bad status");
			sbx_run__set_infra(run, "not_ready", err);
			return -ETIMEDOUT;
		}
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
	if (r < 0) {
		sbx_run__set_infra(run, "relay", err);
		return r;
	}
	ro.token = run->token;
	ro.unix_path = run->unix_socket;
	r = sbx_relay_start(&run->relay, &ro, err);
	if (r < 0) {
		sbx_run__set_infra(run, "relay", err);
		return r;
	}
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
	r = write_connection(run, err);
	if (r < 0)
		sbx_run__set_infra(run, "relay", err);
	return r;
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
	if (r >= 0 && run->res.warm) {
		r = send_deadline(run, err);
		if (r < 0)
			sbx_run__set_infra(run, "not_ready", err);
	}
	run->ready = r >= 0;
	sbx_run__phase_done(run, SBX_PHASE_READY, t);
	if (r < 0)
		return r;
	copy_in(run);
	if (run->copy_result < 0) {
		sbx_error_replace(err, run->copy_result, "copying the starting files in: %s",
				  sbx_error_message(&run->copy_err));
		sbx_run__set_infra(run, "copy_in", err);
		return run->copy_result;
	}
	sbx_relay_warm(run->relay);
	sbx_run__start_task(run);
	if (run->task->gui) {
		t = sbx_now_msf();
		r = sbx_run__wait_gui(run, err);
		sbx_run__phase_done(run, SBX_PHASE_READY, t);
		run->res.gui_ready_ms = sbx_now_msf() - run->start_done_ms;
		if (r < 0) {
			sbx_run__set_infra(run, "gui_not_ready", err);
			return r;
		}
	}
	if (run->o.on_ready)
		run->o.on_ready(run, run->o.on_ready_userdata);
	return 0;
}

/* The deadline counts from now; PID 1 enforces it (plus grace) on its own. */
static void set_deadline(sbx_run *run)
{
	run->res.deadline = real_ms() / 1000 + run->res.limits.timeout_s;
	run->deadline_ms = sbx_now_ms() + (int64_t)run->res.limits.timeout_s * 1000;
}

int sbx_run_launch(sbx_run *run, sbx_error *err)
{
	sbx_sandbox_spec spec = {0};
	_cleanup_free_ char *open_env = NULL, *token_env = NULL;
	const char *env[4] = {NULL, NULL, NULL, NULL};
	size_t ne = 0;
	double t;
	int r;

	r = sbx_label_owner_self(&run->owner, err);
	if (r < 0) {
		sbx_run__set_infra(run, "engine", err);
		return r;
	}
	r = run->o.backend
		    ? run->o.backend(&run->backend, run->o.engine, run->o.backend_userdata, err)
		    : sbx_backend_docker_new_at(&run->backend, run->o.engine, err);
	if (r < 0) {
		sbx_run__set_infra(run, "engine", err);
		return r;
	}
	run->res.backend = strdup(run->backend->ops->name);
	sbx_run__trace(run, "engine connected");
	if (run->task->harbor) {
		r = sbx_run__harbor_image(run, err);
		if (r < 0) {
			sbx_run__set_infra(run,
					   r == -ENOENT	  ? "image_missing"
					   : r == -EINVAL ? "image_workdir"
							  : "image_build",
					   err);
			return r;
		}
	}

	spec.image = run->res.image;
	spec.run_id = run->res.run_id;
	spec.task = run->task->id;
	spec.owner = run->owner;
	spec.created = real_ms() / 1000;
	spec.grace_s = run->res.limits.grace_s;
	spec.memory = run->res.limits.memory;
	spec.cpus = run->res.limits.cpus;
	spec.pids = run->res.limits.pids;
	spec.runtime = run->res.limits.runtime;
	spec.engine_seccomp = run->res.limits.engine_seccomp;
	spec.workspace_bytes = run->res.limits.workspace_bytes;
	/* Only a Harbor task's own workdir: every other sandbox is as before. */
	if (strcmp(run->workspace, SBX_SANDBOX_WORKSPACE) != 0)
		spec.workspace = run->workspace;
	spec.tmp_bytes = run->res.limits.tmp_bytes;
	spec.run_bytes = run->res.limits.run_bytes;
	spec.gui = run->task->gui;
	spec.published = run->res.limits.published;
	spec.test = run->o.test;
	/* GUI tasks: PID 1 opens the first starting file in Calc once it has arrived. */
	if (run->task->gui && run->task->n_files > 0) {
		if (asprintf(&open_env, "SANDBOX_OPEN=" SBX_SANDBOX_WORKSPACE "/%s",
			     sbx_run__base_name(run->task->files[0])) < 0)
			return launch_oom(run, err);
		env[ne++] = open_env;
	}
	/* The server offers only these tools: a GUI-only task cannot be done through the API. */
	if (run->task->tools == SBX_TASK_TOOLS_GUI)
		env[ne++] = "SANDBOX_TOOLSET=gui";
	/* Published: the port is the agent's door, so it asks for the relay's token. */
	if (run->res.limits.published) {
		r = new_token(run->token, err);
		if (r < 0 || asprintf(&token_env, "SANDBOX_HTTP_TOKEN=%s", run->token) < 0) {
			token_env = NULL;
			if (r >= 0)
				return launch_oom(run, err);
			sbx_run__set_infra(run, "relay", err);
			return r;
		}
		env[ne++] = token_env;
	}
	if (ne > 0)
		spec.env = env;
	set_deadline(run);
	spec.deadline = run->res.deadline;

	t = sbx_now_msf();
	r = run->backend->ops->create(run->backend, &spec, err);
	sbx_run__phase_done(run, SBX_PHASE_CREATE, t);
	if (r < 0) {
		bool missing = r == -ENOENT || (err && err->http_status == 404);
		if (missing)
			sbx_error_prefix(err, r, "image '%s' (%s)", spec.image,
					 sbx_image_missing_advice(spec.image));
		sbx_run__set_infra(run, missing ? "image_missing" : "engine", err);
		return r;
	}
	run->res.sandbox_id = strdup(run->backend->id);
	run->res.applied = run->backend->applied;
	if (run->backend->image_id)
		run->res.image_id = strdup(run->backend->image_id);

	r = open_relay(run, err);
	if (r < 0)
		return r;

	t = sbx_now_msf();
	r = run->backend->ops->start(run->backend, err);
	sbx_run__phase_done(run, SBX_PHASE_START, t);
	run->start_done_ms = sbx_now_msf();
	run->launched = true;
	if (r < 0) {
		sbx_run__set_infra(run, "engine", err);
		return r;
	}
	if (run->backend->endpoint) {
		/* Published: agents connect straight to the port; the lifecycle keeps the relay. */
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
		r = write_connection(run, err); /* the agent's URLs are the published ones */
		if (r < 0) {
			sbx_run__set_infra(run, "relay", err);
			return r;
		}
	}
	if (run->task->harbor && (r = sbx_run__harbor_seed(run, err)) < 0) {
		sbx_run__set_infra(run, "copy_in", err);
		return r;
	}
	return attach_task(run, err);
}

bool sbx_run_warm_fits(const sbx_run *run, const sbx_warm *w)
{
	const sbx_run_limits *l = &run->res.limits;
	const sbx_warm_info *i = sbx_warm_get_info(w);

	/* A GUI task's PID 1 opens its file at start: it cannot be started ahead. */
	return !run->task->gui && !run->task->harbor && !l->published &&
	       strcmp(i->image, run->res.image) == 0 && i->memory == l->memory &&
	       i->cpus == l->cpus && i->pids == l->pids && strcmp(i->runtime, l->runtime) == 0 &&
	       i->engine_seccomp == l->engine_seccomp &&
	       i->deadline >= real_ms() / 1000 + l->timeout_s;
}

int sbx_run_launch_warm(sbx_run *run, sbx_warm *w, sbx_error *err)
{
	int r;

	assert(sbx_run_warm_fits(run, w));
	r = sbx_label_owner_self(&run->owner, err);
	if (r < 0) {
		sbx_warm_free(w);
		sbx_run__set_infra(run, "engine", err);
		return r;
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

/* ---- waiting ---------------------------------------------------------------- */

/*
 * One look at the episode. wait_ms > 0 lets the status request wait that
 * long for a change (the server's long-poll), so a waiting loop needs no
 * sleep of its own; 0 answers at once and asks the server at most every
 * STATUS_POLL_MS.
 */
static sbx_run_end check(sbx_run *run, int wait_ms)
{
	int64_t now = sbx_now_ms();

	if (run->o.interrupted && *run->o.interrupted)
		return SBX_END_INTERRUPTED;
	if (now >= run->deadline_ms)
		return SBX_END_DEADLINE;
	if (run->agent_started && sbx_agent__poll(&run->agent)) {
		run->res.agent_exit = run->agent.exit_code;
		/* It may have completed just before exiting. */
		return sbx_run__task_state(run, 0) == 1 ? SBX_END_COMPLETE_TASK
							: SBX_END_AGENT_EXIT;
	}
	if (wait_ms > 0 || now >= run->next_poll_ms) {
		int s = sbx_run__task_state(run, wait_ms);
		sbx_error e = SBX_ERROR_INIT;

		run->next_poll_ms = sbx_now_ms() + STATUS_POLL_MS;
		if (s == 1)
			return SBX_END_COMPLETE_TASK;
		if (s == 2)
			return SBX_END_DEADLINE;
		if (s < 0 && sandbox_dead(run, &e))
			return SBX_END_SANDBOX_DIED;
		if (s < 0 && wait_ms > 0) {
			/* No answer is no wait: keep the loop's pace, not a burst of execs. */
			struct timespec ts = {wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	return SBX_END_NONE;
}

sbx_run_end sbx_run_poll(sbx_run *run)
{
	return check(run, 0);
}

/* How long the next status request may wait: the slice, cut at the deadline and the next frame. */
static int wait_slice(const sbx_run *run)
{
	int64_t now = sbx_now_ms(), until = now + WAIT_SLICE_MS;

	if (run->deadline_ms < until)
		until = run->deadline_ms;
	if (sbx_run__recording(run) && run->next_frame_ms < until)
		until = run->next_frame_ms;
	return until > now ? (int)(until - now) : 1;
}

bool sbx_run_completed(sbx_run *run)
{
	return run->relay && run->ready && sbx_run__task_state(run, 0) == 1;
}

sbx_run_end sbx_run_wait(sbx_run *run)
{
	sbx_error err = SBX_ERROR_INIT;
	double t = sbx_now_msf();
	sbx_run_end end;

	/* The verifier's sandbox is made while the agent works, off the episode's path. */
	sbx_run__verifier_prestart(run);
	if (sbx_run__is_oracle(run)) {
		if (sbx_run__oracle_agent(run, &err) < 0) {
			sbx_run__set_infra(run, "agent", &err);
			sbx_run__phase_done(run, SBX_PHASE_AGENT, t);
			return SBX_END_AGENT_EXIT;
		}
	} else if (run->o.agent && sbx_run__start_agent(run, &err) < 0) {
		sbx_run__set_infra(run, "agent", &err);
		sbx_run__phase_done(run, SBX_PHASE_AGENT, t);
		return SBX_END_AGENT_EXIT;
	}
	/* The status long-poll is the wait; an older image's server answers at once, so
	 * then a short tick paces the loop. */
	while ((end = check(run, run->status_api == SBX_STATUS_CONTROL ? wait_slice(run) : 0)) ==
	       SBX_END_NONE) {
		sbx_run__record_frame(run);
		if (run->status_api != SBX_STATUS_CONTROL) {
			struct timespec ts = {0, TICK_MS * 1000000L};
			nanosleep(&ts, NULL);
		}
	}
	sbx_run__phase_done(run, SBX_PHASE_AGENT, t);
	return end;
}

/* The last n non-empty lines of agent.log, joined by " | ", or NULL. */
static char *agent_log_tail(const char *run_dir, int n)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	sbx_error e = SBX_ERROR_INIT;
	size_t len, end, start;
	int lines = 0;
	char *out;

	if (asprintf(&path, "%s/agent.log", run_dir) < 0 ||
	    sbx_file_read_capped(AT_FDCWD, path, 16 << 20, &text, &len, &e) < 0)
		return NULL;
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	end = len;
	start = len;
	while (start > 0 && lines < n) {
		start--;
		if (text[start] == '\n' && start + 1 < end)
			lines++;
	}
	if (lines == n)
		start++;
	out = strndup(text + start, end - start);
	for (char *p = out; p && *p; p++)
		if (*p == '\n')
			*p = '|';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' '; /* the agent's bytes go to a terminal */
	return out;
}

/* ---- finish ----------------------------------------------------------------- */

/* The outputs into runs/<id>/outputs, then the grade; failures are recorded in res. */
static void collect_and_grade(sbx_run *run, sbx_run_end end)
{
	_cleanup_free_ char *outdir = NULL;
	sbx_error e = SBX_ERROR_INIT;
	double t;
	int r;

	if (run->task->harbor) {
		sbx_run__verify(run);
		return;
	}
	/* PID 1 restarts Calc only while the sandbox is not stopping. */
	if (run->task->gui)
		sbx_run__save_screenshot(run,
					 end == SBX_END_COMPLETE_TASK || end == SBX_END_AGENT_EXIT);
	t = sbx_now_msf();
	if (asprintf(&outdir, "%s/outputs", run->res.run_dir) < 0) {
		outdir = NULL;
		sbx_error_set(&e, -ENOMEM, "out of memory");
		sbx_run__set_infra(run, "host", &e);
		return;
	}
	/*
	 * Through the server on a warm stream; the exec'd tar when that fails,
	 * or straight away past the deadline: the server may be what hung, and
	 * the host does not wait on it again.
	 */
	r = end == SBX_END_DEADLINE ? -ETIMEDOUT
	    : run->status_api != SBX_STATUS_CONTROL
		    ? -ENOTSUP /* an older image: no /control */
		    : sbx_collect__outputs(run->relay, run->task, outdir, &e);
	if (r < 0) {
		sbx_log_debug("collecting through the server: %s; using tar",
			      sbx_error_message(&e));
		sbx_error_clear(&e);
		r = run->backend->ops->copy_out(run->backend, SBX_SANDBOX_WORKSPACE, outdir, &e);
	}
	sbx_run__phase_done(run, SBX_PHASE_COPY_OUT, t);
	if (r == -EFBIG || r == -E2BIG) {
		/* Outputs over the caps: what the agent left, not a fault of ours. */
		sbx_run__set_sandbox_failed(run, "outputs_too_large", &e);
	} else if (r < 0 && r != -EPERM) {
		/* A refused entry is the agent's doing (below); a dead sandbox is
		 * the sandbox's, anything else ours. */
		if (!sandbox_dead(run, &e))
			sbx_run__set_infra(run, "copy_out", &e);
	} else if (r == -EPERM) {
		sbx_log_warning("copy out: %s", sbx_error_message(&e));
	}
	if (!run->res.error)
		sbx_run__grade(run);
}

/* After the relay is closed, so the transcript is complete. Not fatal: result.json says why. */
static void write_trajectory(sbx_run *run)
{
	sbx_trajectory_info ti = {
		.run_dir = run->res.run_dir,
		.session_id = run->res.run_id,
		.prompt = run->task && run->task->prompt ? run->task->prompt : "",
		.agent = run->res.agent ? run->res.agent : "external",
		.started_at = run->res.started_at,
	};
	sbx_error e = SBX_ERROR_INIT;

	if (sbx_run_trajectory_write(&ti, &e) < 0)
		run->res.trajectory_error = strdup(e.msg);
	else
		run->res.trajectory = true;
}

int sbx_run_finish(sbx_run *run, sbx_run_end end, sbx_error *err)
{
	_cleanup_free_ char *json = NULL;
	bool alive = run->launched && run->backend && run->backend->id && !run->res.error;
	double t;
	int r;

	if (run->finished)
		return 0;
	run->finished = true;
	run->res.end = end;
	if (run->agent_started) {
		/* An agent that called complete_task usually exits right after: let it,
		 * so a clean agent is not recorded as killed. */
		if (end == SBX_END_COMPLETE_TASK)
			sbx_agent__wait(&run->agent, AGENT_EXIT_GRACE_MS);
		sbx_agent__stop(&run->agent, 2000);
		run->res.agent_exit = run->agent.exit_code;
		run->res.agent_stopped = run->agent.stopped;
	}
	if (run->relay)
		sbx_relay_close_listener(run->relay);

	if (alive && end != SBX_END_INTERRUPTED && end != SBX_END_SANDBOX_DIED)
		collect_and_grade(run, end);
	sbx_run__trace(run, "outputs graded");
	if (run->backend && run->backend->id)
		sbx_run__save_logs(run);
	sbx_run__trace(run, "logs saved");
	if (run->relay) {
		sbx_relay *relay = run->relay;

		sbx_relay_get_stats(relay, &run->res.relay);
		run->relay = NULL;
		sbx_relay_free(relay);
		sbx_run__trace(run, "relay closed");
	}
	if (run->backend && run->backend->id) {
		if (run->o.keep) {
			run->res.kept = true;
		} else if (alive && !run->res.error && end != SBX_END_INTERRUPTED &&
			   end != SBX_END_SANDBOX_DIED && run->res.warm &&
			   run->res.reused + 1 < run->warm_info.reuse &&
			   !(run->o.interrupted && *run->o.interrupted)) {
			sbx_run__reset_in_place(run);
		} else {
			sbx_error de = SBX_ERROR_INIT;

			t = sbx_now_msf();
			r = run->backend->ops->destroy(run->backend, &de);
			sbx_run__phase_done(run, SBX_PHASE_REMOVE, t);
			if (r < 0)
				sbx_run__set_infra(run, "remove", &de);
		}
	}

	/* The verifier's sandbox: its removal joined, or made ahead and not used. */
	sbx_run__verifier_discard(run);
	write_trajectory(run);
	sbx_run__trace(run, "trajectory written");

	if (!run->res.error) {
		if (end == SBX_END_INTERRUPTED)
			run->res.status = SBX_RUN_INTERRUPTED;
		else if (end == SBX_END_DEADLINE)
			run->res.status = SBX_RUN_TIMEOUT;
		else if (!run->res.grade.graded)
			run->res.status = SBX_RUN_FAIL;
		else if (run->res.grade.status == SBX_GRADE_PASS)
			run->res.status = SBX_RUN_PASS;
		else if (run->res.grade.status == SBX_GRADE_PARTIAL)
			run->res.status = SBX_RUN_PARTIAL;
		else
			run->res.status = SBX_RUN_FAIL;
		/* Exited non-zero (or could not start: 126, 127) before complete_task:
		 * graded, but not a real attempt, and never mixed with one. */
		if (end == SBX_END_AGENT_EXIT && run->res.agent_exit != 0 &&
		    run->res.agent_exit != -1) {
			run->res.status = SBX_RUN_AGENT_ERROR;
			run->res.agent_tail = agent_log_tail(run->res.run_dir, 3);
		}
	} else if (end == SBX_END_INTERRUPTED) {
		run->res.status = SBX_RUN_INTERRUPTED;
	}
	/* Not graded (fail, or timeout, agent_error as ended), and the reason said. */
	if (!run->res.error && run->res.grade.error) {
		run->res.error = strdup(run->res.grade.error);
		run->res.error_kind = strdup("grade_error");
	}
	run->res.finished_at = real_ms();
	run->res.total_ms = (double)(sbx_now_ms() - run->t0);
	json = sbx_run_result_json(&run->res);
	if (!json)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return sbx_rundir__write(run->res.run_dir, "result.json", json, strlen(json), err);
}

/*
 * sweep --reuse: the slot's sandbox when it fits, else a new one made for
 * reuse with this run's image and limits, else (GUI, published) a cold
 * launch as always.
 */
static int launch_reused(sbx_run *run, const sbx_run_opts *opts, sbx_error *err)
{
	sbx_warm *w = TAKE_PTR(*opts->reuse_slot);
	const sbx_run_limits *l = &run->res.limits;
	int r;

	if (w && !sbx_run_warm_fits(run, w))
		sbx_warm_free(TAKE_PTR(w));
	if (!w && !run->task->gui && !run->task->harbor && !l->published && !l->engine_seccomp) {
		sbx_warm_opts wo = SBX_WARM_OPTS_INIT;
		sbx_error werr = SBX_ERROR_INIT;

		wo.image = run->res.image;
		wo.id = run->res.run_id;
		wo.engine = opts->engine;
		wo.ttl_s = l->timeout_s + l->grace_s + 60;
		wo.test = opts->test;
		wo.memory = l->memory;
		wo.cpus = l->cpus;
		wo.pids = l->pids;
		wo.runtime = l->runtime[0] ? l->runtime : NULL;
		wo.backend = opts->backend;
		wo.backend_userdata = opts->backend_userdata;
		wo.reuse = opts->reuse;
		r = sbx_warm_new(&w, &wo, &werr);
		if (r < 0) {
			/* -ENOTSUP (an image without reset in place) is said once, by warm.c. */
			if (r != -ENOTSUP)
				sbx_log_warning("reuse: %s; a single-use sandbox instead",
						sbx_error_message(&werr));
			w = NULL;
		} else if (!sbx_run_warm_fits(run, w)) {
			sbx_warm_free(TAKE_PTR(w));
		}
	}
	return w ? sbx_run_launch_warm(run, w, err) : sbx_run_launch(run, err);
}

int sbx_run_execute(const sbx_run_opts *opts, sbx_run **out, sbx_error *err)
{
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	sbx_error lerr = SBX_ERROR_INIT;
	sbx_run_end end;
	int r;

	r = sbx_run_prepare(&run, opts, err);
	if (r < 0)
		return r;
	if (opts->on_prepared)
		opts->on_prepared(run, opts->on_ready_userdata);
	if (opts->interrupted && *opts->interrupted) {
		/* Interrupted while preparing (a task's generator): no sandbox for it. */
		end = SBX_END_INTERRUPTED;
	} else if ((opts->reuse > 1 && opts->reuse_slot ? launch_reused(run, opts, &lerr)
							: sbx_run_launch(run, &lerr)) < 0) {
		bool stopped = opts->interrupted && *opts->interrupted;

		/* Every launch failure reaches result.json: a step that did not record
		 * its own (first wins) is recorded here. */
		if (!stopped)
			sbx_run__set_infra(run, "launch", &lerr);
		end = stopped ? SBX_END_INTERRUPTED : SBX_END_NONE;
	} else {
		end = sbx_run_wait(run);
	}
	r = sbx_run_finish(run, end, err);
	if (opts->reuse > 1 && opts->reuse_slot)
		*opts->reuse_slot = sbx_run_take_warm(run);
	*out = TAKE_PTR(run);
	return r < 0 ? r : 0;
}

void sbx_run_free(sbx_run *run)
{
	if (!run)
		return;
	sbx_run__verifier_discard(run);
	if (run->agent_started && run->agent.pid > 0)
		sbx_agent__stop(&run->agent, 500);
	sbx_warm_free(run->kept_warm);
	sbx_relay_free(run->relay);
	if (run->backend) {
		if (run->backend->id && !run->o.keep)
			run->backend->ops->destroy(run->backend, NULL);
		run->backend->ops->free(run->backend);
	}
	sbx_task_free(run->task);
	sbx_free_all(run->url, run->connection, run->owner, run->res.run_id, run->res.run_dir,
		     run->unix_socket, run->res.task, run->res.error, run->res.error_kind,
		     run->res.reset_found, run->res.agent, run->res.agent_tail, run->res.image,
		     run->res.image_id, run->res.sandbox_id, run->res.backend, run->res.published,
		     run->res.endpoint, run->res.grade.report_text, run->res.grade.report_json,
		     run->res.grade.error, run->res.trajectory_error,
		     run->res.verifier.rewards_json, run->res.verifier.output_tail,
		     run->res.verifier.error);
	sbx_provenance_clear(&run->res.provenance);
	free(run);
}
