/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sbx/backend.h"
#include "sbx/cleanup.h"
#include "sbx/docker.h"
#include "sbx/docker_stream.h"
#include "sbx/docker_tar.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "backend-docker-internal.h"
#include "seccomp_profile.h"

#define EXEC_TIMEOUT_MS (5 * 60 * 1000)
#define PREWARM_STREAMS 3
#define LOG_MAX		(8 * 1024 * 1024)
#define LOG_HEAD_MAX	(64 * 1024)

typedef struct docker_backend {
	sbx_backend base;
	sbx_docker *d;	      /* the lifecycle's thread */
	sbx_docker *d_stream; /* open_stream, under lock */
	pthread_mutex_t lock;
	char *host;	/* NULL: $DOCKER_HOST; the stream connection goes to the same engine */
	bool published; /* the server listens on a port bound on the host's loopback */
	bool reuse;	/* reset in place: bridges reconnect across a server restart */
	bool foreign;	/* any image: the bundle's programs, by absolute path */
	/*
	 * prewarm: bridge streams, each used once: the readiness check's (kept
	 * by the relay, then carrying the task's files) and the relay's warm
	 * ones, so neither the agent's first request nor the host's status
	 * long-poll waits for an exec after a claim.
	 */
	sbx_stream *pending_streams[PREWARM_STREAMS];
	size_t n_pending;
} docker_backend;

/* The user every exec runs as: never the root a published sandbox starts as. */
#define EXEC_USER "1000:1000"

/*
 * --network published: what PID 1 needs to set the firewall before it drops
 * everything (CAP_SETPCAP: the kernel's condition for emptying the bounding set).
 */
/*
 * PID 1 starts as root with these only, to start the agent's spawner as uid
 * 1001 (SETUID, SETGID) and empty the bounding set (SETPCAP); it drops them
 * all and becomes uid 1000 before anything runs. Published mode adds
 * NET_ADMIN for the firewall. (Not SYS_RESOURCE, which would pin the
 * spawner's OOM score: engines in containers often lack it in their own
 * bounding set, and then no container starts at all.)
 */
static const char *const init_cap_add[] = {"SETPCAP", "SETUID", "SETGID", NULL};
static const char *const published_cap_add[] = {"NET_ADMIN", "SETPCAP", "SETUID", "SETGID", NULL};
static const char *const published_dns[] = {"0.0.0.0", NULL}; /* no resolver */
/* What every exec in a published sandbox gets instead of Config.Env's token. */
static const char *const published_exec_env[] = {"SANDBOX_HTTP_TOKEN=", NULL};

/* --- the exec stream as an sbx_stream ------------------------------------- */

typedef struct exec_stream {
	sbx_stream base;
	sbx_docker_stream *s;
} exec_stream;

static ssize_t es_read(sbx_stream *s, void *buf, size_t n, int timeout_ms)
{
	exec_stream *e = (exec_stream *)s;

	for (;;) {
		int which = SBX_DOCKER_STDOUT;
		ssize_t r = sbx_docker_stream_read(e->s, buf, n, &which, timeout_ms, NULL);

		if (r == -EAGAIN)
			r = -ETIMEDOUT;
		if (r > 0 && which == SBX_DOCKER_STDERR) {
			sbx_log_debug("sandbox-bridge: %.*s", (int)(r > 200 ? 200 : r),
				      (const char *)buf);
			continue;
		}
		return r;
	}
}

static int es_write(sbx_stream *s, const void *buf, size_t n)
{
	exec_stream *e = (exec_stream *)s;

	return sbx_docker_stream_write(e->s, buf, n, 60000, NULL);
}

static bool es_stale(sbx_stream *s)
{
	exec_stream *e = (exec_stream *)s;
	struct pollfd p = {.fd = sbx_docker_stream_fd(e->s), .events = POLLIN};

	return sbx_docker_stream_pending(e->s) || poll(&p, 1, 0) != 0;
}

static void es_close(sbx_stream *s)
{
	exec_stream *e = (exec_stream *)s;

	sbx_docker_stream_free(e->s);
	free(e);
}

static const sbx_stream_ops exec_stream_ops = {es_read, es_write, es_stale, es_close};

/* --- operations ------------------------------------------------------------ */

/* Reads back what the engine applied from its inspect answer. */
static void read_applied(sbx_sandbox_applied *a, const char *raw)
{
	_cleanup_json_ cJSON *j = NULL;
	const cJSON *hc, *cfg, *it;

	if (!raw || sbx_json_parse(raw, strlen(raw), &j, NULL) < 0)
		return;
	hc = sbx_json_get(j, "HostConfig");
	cfg = sbx_json_get(j, "Config");
	a->memory = (int64_t)sbx_json_get_number(hc, "Memory", 0);
	a->nano_cpus = (int64_t)sbx_json_get_number(hc, "NanoCpus", 0);
	a->pids = (int64_t)sbx_json_get_number(hc, "PidsLimit", 0);
	snprintf(a->runtime, sizeof(a->runtime), "%s", sbx_json_get_string(hc, "Runtime", ""));
	snprintf(a->network_mode, sizeof(a->network_mode), "%s",
		 sbx_json_get_string(hc, "NetworkMode", ""));
	snprintf(a->user, sizeof(a->user), "%s", sbx_json_get_string(cfg, "User", ""));
	a->readonly_rootfs = sbx_json_get_bool(hc, "ReadonlyRootfs", false);
	a->privileged = sbx_json_get_bool(hc, "Privileged", false);
	a->init = sbx_json_get_bool(hc, "Init", false);
	cJSON_ArrayForEach (it, sbx_json_get(hc, "CapDrop"))
		a->cap_drop_all |= cJSON_IsString(it) && strcasecmp(it->valuestring, "ALL") == 0;
	a->cap_add = (unsigned)cJSON_GetArraySize(sbx_json_get(hc, "CapAdd"));
	cJSON_ArrayForEach (it, sbx_json_get(hc, "CapAdd"))
		if (cJSON_IsString(it) && strlen(a->cap_add_names) + strlen(it->valuestring) + 2 <
						  sizeof(a->cap_add_names))
			snprintf(a->cap_add_names + strlen(a->cap_add_names),
				 sizeof(a->cap_add_names) - strlen(a->cap_add_names), "%s%s",
				 a->cap_add_names[0] ? "," : "", it->valuestring);
	it = sbx_json_get(hc, "Dns");
	a->dns_off = cJSON_GetArraySize(it) == 1 && cJSON_IsString(cJSON_GetArrayItem(it, 0)) &&
		     strcmp(cJSON_GetArrayItem(it, 0)->valuestring, "0.0.0.0") == 0;
	snprintf(a->seccomp, sizeof(a->seccomp), "default");
	cJSON_ArrayForEach (it, sbx_json_get(hc, "SecurityOpt")) {
		if (!cJSON_IsString(it))
			continue;
		a->no_new_privileges |= strncmp(it->valuestring, "no-new-privileges", 17) == 0 &&
					!strstr(it->valuestring, "false");
		/* The engine keeps the profile's text; ours is known by its content. */
		if (strncmp(it->valuestring, "seccomp=", 8) == 0)
			snprintf(a->seccomp, sizeof(a->seccomp), "%s",
				 strcmp(it->valuestring + 8, "unconfined") == 0 ? "unconfined"
				 : strcmp(it->valuestring + 8, sbx_seccomp_profile) == 0 ||
						 strcmp(it->valuestring + 8,
							sbx_seccomp_profile_runsc) == 0
					 ? "sandbox"
					 : "custom");
	}
	/* Host paths only: the any-image bundle is a named volume, read-only, nothing of the host.
	 */
	a->binds = 0;
	cJSON_ArrayForEach (it, sbx_json_get(hc, "Binds"))
		a->binds += !cJSON_IsString(it) || it->valuestring[0] == '/';
	a->known = true;
}

/* At most 3 files of 8 MiB on the engine's disk (local compresses the older two). */
static const sbx_docker_kv log_opts[] = {{"max-size", "8m"}, {"max-file", "3"}};

/*
 * d_stream, opened on first use (db->lock held): the connection of every
 * call that may run while the copy-in thread uses db->d.
 */
static int open_locked_conn(docker_backend *db, sbx_error *err)
{
	/* Same engine, same API version: no second negotiation round trip. */
	sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
	int r;

	if (db->d_stream)
		return 0;
	o.api_version = sbx_docker_api_version(db->d);
	o.host = db->host;
	r = sbx_docker_open(&db->d_stream, &o, err);
	if (r >= 0 && db->published &&
	    (r = sbx_docker_set_exec_env(db->d_stream, published_exec_env, err)) < 0) {
		sbx_docker_free(db->d_stream);
		db->d_stream = NULL;
	}
	return r;
}

/*
 * Once created: the stream connection opened now, so the first bridge after
 * start costs no extra round trip, and what the engine applied read back.
 */
static void read_back(docker_backend *db, sbx_backend *b)
{
	sbx_docker_container *c = NULL;

	/* The stream connection now, so the first bridge after start costs no extra round trip. */
	pthread_mutex_lock(&db->lock);
	open_locked_conn(db, NULL); /* on failure, open_stream tries again */
	pthread_mutex_unlock(&db->lock);
	if (sbx_docker_container_inspect(db->d, b->id, &c, NULL) == 0) {
		if (c->image_id)
			b->image_id = strdup(c->image_id);
		read_applied(&b->applied, c->raw_json);
	}
	sbx_docker_container_free(c);
}

/*
 * The container's hardening and limits: root with PID 1's few capabilities,
 * every other one dropped, our seccomp profile (*seccomp, malloc'd), a
 * read-only root, the tmpfs, the limits, the network. security_opt has room
 * for three entries and stays the caller's.
 */
static int fill_hardening(sbx_docker_container_opts *o, const sbx_sandbox_spec *spec,
			  const char **env, sbx_docker_kv *labels, size_t nl, sbx_docker_kv *tmpfs,
			  size_t nt, const char *security_opt[3], char **seccomp, sbx_error *err)
{
	static const char *const cap_drop_all[] = {"ALL", NULL};
	bool runsc = strcmp(spec->limits.runtime, "runsc") == 0;

	o->image = spec->image;
	o->env = env;
	o->user = "0:0";
	o->cap_add = init_cap_add;
	o->hostname = "sandbox";
	o->labels = labels;
	o->n_labels = nl;
	o->cap_drop = cap_drop_all;
	/* Ours denies what Docker's allows and no sandbox needs: AF_VSOCK, io_uring, ptrace...
	 * runsc applies it only with --oci-seccomp, and then needs its own (meson.build). */
	if (!spec->limits.engine_seccomp &&
	    asprintf(seccomp, "seccomp=%s",
		     runsc ? sbx_seccomp_profile_runsc : sbx_seccomp_profile) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	security_opt[1] = *seccomp;
	o->security_opt = security_opt;
	o->readonly_rootfs = true;
	o->tmpfs = tmpfs;
	o->n_tmpfs = nt;
	o->memory = (int64_t)spec->limits.memory;
	o->memory_swap = (int64_t)spec->limits.memory; /* no swap on top */
	o->nano_cpus = (int64_t)(spec->limits.cpus * 1e9);
	o->pids_limit = runsc ? (int64_t)spec->limits.pids * SBX_BACKEND_RUNSC_PIDS_FACTOR
			      : spec->limits.pids;
	o->runtime = spec->limits.runtime[0] ? spec->limits.runtime : NULL;
	o->init = false; /* our own init is PID 1 */
	/* Bounded by sandboxctl, not by whatever the host's daemon.json says (or not). */
	o->log_driver = "local";
	o->log_opts = log_opts;
	o->n_log_opts = SBX_ELEMENTSOF(log_opts);
	o->stop_timeout = 2;
	/* Whatever the image says: our PID 1 stops on SIGTERM, and an image's HEALTHCHECK
	 * would run as the container's user (root, with PID 1's three capabilities). */
	o->stop_signal = "SIGTERM";
	o->no_healthcheck = true;
	if (spec->published) {
		/*
		 * The server's port on the host's loopback only, an engine-picked
		 * port; no DNS. PID 1 starts as root with the four capabilities it
		 * needs to drop egress (IPv4 and IPv6), then drops them all and
		 * becomes uid 1000 before anything else runs; no-new-privileges stays.
		 */
		static const sbx_docker_port port = {SBX_SANDBOX_HTTP_PORT_SPEC, "127.0.0.1", "0"};

		o->cap_add = published_cap_add;
		o->network_mode = "bridge";
		o->dns = published_dns;
		o->ports = &port;
		o->n_ports = 1;
	} else {
		o->network_mode = "none";
		o->network_disabled = true;
	}
	return 0;
}

static int db_create(sbx_backend *b, const sbx_sandbox_spec *spec, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	char created[32], deadline[32], ws[96], tmp[96], run[96], grace[32], env_deadline[64],
		env_task_deadline[64], env_grace[48], env_run_id[160], env_max_procs[64],
		env_ws[256];
	const char *env[64], *binds[2] = {NULL, NULL}, *cmd[24];
	const char *workspace = spec->workspace ? spec->workspace : SBX_SANDBOX_WORKSPACE;
	char bind[160];
	sbx_image_bundle bundle;
	sbx_docker_kv labels[7], tmpfs[5 + SBX_BUNDLE_MAX_VOLUMES];
	size_t nt = 3;
	size_t nl = 0, ne = 0;
	_cleanup_free_ char *id = NULL, *seccomp = NULL;
	const char *security_opt[3] = {"no-new-privileges:true", NULL, NULL};
	bool runsc = strcmp(spec->limits.runtime, "runsc") == 0;
	int r;

	if (workspace[0] != '/' || strlen(workspace) > sizeof(env_ws) - 32 ||
	    strchr(workspace, ','))
		return sbx_error_set(err, -EINVAL,
				     "workspace '%.200s': not an absolute path (at most 200 bytes, "
				     "no ',')",
				     workspace);
	snprintf(created, sizeof(created), "%" PRId64, spec->created);
	snprintf(deadline, sizeof(deadline), "%" PRId64, spec->deadline);
	snprintf(grace, sizeof(grace), "%u", spec->limits.grace_s);
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_RUN_ID, spec->run_id};
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_TASK, spec->task};
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_OWNER, spec->owner ? spec->owner : ""};
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_CREATED, created};
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_DEADLINE, deadline};
	if (spec->test)
		labels[nl++] = (sbx_docker_kv){SBX_LABEL_TEST, "1"};

	/* Size-capped scratch; nothing of the host is mounted. */
	snprintf(ws, sizeof(ws), "rw,nosuid,nodev,size=%" PRIu64 ",uid=1000,gid=1000,mode=2775",
		 spec->workspace_bytes);
	snprintf(tmp, sizeof(tmp), "rw,nosuid,nodev,size=%" PRIu64 ",mode=1777", spec->tmp_bytes);
	snprintf(run, sizeof(run),
		 "rw,nosuid,nodev,noexec,size=%" PRIu64 ",uid=1000,gid=1000,mode=0755",
		 spec->run_bytes);
	tmpfs[0] = (sbx_docker_kv){workspace, ws};
	tmpfs[1] = (sbx_docker_kv){"/tmp", tmp};
	tmpfs[2] = (sbx_docker_kv){"/run", run};
	if (spec->verifier) {
		/* Harbor's paths: the tests go in as the server's uid, test.sh writes its logs. */
		tmpfs[nt++] =
			(sbx_docker_kv){"/tests", "rw,nosuid,nodev,size=64m,uid=1000,gid=1000,"
						  "mode=2775"};
		tmpfs[nt++] = (sbx_docker_kv){"/logs", "rw,nosuid,nodev,size=64m,mode=1777"};
	}

	snprintf(env_deadline, sizeof(env_deadline), "SANDBOX_DEADLINE=%" PRId64, spec->deadline);
	/* The server's task session reads this one, so get_task_status shows the deadline. */
	snprintf(env_task_deadline, sizeof(env_task_deadline), "SANDBOX_TASK_DEADLINE=%" PRId64,
		 spec->deadline);
	snprintf(env_grace, sizeof(env_grace), "SANDBOX_GRACE=%u", spec->limits.grace_s);
	snprintf(env_run_id, sizeof(env_run_id), "SANDBOX_RUN_ID=%s", spec->run_id);
	env[ne++] = env_deadline;
	env[ne++] = env_task_deadline;
	env[ne++] = env_grace;
	env[ne++] = env_run_id;
	env[ne++] = "SANDBOX_RUN_DIR=/run/sandbox";
	env[ne++] = "SANDBOX_SOCKET=" SBX_SANDBOX_SOCKET;
	snprintf(env_ws, sizeof(env_ws), "SANDBOX_WORKSPACE=%s", workspace);
	env[ne++] = env_ws;
	env[ne++] = spec->published ? "SANDBOX_NETWORK=published" : "SANDBOX_NETWORK=none";
	/* gVisor: the engine's pids limit counts the Sentry's host tasks (several per
	 * guest process), so the sandbox's own process limit is what stops a fork bomb. */
	if (runsc) {
		snprintf(env_max_procs, sizeof(env_max_procs), "SANDBOX_EXEC_MAX_PROCESSES=%u",
			 spec->limits.pids);
		env[ne++] = env_max_procs;
	}
	for (size_t i = 0; spec->env && spec->env[i] && ne < SBX_ELEMENTSOF(env) - 1; i++)
		env[ne++] = spec->env[i];
	r = sbx_image_prepare_foreign(db->d, spec->image, &bundle, err);
	if (r < 0)
		return r;
	if (bundle.volume[0]) {
		r = sbx_backend_docker__foreign(
			db->d, spec, &bundle, &o, env, &ne, SBX_ELEMENTSOF(env), tmpfs, &nt,
			SBX_ELEMENTSOF(tmpfs), bind, sizeof(bind), cmd, SBX_ELEMENTSOF(cmd), err);
		if (r < 0)
			return r;
		db->foreign = true;
		binds[0] = bind;
		o.binds = binds;
		snprintf(b->applied.bundle, sizeof(b->applied.bundle), "%.12s", bundle.hash);
	}
	/* A foreign image stays single use: a reset wipes the writable places of
	 * ours, not the VOLUMEs a foreign image may add (sbx_warm_new reads applied). */
	if (spec->reuse && !db->foreign && ne < SBX_ELEMENTSOF(env) - 1)
		env[ne++] = "SANDBOX_REUSE=1";
	env[ne] = NULL;

	r = fill_hardening(&o, spec, env, labels, nl, tmpfs, nt, security_opt, &seccomp, err);
	if (r < 0)
		return r;
	db->published = spec->published;
	db->reuse = spec->reuse && !db->foreign;
	/* The published port's token is in Config.Env for PID 1 alone: every exec
	 * (bridges, tar, a Harbor task's commands) would inherit it. */
	if (spec->published && (r = sbx_docker_set_exec_env(db->d, published_exec_env, err)) < 0)
		return r;

	r = sbx_docker_container_create(db->d, &o, &id, err);
	if (r < 0)
		return r;
	if ((db->foreign || spec->workspace) &&
	    (r = sbx_backend_docker__foreign_check(db->d, id, spec->image, workspace, db->foreign,
						   err)) < 0) {
		sbx_docker_container_remove(db->d, id, true, true, NULL);
		return r;
	}
	b->id = TAKE_PTR(id);
	read_back(db, b);
	return 0;
}

static int db_start(sbx_backend *b, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	_cleanup_free_ char *ip = NULL;
	int r, port = 0;

	r = sbx_docker_container_start(db->d, b->id, err);
	if (r < 0 || !db->published)
		return r;
	/* The engine picks the host port at start. */
	r = sbx_docker_container_host_port(db->d, b->id, SBX_SANDBOX_HTTP_PORT_SPEC, &ip, &port,
					   err);
	if (r < 0)
		return sbx_error_prefix(err, r, "container '%s': published port", b->id);
	if (!ip || strcmp(ip, "127.0.0.1") != 0 || port <= 0 || port > 65535)
		return sbx_error_set(err, -EPROTO,
				     "container '%s': port %s published on '%s:%d', not on "
				     "127.0.0.1; refusing to go on",
				     b->id, SBX_SANDBOX_HTTP_PORT_SPEC, ip ? ip : "", port);
	free(b->endpoint);
	if (asprintf(&b->endpoint, "127.0.0.1:%d", port) < 0) {
		b->endpoint = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

int sbx_sandbox_files_pack(const sbx_sandbox_file *files, size_t n, sbx_docker_tar **out,
			   const void **data, size_t *len, sbx_error *err)
{
	sbx_docker_tar *tar = NULL;
	int r = sbx_docker_tar_new(&tar, 0, err);

	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (strchr(files[i].name, '/')) {
			_cleanup_free_ char *dir = strdup(files[i].name);

			r = dir ? sbx_docker_tar_add_dir(tar, dirname(dir), 02775, 1000, 1000, err)
				: sbx_error_set(err, -ENOMEM, "out of memory");
		}
		if (r >= 0)
			r = sbx_docker_tar_add_file(tar, files[i].name, files[i].data, files[i].len,
						    0664, 1000, 1000, err);
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

static int db_copy_in(sbx_backend *b, const char *dest, const sbx_sandbox_file *files, size_t n,
		      sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *t = NULL;
	const void *tar;
	size_t len;
	int r;

	r = sbx_sandbox_files_pack(files, n, &t, &tar, &len, err);
	if (r < 0)
		return r;
	return sbx_docker_exec_copy_in(db->d, b->id, dest, EXEC_USER, tar, len, EXEC_TIMEOUT_MS,
				       err);
}

/* A fresh exec of the bridge: one stream to the server's socket. */
static int open_bridge(docker_backend *db, sbx_stream **out, sbx_error *err)
{
	sbx_docker_exec_opts o = SBX_DOCKER_EXEC_OPTS_INIT;
	_cleanup_free_ char *exec_id = NULL;
	sbx_docker_stream *ds = NULL;
	exec_stream *es;
	int r;

	o.user = EXEC_USER;
	o.cmd = db->foreign ? (const char *const[]){SBX_BUNDLE_BRIDGE, SBX_SANDBOX_SOCKET, NULL}
		: db->reuse
			? (const char *const[]){"sandbox-bridge", "-r", SBX_SANDBOX_SOCKET, NULL}
			: (const char *const[]){"sandbox-bridge", SBX_SANDBOX_SOCKET, NULL};
	o.attach_stdin = true;
	pthread_mutex_lock(&db->lock);
	r = open_locked_conn(db, err);
	if (r >= 0)
		r = sbx_docker_exec_create(db->d_stream, db->base.id, &o, &exec_id, err);
	if (r >= 0)
		r = sbx_docker_stream_open_exec(db->d_stream, exec_id, false, &ds, err);
	pthread_mutex_unlock(&db->lock);
	if (r < 0)
		return r;
	es = calloc(1, sizeof(*es));
	if (!es) {
		sbx_docker_stream_free(ds);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	es->base.ops = &exec_stream_ops;
	es->s = ds;
	*out = &es->base;
	return 0;
}

static int db_open_stream(sbx_backend *b, sbx_stream **out, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;

	pthread_mutex_lock(&db->lock);
	while (db->n_pending > 0) {
		sbx_stream *s = TAKE_PTR(db->pending_streams[--db->n_pending]);

		/* The server drops a connection idle for 300 s; a pool waits up to its TTL. */
		if (!sbx_stream_stale(s)) {
			pthread_mutex_unlock(&db->lock);
			*out = s;
			return 0;
		}
		sbx_stream_close(s);
	}
	pthread_mutex_unlock(&db->lock);
	return open_bridge(db, out, err);
}

static int db_copy_out(sbx_backend *b, const char *dir, const char *host_dir, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	sbx_docker_extract_opts eo = SBX_DOCKER_EXTRACT_OPTS_INIT;

	eo.strip_components = 1;
	eo.max_total_bytes = 512ULL * 1024 * 1024;
	return sbx_docker_exec_copy_out(db->d, b->id, dir, EXEC_USER, host_dir, &eo, NULL,
					EXEC_TIMEOUT_MS, err);
}

static int db_status(sbx_backend *b, sbx_sandbox_status *out, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	sbx_docker_container *c = NULL;
	int r;

	/*
	 * The readiness loop asks this while the copy-in thread execs on db->d
	 * (a published port fails fast, so it asks often): the locked connection,
	 * never db->d (a CURL handle is not to be shared between threads).
	 */
	pthread_mutex_lock(&db->lock);
	r = open_locked_conn(db, err);
	if (r >= 0)
		r = sbx_docker_container_inspect(db->d_stream, b->id, &c, err);
	pthread_mutex_unlock(&db->lock);
	if (r < 0)
		return r;
	memset(out, 0, sizeof(*out));
	out->running = c->running;
	out->oom_killed = c->oom_killed;
	out->exit_code = c->exit_code;
	snprintf(out->detail, sizeof(out->detail), "%s", c->error ? c->error : "");
	sbx_docker_container_free(c);
	return 0;
}

/*
 * container.log: the first 64 KiB (PID 1's start-up lines) and the last
 * LOG_MAX bytes, with a line where the middle of a flood was cut, each cut
 * edge moved to a line boundary.
 */
static int db_logs(sbx_backend *b, sbx_buf *out, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	_cleanup_(sbx_buf_free) sbx_buf head = SBX_BUF_INIT(LOG_HEAD_MAX);
	_cleanup_(sbx_buf_free) sbx_buf tail = SBX_BUF_INIT(2 * LOG_MAX);
	uint64_t cut = 0;
	size_t hl, skip = 0;
	int r = sbx_docker_container_logs_bounded(db->d, b->id, LOG_HEAD_MAX, LOG_MAX, &head, &tail,
						  &cut, err);

	hl = head.len;
	if (cut) {
		const char *nl = hl ? memrchr(head.data, '\n', hl) : NULL;
		const char *first = tail.len ? memchr(tail.data, '\n', tail.len) : NULL;

		if (nl) {
			cut += hl - (size_t)(nl + 1 - head.data);
			hl = (size_t)(nl + 1 - head.data);
		}
		if (first && (size_t)(first - tail.data) < 4096) {
			skip = (size_t)(first + 1 - tail.data);
			cut += skip;
		}
	}
	if (sbx_buf_append(out, head.data ? head.data : "", hl) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (cut &&
	    sbx_buf_printf(out,
			   "[sandboxctl: %" PRIu64 " bytes (%.1f MiB) of the log cut here; the "
			   "last %d MiB follow. The engine keeps at most %s x %s of a "
			   "container's output: older lines may be gone too]\n",
			   cut, (double)cut / (1024 * 1024), LOG_MAX / (1024 * 1024),
			   log_opts[1].value, log_opts[0].value) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (tail.len > skip && sbx_buf_append(out, tail.data + skip, tail.len - skip) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return r;
}

static int db_destroy(sbx_backend *b, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	int r;

	if (!b->id)
		return 0;
	r = sbx_docker_container_remove(db->d, b->id, true, true, err);
	if (r == -ENOENT)
		r = 0;
	if (r >= 0) {
		free(b->id);
		b->id = NULL;
	}
	return r;
}

static int db_prewarm(sbx_backend *b, const char *dest, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	int r;

	/* The files go over a stream now (PUT /control/files): only an older image's
	 * server needs the exec'd tar, and then a fresh one is spawned. */
	(void)dest;
	while (db->n_pending < PREWARM_STREAMS) {
		sbx_stream *s = NULL;

		r = open_bridge(db, &s, err);
		if (r < 0)
			return r;
		pthread_mutex_lock(&db->lock);
		db->pending_streams[db->n_pending++] = s;
		pthread_mutex_unlock(&db->lock);
	}
	return 0;
}

static void db_keep_stream(sbx_backend *b, sbx_stream *s)
{
	docker_backend *db = (docker_backend *)b;

	pthread_mutex_lock(&db->lock);
	if (db->n_pending < PREWARM_STREAMS) {
		db->pending_streams[db->n_pending++] = s;
		s = NULL;
	}
	pthread_mutex_unlock(&db->lock);
	sbx_stream_close(s);
}

static void db_free(sbx_backend *b)
{
	docker_backend *db = (docker_backend *)b;

	if (!b)
		return;
	for (size_t i = 0; i < db->n_pending; i++)
		sbx_stream_close(db->pending_streams[i]);
	sbx_docker_free(db->d);
	sbx_docker_free(db->d_stream);
	pthread_mutex_destroy(&db->lock);
	sbx_free_all(db->host, b->id, b->image_id, b->endpoint);
	free(db);
}

static int db_exec(sbx_backend *b, const sbx_backend_exec *x, sbx_buf *out, sbx_buf *errout,
		   int *exit_code, sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;
	sbx_docker_exec_opts o = SBX_DOCKER_EXEC_OPTS_INIT;
	_cleanup_free_ char *id = NULL;
	int r;

	o.cmd = x->argv;
	o.env = x->env;
	o.user = x->user ? x->user : EXEC_USER;
	o.working_dir = x->cwd;
	r = sbx_docker_exec_create(db->d, b->id, &o, &id, err);
	if (r >= 0)
		r = sbx_docker_exec_start(db->d, id, false,
					  x->timeout_ms ? x->timeout_ms : EXEC_TIMEOUT_MS,
					  x->max_bytes, out, errout, err);
	if (r >= 0)
		r = sbx_docker_exec_inspect(db->d, id, NULL, exit_code, err);
	return r;
}

static int db_copy_in_tar(sbx_backend *b, const char *dest, const void *tar, size_t len,
			  sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;

	return sbx_docker_exec_copy_in(db->d, b->id, dest, EXEC_USER, tar, len, EXEC_TIMEOUT_MS,
				       err);
}

static int db_image_tar(sbx_backend *b, const char *path, size_t max, void **tar, size_t *len,
			sbx_error *err)
{
	docker_backend *db = (docker_backend *)b;

	return sbx_docker_archive_get_raw(db->d, b->id, path, max, tar, len, err);
}

static const sbx_backend_ops docker_ops = {
	.name = "docker",
	.create = db_create,
	.start = db_start,
	.copy_in = db_copy_in,
	.open_stream = db_open_stream,
	.copy_out = db_copy_out,
	.status = db_status,
	.logs = db_logs,
	.destroy = db_destroy,
	.free = db_free,
	.prewarm = db_prewarm,
	.keep_stream = db_keep_stream,
	.exec = db_exec,
	.copy_in_tar = db_copy_in_tar,
	.image_tar = db_image_tar,
};

int sbx_backend_docker_new(sbx_backend **out, sbx_error *err)
{
	return sbx_backend_docker_new_at(out, NULL, err);
}

int sbx_backend_docker_new_at(sbx_backend **out, const char *host, sbx_error *err)
{
	docker_backend *db = calloc(1, sizeof(*db));
	sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
	int r;

	if (!db)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	db->base.ops = &docker_ops;
	pthread_mutex_init(&db->lock, NULL);
	if (host && !(db->host = strdup(host))) {
		db_free(&db->base);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	o.host = db->host;
	r = sbx_docker_open(&db->d, &o, err);
	if (r < 0) {
		db_free(&db->base);
		return r;
	}
	*out = &db->base;
	return 0;
}
