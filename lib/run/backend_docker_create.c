/* SPDX-License-Identifier: MIT */
/*
 * The Docker backend's create: the container a sandbox is, hardened
 * (capabilities, seccomp, read-only root, tmpfs, limits, network), and what
 * the engine says it applied, read back for result.json. The rest of the
 * backend (start, streams, copies, logs, removal) is backend_docker.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sbx/backend.h"
#include "sbx/cleanup.h"
#include "sbx/docker.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "backend-docker-internal.h"
#include "seccomp_profile.h"

/*
 * PID 1 starts as root with these only, to start the agent's spawner as uid
 * 1001 (SETUID, SETGID) and empty the bounding set (SETPCAP); it drops them
 * all and becomes uid 1000 before anything runs. Published mode adds
 * NET_ADMIN for the firewall. (Not SYS_RESOURCE, which would pin the
 * spawner's OOM score: engines in containers often lack it in their own
 * bounding set, and then no container starts at all.)
 */
static const char *const init_cap_add[] = {"SETPCAP", "SETUID", "SETGID", NULL};
/*
 * --network published: what PID 1 needs to set the firewall before it drops
 * everything (CAP_SETPCAP: the kernel's condition for emptying the bounding set).
 */
static const char *const published_cap_add[] = {"NET_ADMIN", "SETPCAP", "SETUID", "SETGID", NULL};
static const char *const published_dns[] = {"0.0.0.0", NULL}; /* no resolver */

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

/*
 * Once created: the stream connection opened now, so the first bridge after
 * start costs no extra round trip, and what the engine applied read back.
 */
static void read_back(docker_backend *db, sbx_backend *b)
{
	sbx_docker_container *c = NULL;

	/* The stream connection now, so the first bridge after start costs no extra round trip. */
	pthread_mutex_lock(&db->lock);
	sbx_backend_docker__open_locked_conn(db, NULL); /* on failure, open_stream tries again */
	pthread_mutex_unlock(&db->lock);
	if (sbx_docker_container_inspect(db->d, b->id, &c, NULL) == 0) {
		if (c->image_id)
			b->image_id = strdup(c->image_id);
		read_applied(&b->applied, c->raw_json);
	}
	sbx_docker_container_free(c);
}

/* The sandbox's labels (at most 6), with the texts of its times in created and deadline. */
static size_t fill_labels(sbx_docker_kv *labels, const sbx_sandbox_spec *spec, char created[32],
			  char deadline[32])
{
	size_t nl = 0;

	snprintf(created, 32, "%" PRId64, spec->created);
	snprintf(deadline, 32, "%" PRId64, spec->deadline);
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_RUN_ID, spec->run_id};
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_TASK, spec->task};
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_OWNER, spec->owner ? spec->owner : ""};
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_CREATED, created};
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_DEADLINE, deadline};
	if (spec->test)
		labels[nl++] = (sbx_docker_kv){SBX_LABEL_TEST, "1"};
	return nl;
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
	o->log_opts = sbx_backend_docker__log_opts;
	o->n_log_opts = SBX_ELEMENTSOF(sbx_backend_docker__log_opts);
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

int sbx_backend_docker__create(sbx_backend *b, const sbx_sandbox_spec *spec, sbx_error *err)
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
	snprintf(grace, sizeof(grace), "%u", spec->limits.grace_s);
	nl = fill_labels(labels, spec, created, deadline);

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
	if (spec->published &&
	    (r = sbx_docker_set_exec_env(db->d, sbx_backend_docker__published_exec_env, err)) < 0)
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
