/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Docker Engine API client: libcurl over the engine's unix socket (or tcp://
 * with TLS). Never shells out to the docker CLI.
 *
 * Conventions:
 *  - Every call returns 0 or a negative errno and fills err (may be NULL) with
 *    one line that names the object: "container 'abc': start failed: HTTP 409:
 *    <engine message>". err->http_status holds the HTTP status when the engine
 *    answered. Errno mapping of engine answers: 400 -EINVAL, 401/403 -EACCES,
 *    404 -ENOENT, 409 -EBUSY, 500+ -EIO. Transport: -ENOENT/-ECONNREFUSED (no
 *    engine), -EACCES (socket permission), -ETIMEDOUT, -EPROTO (API too old
 *    or a malformed answer).
 *  - Every request has a connect timeout and a total timeout; nothing hangs.
 *  - Out-parameters are written only on success; the caller frees them with
 *    the matching *_free() (all accept NULL).
 *  - An sbx_docker handle is not thread-safe: one per thread. Handles are
 *    cheap; the connection is kept alive between calls.
 *  - Options structs carry a version; start from the _INIT macro. Zero means
 *    "engine default" for every field unless said otherwise.
 *
 * Companion headers: sbx/docker_tar.h (build tars, extract untrusted tars
 * safely), sbx/docker_stream.h (hijacked bidirectional exec/attach stream).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/docker_tar.h"
#include "sbx/error.h"

/* The API versions this client speaks; the engine's is clamped to this range. */
#define SBX_DOCKER_API_MIN "1.40"
#define SBX_DOCKER_API_MAX "1.43"

typedef struct sbx_docker sbx_docker;

/* A key/value pair: labels, tmpfs mounts (path -> options), build args. */
typedef struct sbx_docker_kv {
	const char *key;
	const char *value;
} sbx_docker_kv;

/* ---------------------------------------------------------------- client */

typedef struct sbx_docker_opts {
	unsigned int version;
	/* "unix:///path", "tcp://host:port"; NULL: $DOCKER_HOST, else unix:///var/run/docker.sock
	 */
	const char *host;
	/* Directory with ca.pem, cert.pem, key.pem for tcp://; NULL: $DOCKER_CERT_PATH */
	const char *cert_path;
	/* TLS verification for tcp://: -1 from $DOCKER_TLS_VERIFY (non-empty = on), 0 off, 1 on */
	int tls_verify;
	long connect_timeout_ms; /* 0: 5000 */
	long request_timeout_ms; /* 0: 60000; for ordinary calls (build/wait take their own) */
	/* Force an API version such as "1.41" instead of negotiating; NULL negotiates. */
	const char *api_version;
} sbx_docker_opts;

#define SBX_DOCKER_OPTS_VERSION 1
#define SBX_DOCKER_OPTS_INIT                                                                       \
	{                                                                                          \
		.version = SBX_DOCKER_OPTS_VERSION, .tls_verify = -1                               \
	}

/*
 * Connects to the engine and negotiates the API version (GET /_ping, then the
 * lower of the engine's and SBX_DOCKER_API_MAX). opts may be NULL. Fails with
 * a clear one-line error when the engine is not running (-ENOENT,
 * -ECONNREFUSED), the socket is not accessible (-EACCES) or the engine's API
 * is older than SBX_DOCKER_API_MIN (-EPROTO). *out is freed with
 * sbx_docker_free.
 */
int sbx_docker_open(sbx_docker **out, const sbx_docker_opts *opts, sbx_error *err);

/* Closes the connection and frees the handle. Accepts NULL. */
void sbx_docker_free(sbx_docker *d);

/* The negotiated API version ("1.41"); owned by the handle. */
const char *sbx_docker_api_version(const sbx_docker *d);

/* The engine address in use ("unix:///var/run/docker.sock"); owned by the handle. */
const char *sbx_docker_host(const sbx_docker *d);

/* GET /_ping. Cheap liveness check. */
int sbx_docker_ping(sbx_docker *d, sbx_error *err);

/* One OCI runtime the engine registers (GET /info's Runtimes). */
typedef struct sbx_docker_runtime {
	char *name;  /* "runsc" */
	char *path;  /* its binary, "/usr/bin/runsc"; "" when the engine does not say */
	char **args; /* NULL-terminated runtimeArgs: "--network=none", "--oci-seccomp" */
} sbx_docker_runtime;

/* What `doctor` reports: GET /version and GET /info combined. */
typedef struct sbx_docker_system {
	char *server_version;	 /* "20.10.24+dfsg1" */
	char *api_version;	 /* the engine's maximum, "1.41" */
	char *min_api_version;	 /* "1.12" */
	char *os;		 /* "linux" */
	char *arch;		 /* "amd64" */
	char *kernel_version;	 /* "6.1.0-13-amd64" */
	char *operating_system;	 /* "Debian GNU/Linux 12 (bookworm)" */
	char *storage_driver;	 /* "overlay2" */
	char *cgroup_version;	 /* "1", "2", or "" when the engine does not say */
	char *cgroup_driver;	 /* "systemd", "cgroupfs" */
	char *default_runtime;	 /* "runc" */
	char **runtimes;	 /* NULL-terminated names: "runc", "runsc", ... */
	char **security_options; /* NULL-terminated: "name=seccomp,profile=default", ... */
	int64_t mem_total;	 /* bytes */
	int ncpu;
	bool rootless; /* "name=rootless" among security_options */
	/* Every registered runtime with its path and args, in the order of runtimes */
	sbx_docker_runtime *runtime_info;
	size_t n_runtime_info;
} sbx_docker_system;

/* Fills *out (free with sbx_docker_system_free). */
int sbx_docker_system_get(sbx_docker *d, sbx_docker_system **out, sbx_error *err);
void sbx_docker_system_free(sbx_docker_system *s);

/* True when runtime (e.g. "runsc") is registered with the engine. */
bool sbx_docker_system_has_runtime(const sbx_docker_system *s, const char *runtime);

/* True when runtime is registered as gVisor: named "runsc", or its binary is runsc. */
bool sbx_docker_system_runtime_is_gvisor(const sbx_docker_system *s, const char *runtime);

/*
 * True when runtime is registered as gVisor (named "runsc", or its binary is
 * runsc) and its runtimeArgs do not turn --oci-seccomp on: then runsc ignores
 * every container's seccomp profile. Reads the args as runsc's flag parser
 * does ("-oci-seccomp", "--oci-seccomp=true", the last one wins). False for
 * any other runtime.
 */
bool sbx_docker_system_runsc_ignores_seccomp(const sbx_docker_system *s, const char *runtime);

/* ---------------------------------------------------------------- progress */

/*
 * One line of the engine's JSON progress stream (build, import). Pointers are
 * valid only during the callback. errorDetail lines are not passed here: they
 * end the call with an error whose message is the engine's.
 */
typedef struct sbx_docker_progress {
	const char *stream; /* build output text (usually ends with "\n"), or NULL */
	const char *status; /* status text ("Downloading", an image id...), or NULL */
	const char *id;	    /* layer or step id, or NULL */
	const char *aux_id; /* "aux":{"ID":...}: the built image id, or NULL */
	const char *raw;    /* the whole JSON line */
} sbx_docker_progress;

/* Return 0 to go on; a negative errno aborts the call, which returns it. */
typedef int (*sbx_docker_progress_fn)(const sbx_docker_progress *p, void *payload);

/* ---------------------------------------------------------------- images */

typedef struct sbx_docker_build_opts {
	unsigned int version;
	/* The context: a directory (tarred with libarchive, symlinks kept as links) ... */
	const char *context_dir;
	/* ... or a ready tar in memory (see sbx/docker_tar.h). Exactly one of the two. */
	const void *context_tar;
	size_t context_tar_len;
	const char *dockerfile;	 /* path inside the context; NULL: "Dockerfile" */
	const char *const *tags; /* NULL-terminated "name:tag" list, may be NULL */
	const sbx_docker_kv *labels;
	size_t n_labels;
	const sbx_docker_kv *build_args;
	size_t n_build_args;
	const char *target;	  /* multi-stage target, or NULL */
	const char *network_mode; /* network for RUN steps ("none"), or NULL */
	bool no_cache;
	bool pull;		/* try to pull newer base images (off: offline machines) */
	bool keep_intermediate; /* rm=false */
	long timeout_ms;	/* 0: 30 minutes */
	sbx_docker_progress_fn progress;
	void *progress_payload;
} sbx_docker_build_opts;

#define SBX_DOCKER_BUILD_OPTS_VERSION 1
#define SBX_DOCKER_BUILD_OPTS_INIT                                                                 \
	{                                                                                          \
		.version = SBX_DOCKER_BUILD_OPTS_VERSION                                           \
	}

/*
 * POST /build. Streams progress lines to opts->progress; an errorDetail line
 * fails the call with the engine's message (-EIO). On success writes the new
 * image id ("sha256:...") to *image_id_out when not NULL (free() it).
 */
int sbx_docker_image_build(sbx_docker *d, const sbx_docker_build_opts *opts, char **image_id_out,
			   sbx_error *err);

typedef struct sbx_docker_import_opts {
	unsigned int version;
	/* The root filesystem tarball: a file ... */
	const char *tar_path;
	/* ... or memory. Exactly one of the two. */
	const void *tar_data;
	size_t tar_len;
	const char *repo; /* "sandboxctl-test/busybox"; NULL: untagged */
	const char *tag;  /* "latest"; NULL: "latest" */
	/* NULL-terminated Dockerfile instructions applied on import, e.g.
	 * "LABEL sandboxctl.test=1", "CMD [\"/bin/sh\"]", "ENV PATH=/bin". */
	const char *const *changes;
	const char *message; /* commit message, or NULL */
	long timeout_ms;     /* 0: 10 minutes */
	sbx_docker_progress_fn progress;
	void *progress_payload;
} sbx_docker_import_opts;

#define SBX_DOCKER_IMPORT_OPTS_VERSION 1
#define SBX_DOCKER_IMPORT_OPTS_INIT                                                                \
	{                                                                                          \
		.version = SBX_DOCKER_IMPORT_OPTS_VERSION                                          \
	}

/* POST /images/create?fromSrc=-. Writes the image id to *image_id_out when not NULL. */
int sbx_docker_image_import(sbx_docker *d, const sbx_docker_import_opts *opts, char **image_id_out,
			    sbx_error *err);

typedef struct sbx_docker_image {
	char *id;	       /* "sha256:..." */
	char **repo_tags;      /* NULL-terminated, possibly empty */
	sbx_docker_kv *labels; /* owned by the image; freed with it */
	size_t n_labels;
	int64_t created; /* unix seconds (0 when unknown) */
	int64_t size;	 /* bytes */
	char *os;	 /* inspect only, else NULL */
	char *arch;	 /* inspect only, else NULL */
	char *raw_json;	 /* inspect only: the engine's whole answer, for anything not mapped */
} sbx_docker_image;

/* GET /images/{name}/json. -ENOENT when absent (err says so; pass NULL to probe). */
int sbx_docker_image_inspect(sbx_docker *d, const char *name, sbx_docker_image **out,
			     sbx_error *err);
void sbx_docker_image_free(sbx_docker_image *img);

/*
 * GET /images/json filtered by labels: label_filters is a NULL-terminated
 * list of "key" or "key=value" (all must match), NULL for all images. *out is
 * an array of *n_out images (free with sbx_docker_image_list_free).
 */
int sbx_docker_image_list(sbx_docker *d, const char *const *label_filters, sbx_docker_image **out,
			  size_t *n_out, sbx_error *err);
void sbx_docker_image_list_free(sbx_docker_image *imgs, size_t n);

/* DELETE /images/{name}. -ENOENT when absent; force also untags in-use images. */
int sbx_docker_image_remove(sbx_docker *d, const char *name, bool force, sbx_error *err);

/* POST /images/{name}/tag?repo=&tag= (tag NULL: "latest"). */
int sbx_docker_image_tag(sbx_docker *d, const char *name, const char *repo, const char *tag,
			 sbx_error *err);

/* The value of key among labels, or NULL. */
const char *sbx_docker_label_get(const sbx_docker_kv *labels, size_t n, const char *key);

/* ---------------------------------------------------------------- containers */

typedef struct sbx_docker_port {
	const char *container_port; /* "8080/tcp" */
	const char *host_ip;	    /* "127.0.0.1" (NULL: all interfaces; don't) */
	const char *host_port;	    /* "0" or NULL: the engine picks one */
} sbx_docker_port;

typedef struct sbx_docker_ulimit {
	const char *name; /* "nofile", "nproc", "core", ... */
	int64_t soft;
	int64_t hard;
} sbx_docker_ulimit;

typedef struct sbx_docker_container_opts {
	unsigned int version;
	const char *name;  /* container name, or NULL for a generated one */
	const char *image; /* required */
	/* Config */
	const char *const *cmd;	       /* NULL-terminated argv; NULL: the image's CMD */
	const char *const *entrypoint; /* NULL-terminated; NULL: the image's */
	const char *const *env;	       /* NULL-terminated "KEY=value" */
	const char *working_dir;
	const char *user; /* "1000:1000" or a name */
	const char *hostname;
	const sbx_docker_kv *labels;
	size_t n_labels;
	bool tty;
	bool open_stdin; /* OpenStdin + AttachStdin/Stdout/Stderr, for attach streams */
	bool stdin_once;
	bool network_disabled; /* Config.NetworkDisabled */
	const char *stop_signal;
	bool no_healthcheck; /* Healthcheck NONE: the image's would run as the container's user */
	int stop_timeout;    /* seconds; 0: engine default */
	/* HostConfig */
	const char *const *cap_drop;	 /* {"ALL", NULL} */
	const char *const *cap_add;	 /* NULL-terminated */
	const char *const *security_opt; /* {"no-new-privileges:true", NULL} */
	bool readonly_rootfs;
	const sbx_docker_kv *tmpfs; /* path -> mount options "rw,nosuid,size=64m,mode=1777" */
	size_t n_tmpfs;
	const char *const *binds; /* "host:container:ro" (no host mounts by default) */
	int64_t memory;		  /* bytes; 0 unlimited */
	int64_t memory_swap;	  /* bytes incl. memory; 0 engine default, -1 unlimited */
	int64_t nano_cpus;	  /* 2 CPUs = 2000000000 */
	int64_t pids_limit;	  /* 0 unlimited */
	int64_t shm_size;	  /* bytes; 0 engine default */
	const sbx_docker_ulimit *ulimits;
	size_t n_ulimits;
	const char *network_mode;     /* "none", "bridge", ...; NULL: engine default */
	const char *const *dns;	      /* NULL-terminated servers */
	const sbx_docker_port *ports; /* published ports (also added to ExposedPorts) */
	size_t n_ports;
	const char *runtime; /* "runsc", or NULL for the default */
	bool init;	     /* run docker-init as PID 1 */
	bool auto_remove;
	/* HostConfig.LogConfig: NULL leaves the daemon's default (and its limits, or none). */
	const char *log_driver;	       /* "local", "json-file" */
	const sbx_docker_kv *log_opts; /* {"max-size", "8m"}, {"max-file", "3"} */
	size_t n_log_opts;
} sbx_docker_container_opts;

#define SBX_DOCKER_CONTAINER_OPTS_VERSION 1
#define SBX_DOCKER_CONTAINER_OPTS_INIT                                                             \
	{                                                                                          \
		.version = SBX_DOCKER_CONTAINER_OPTS_VERSION                                       \
	}

/*
 * POST /containers/create. Writes the new container's id to *id_out (free()
 * it). Engine warnings are logged at warning level.
 */
int sbx_docker_container_create(sbx_docker *d, const sbx_docker_container_opts *opts, char **id_out,
				sbx_error *err);

/* POST /containers/{id}/start. Starting a running container is not an error. */
int sbx_docker_container_start(sbx_docker *d, const char *id, sbx_error *err);

/* POST /containers/{id}/stop?t=timeout_s (then SIGKILL). Stopped already is not an error. */
int sbx_docker_container_stop(sbx_docker *d, const char *id, int timeout_s, sbx_error *err);

/* POST /containers/{id}/kill?signal= (NULL: SIGKILL). -EBUSY when not running. */
int sbx_docker_container_kill(sbx_docker *d, const char *id, const char *signal, sbx_error *err);

/*
 * POST /containers/{id}/wait?condition=not-running, waiting at most timeout_ms
 * (0: the client's request timeout). Writes the exit status to *exit_code
 * (may be NULL). -ETIME when the deadline passed (the container keeps
 * running; kill it if that is what you want). Call after start: a created
 * container counts as not running.
 */
int sbx_docker_container_wait(sbx_docker *d, const char *id, long timeout_ms, int *exit_code,
			      sbx_error *err);

/* DELETE /containers/{id}?force=&v=. -ENOENT when it does not exist (idempotent callers ignore). */
int sbx_docker_container_remove(sbx_docker *d, const char *id, bool force, bool volumes,
				sbx_error *err);

typedef struct sbx_docker_container {
	char *id;
	char *name;	/* without the leading '/' */
	char *image;	/* as requested ("sandboxctl/sandbox:latest") */
	char *image_id; /* "sha256:..." (list: NULL when the engine did not say) */
	char *state;	/* "created", "running", "exited", "dead", "paused", ... */
	char *status;	/* list only: "Up 3 minutes" */
	bool running;
	bool oom_killed;       /* inspect only */
	int exit_code;	       /* inspect only */
	int pid;	       /* inspect only; 0 when not running */
	bool tty;	       /* inspect only */
	int64_t created;       /* unix seconds */
	char *started_at;      /* inspect only, RFC 3339 */
	char *finished_at;     /* inspect only, RFC 3339 */
	char *error;	       /* inspect only: State.Error, "" when none */
	sbx_docker_kv *labels; /* owned */
	size_t n_labels;
	char *raw_json; /* inspect only: the engine's whole answer (HostConfig etc.) */
	char **volumes; /* list only: the named volumes it mounts, NULL-terminated (or NULL) */
} sbx_docker_container;

/* GET /containers/{id}/json. -ENOENT when absent. */
int sbx_docker_container_inspect(sbx_docker *d, const char *id, sbx_docker_container **out,
				 sbx_error *err);
void sbx_docker_container_free(sbx_docker_container *c);

/* GET /containers/json?all=1 filtered by labels ("key" or "key=value", all must match). */
int sbx_docker_container_list(sbx_docker *d, const char *const *label_filters,
			      sbx_docker_container **out, size_t *n_out, sbx_error *err);
void sbx_docker_container_list_free(sbx_docker_container *cs, size_t n);

/*
 * The host side of a published port: inspects the container and writes the
 * port the engine bound for container_port ("8080/tcp") to *host_port, and
 * the address to *host_ip (free() it) when host_ip is not NULL. -ENOENT when
 * the port is not published (or the container is not running).
 */
int sbx_docker_container_host_port(sbx_docker *d, const char *id, const char *container_port,
				   char **host_ip, int *host_port, sbx_error *err);

/*
 * GET /containers/{id}/logs (stdout and stderr, not following), frames
 * demultiplexed. Appends stdout to out and stderr to errout (either may be
 * NULL to discard; they are sbx_buf from sbx/buf.h). At most max_bytes are
 * kept in total (0: 16 MiB); beyond that the call fails with -ENOBUFS.
 */
int sbx_docker_container_logs(sbx_docker *d, const char *id, size_t max_bytes, sbx_buf *out,
			      sbx_buf *errout, sbx_error *err);

/*
 * The same log, stdout and stderr interleaved as the engine sends them, and
 * never too large to read: the first head_max bytes go to head, the last
 * tail_max to tail, and *cut counts the bytes between them that were dropped.
 * Memory stays within head_max + 2 * tail_max whatever the log's size.
 */
int sbx_docker_container_logs_bounded(sbx_docker *d, const char *id, size_t head_max,
				      size_t tail_max, sbx_buf *head, sbx_buf *tail, uint64_t *cut,
				      sbx_error *err);

/* ---------------------------------------------------------------- archive */

/*
 * PUT /containers/{id}/archive?path=dest_dir: unpacks the tar (in memory; see
 * sbx_docker_tar_* in sbx/docker_tar.h) into dest_dir, which must exist in
 * the container. Works on created and running containers.
 *
 * Engine limits (Docker 20.10): the archive endpoints work on the container's
 * root filesystem and volumes as seen from the host, so (1) with
 * ReadonlyRootfs they refuse any path not on a volume, and (2) they do not
 * see tmpfs mounts. For a read-only sandbox with a tmpfs workspace use
 * sbx_docker_exec_copy_in/out below, which run `tar` inside the container.
 */
int sbx_docker_archive_put(sbx_docker *d, const char *id, const char *dest_dir, const void *tar,
			   size_t tar_len, sbx_error *err);

/* Tars host_dir (its contents, not the directory itself) and PUTs it to dest_dir. */
int sbx_docker_archive_put_dir(sbx_docker *d, const char *id, const char *dest_dir,
			       const char *host_dir, sbx_error *err);

/*
 * GET /containers/{id}/archive?path=path and extracts it SAFELY beneath the
 * host directory dest_dir (which must exist) while it streams, by the rules
 * of sbx_docker_tar_extract (sbx/docker_tar.h): the container's contents are
 * untrusted. The first component of each entry is the basename of path (as
 * `docker cp`); opts->strip_components removes it. opts and stats may be
 * NULL. -ENOENT when path does not exist in the container; -EPERM when some
 * entries were refused (the rest is extracted; err names the first);
 * -EFBIG/-E2BIG when a cap was hit (extraction stopped there).
 */
int sbx_docker_archive_get(sbx_docker *d, const char *id, const char *path, const char *dest_dir,
			   const sbx_docker_extract_opts *opts, sbx_docker_extract_stats *stats,
			   sbx_error *err);

/*
 * GET the archive of path into memory, unextracted (at most max_bytes; 0:
 * 64 MiB, -EFBIG beyond). For small files and tests; *tar_out is free()d.
 */
int sbx_docker_archive_get_raw(sbx_docker *d, const char *id, const char *path, size_t max_bytes,
			       void **tar_out, size_t *len_out, sbx_error *err);

/*
 * HEAD /containers/{id}/archive?path=: what path is in the container's
 * filesystem (volumes included), without following a final symlink.
 * -ENOENT when it does not exist.
 */
int sbx_docker_archive_stat(sbx_docker *d, const char *id, const char *path, bool *is_dir,
			    bool *is_link, sbx_error *err);

/* ---------------------------------------------------------------- exec */

typedef struct sbx_docker_exec_opts {
	unsigned int version;
	const char *const *cmd; /* NULL-terminated argv, required */
	const char *const *env; /* NULL-terminated "KEY=value" */
	const char *user;
	const char *working_dir;
	bool attach_stdin; /* needed for sbx_docker_stream_open_exec with input */
	bool tty;	   /* no multiplexing; stdout and stderr arrive merged */
} sbx_docker_exec_opts;

#define SBX_DOCKER_EXEC_OPTS_VERSION 1
#define SBX_DOCKER_EXEC_OPTS_INIT                                                                  \
	{                                                                                          \
		.version = SBX_DOCKER_EXEC_OPTS_VERSION                                            \
	}

/* POST /containers/{id}/exec (stdout and stderr always attached). *exec_id_out: free(). */
int sbx_docker_exec_create(sbx_docker *d, const char *container_id,
			   const sbx_docker_exec_opts *opts, char **exec_id_out, sbx_error *err);

/*
 * POST /exec/{id}/start, attached: collects the demultiplexed output into out
 * and errout (either may be NULL to discard; at most max_bytes in total, 0:
 * 16 MiB, -ENOBUFS beyond) until the process ends or timeout_ms passes
 * (-ETIME; 0: the client's request timeout). Create the exec without
 * attach_stdin for this call (nothing is written to it); use
 * sbx_docker_stream_open_exec when the process needs input.
 */
int sbx_docker_exec_start(sbx_docker *d, const char *exec_id, bool tty, long timeout_ms,
			  size_t max_bytes, sbx_buf *out, sbx_buf *errout, sbx_error *err);

/*
 * GET /exec/{id}/json: *running, and *exit_code once it ended (-1 while
 * running). Either may be NULL.
 */
int sbx_docker_exec_inspect(sbx_docker *d, const char *exec_id, bool *running, int *exit_code,
			    sbx_error *err);

/*
 * Copies through an exec'd `tar` inside the running container (which needs a
 * tar binary: busybox or GNU tar), so it works on tmpfs mounts and read-only
 * root filesystems where the archive endpoints cannot:
 *  copy_in   runs `tar -xpf - -C dest_dir` (as user, NULL: the container's
 *            user) fed with tar through a hijacked stream; the entries keep
 *            the modes the archive gives them (-p: no umask);
 *  copy_out  runs `tar -cf - -C dirname(path) basename(path)` and extracts its
 *            output with the same safety rules as sbx_docker_archive_get.
 * Errors carry tar's stderr. timeout_ms 0: the client's request timeout.
 */
int sbx_docker_exec_copy_in(sbx_docker *d, const char *id, const char *dest_dir, const char *user,
			    const void *tar, size_t tar_len, long timeout_ms, sbx_error *err);

/*
 * copy_in in two steps: _open starts the exec'd tar (the slow part: the
 * engine spawns it) with its stdin waiting; _finish feeds it the archive,
 * waits for tar's exit and frees c, whatever happens. A warm sandbox opens
 * one ahead of its claim. c is used from one thread at a time; free an
 * unused one with sbx_docker_copy_in_free (tar sees EOF and exits).
 */
typedef struct sbx_docker_copy_in sbx_docker_copy_in;
int sbx_docker_exec_copy_in_open(sbx_docker *d, const char *id, const char *dest_dir,
				 const char *user, sbx_docker_copy_in **out, sbx_error *err);
int sbx_docker_exec_copy_in_finish(sbx_docker_copy_in *c, const void *tar, size_t tar_len,
				   long timeout_ms, sbx_error *err);
void sbx_docker_copy_in_free(sbx_docker_copy_in *c);
SBX_DEFINE_CLEANUP(sbx_docker_copy_in, sbx_docker_copy_in_free)
int sbx_docker_exec_copy_out(sbx_docker *d, const char *id, const char *path, const char *user,
			     const char *dest_dir, const sbx_docker_extract_opts *opts,
			     sbx_docker_extract_stats *stats, long timeout_ms, sbx_error *err);

/*
 * create + start + inspect in one call: runs cmd in the container and writes
 * its exit code. Output as for sbx_docker_exec_start.
 */
int sbx_docker_exec_run(sbx_docker *d, const char *container_id, const sbx_docker_exec_opts *opts,
			long timeout_ms, sbx_buf *out, sbx_buf *errout, int *exit_code,
			sbx_error *err);

/*
 * The tar the exec'd copies run: prefix (NULL-terminated, at most 7 words,
 * copied) goes before tar's own arguments, e.g. {"/opt/sandboxctl/lib/ld.so",
 * "--library-path", "/opt/sandboxctl/lib", "/opt/sandboxctl/libexec/tar"}
 * for an image that has no tar of its own. NULL: `tar` from the image's PATH.
 */
int sbx_docker_set_tar(sbx_docker *d, const char *const *prefix, sbx_error *err);

/*
 * "KEY=value" entries (NULL-terminated, at most 8, copied) every exec this
 * handle creates gets in its environment before its own: an exec inherits
 * the container's Config.Env, and "KEY=" blanks a key there for it. NULL:
 * none.
 */
int sbx_docker_set_exec_env(sbx_docker *d, const char *const *env, sbx_error *err);

/* ---------------------------------------------------------------- volumes */

/* POST /volumes/create (idempotent: an existing volume of that name is kept as it is). */
int sbx_docker_volume_create(sbx_docker *d, const char *name, const sbx_docker_kv *labels,
			     size_t n_labels, sbx_error *err);
/* GET /volumes/{name}: its labels (free with sbx_docker_volume_labels_free). -ENOENT when absent.
 */
int sbx_docker_volume_labels(sbx_docker *d, const char *name, sbx_docker_kv **labels,
			     size_t *n_labels, sbx_error *err);
void sbx_docker_volume_labels_free(sbx_docker_kv *labels, size_t n);
/* GET /volumes: the names that start with prefix (NULL: all), NULL-terminated (sbx_strv_free). */
int sbx_docker_volume_names(sbx_docker *d, const char *prefix, char ***names, sbx_error *err);
/* DELETE /volumes/{name}. -ENOENT when absent; -EBUSY-like errors while a container uses it. */
int sbx_docker_volume_remove(sbx_docker *d, const char *name, bool force, sbx_error *err);

/* ---------------------------------------------------------------- cleanup */

SBX_DEFINE_CLEANUP(sbx_docker, sbx_docker_free)
SBX_DEFINE_CLEANUP(sbx_docker_system, sbx_docker_system_free)
SBX_DEFINE_CLEANUP(sbx_docker_image, sbx_docker_image_free)
SBX_DEFINE_CLEANUP(sbx_docker_container, sbx_docker_container_free)
#define _cleanup_docker_ _cleanup_(sbx_docker_freep)
