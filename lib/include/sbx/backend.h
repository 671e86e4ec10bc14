/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The seam between the lifecycle and whatever runs sandboxes. The lifecycle
 * (sbx/run.h) only ever calls these operations, so a Kubernetes backend can
 * be added without touching it. The Docker backend is the only one users
 * can reach; the run takes another through sbx_run_opts.backend (the unit
 * tests' host-process backend, which isolates nothing).
 *
 * A backend object holds one sandbox. Operations are called in order:
 * create, start, copy_in (files may arrive after start: the server tolerates
 * it), open_stream (any number, from any thread), copy_out (while the sandbox
 * still runs), status/logs (any time after create; status also while copy_in
 * runs on another thread), destroy, free.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/buf.h"
#include "sbx/error.h"
#include "sbx/stream.h"
#include "sbx/task.h"

/*
 * Under gVisor (runtime "runsc") the engine's pids limit counts the Sentry's
 * host tasks, 8 to 10 per guest process measured (runsc 2022, ptrace): the
 * container gets pids times this, and tool code's own process limit
 * (RLIMIT_NPROC, which gVisor enforces) is pids, so a fork bomb fails a fork
 * inside, as under runc, instead of ending the sandbox.
 */
#define SBX_BACKEND_RUNSC_PIDS_FACTOR 16

/* What to create: the hardened defaults live in the backend; only the knobs are here. */
typedef struct sbx_sandbox_spec {
	const char *image;
	const char *run_id;
	const char *task;
	const char *owner; /* label value, see sbx/labels.h */
	int64_t created;   /* unix seconds */
	int64_t deadline;  /* unix seconds: the agent's deadline (PID 1 adds the grace) */
	/*
	 * Memory, CPUs, pids (under runsc: see above), runtime ("": the engine's
	 * default), seccomp profile, and grace_s: how long PID 1 waits past the
	 * deadline before ending. timeout_s is not read: deadline says it.
	 */
	sbx_limits limits;
	uint64_t workspace_bytes, tmp_bytes, run_bytes; /* tmpfs sizes */
	/* Where the workspace tmpfs goes (SANDBOX_WORKSPACE for PID 1 and the server): an
	 * absolute path checked by the caller (sbx_task_harbor_workdir_refusal); NULL:
	 * SBX_SANDBOX_WORKSPACE. A symlink there in the image is refused at create. */
	const char *workspace;
	bool gui;	/* the task needs the display */
	bool published; /* --network published: server port bound on host loopback */
	bool test;	/* label the sandbox as a test object */
	/* Several episodes, reset in place between them (SANDBOX_REUSE=1; bridges reconnect
	 * when the server restarts, sandbox-bridge -r). */
	bool reuse;
	const char *const *env; /* extra "KEY=value", NULL-terminated, may be NULL */
	/* A Harbor verifier's sandbox: also size-capped tmpfs at /tests and /logs. */
	bool verifier;
} sbx_sandbox_spec;

/* One command for the optional exec operation. */
typedef struct sbx_backend_exec {
	const char *const *argv; /* NULL-terminated */
	const char *user;	 /* "1001:1000" (the agent's uid); NULL: the server's */
	const char *cwd;	 /* NULL: the image's */
	const char *const *env;	 /* "KEY=value", NULL-terminated, may be NULL */
	long timeout_ms;	 /* 0: 5 minutes */
	size_t max_bytes;	 /* stdout and stderr together; 0: 16 MiB */
} sbx_backend_exec;

typedef struct sbx_sandbox_status {
	bool running;
	bool oom_killed;
	int exit_code;
	char detail[256]; /* the engine's own error text, "" when none */
} sbx_sandbox_status;

/* What the engine says it applied, read back after create (result.json reports it). */
typedef struct sbx_sandbox_applied {
	bool known;
	int64_t memory;	   /* bytes, 0 unlimited */
	int64_t nano_cpus; /* 1e9 per CPU, 0 unlimited */
	int64_t pids;	   /* 0 or -1 unlimited */
	char runtime[64];
	char network_mode[32];
	char user[32];
	bool readonly_rootfs;
	bool privileged;
	bool cap_drop_all;
	unsigned cap_add;	/* capabilities added */
	char cap_add_names[96]; /* "NET_ADMIN,SETPCAP,...", "" when none */
	bool dns_off;		/* Dns is ["0.0.0.0"] */
	bool no_new_privileges;
	char seccomp[16]; /* "sandbox" (ours), "default" (the engine's) or "unconfined" */
	unsigned binds;	  /* host mounts */
	bool init;	  /* the engine's own init */
	char bundle[16];  /* any image: the bundle's content hash (12 hex), "" on our images */
} sbx_sandbox_applied;

/*
 * One file for copy_in: name is relative to the destination and may hold
 * '/' (the directories are made). The backend decides how the files travel
 * (the Docker one packs a tar) and gives them to the agent's uid: files
 * 0664, directories 02775.
 */
typedef struct sbx_sandbox_file {
	const char *name;
	const void *data;
	size_t len;
} sbx_sandbox_file;

typedef struct sbx_backend sbx_backend;
struct sbx_docker_tar;

/*
 * The files as a tar (sbx/docker_tar.h), uid and gid 1000, files 0664 and
 * their directories 02775: what the Docker backend's exec'd tar extracts and
 * what the server's PUT /control/files unpacks. *out owns *data.
 */
int sbx_sandbox_files_pack(const sbx_sandbox_file *files, size_t n, struct sbx_docker_tar **out,
			   const void **data, size_t *len, sbx_error *err);

typedef struct sbx_backend_ops {
	const char *name;
	/* Creates the sandbox (not started). */
	int (*create)(sbx_backend *b, const sbx_sandbox_spec *spec, sbx_error *err);
	int (*start)(sbx_backend *b, sbx_error *err);
	/* Writes n files beneath dest, a directory in the sandbox (see sbx_sandbox_file). */
	int (*copy_in)(sbx_backend *b, const char *dest, const sbx_sandbox_file *files, size_t n,
		       sbx_error *err);
	/* A new byte stream to the server's socket. Thread-safe. */
	int (*open_stream)(sbx_backend *b, sbx_stream **out, sbx_error *err);
	/* Copies the contents of dir in the sandbox beneath host_dir, safely. */
	int (*copy_out)(sbx_backend *b, const char *dir, const char *host_dir, sbx_error *err);
	int (*status)(sbx_backend *b, sbx_sandbox_status *out, sbx_error *err);
	/* Appends the sandbox's output (stdout and stderr interleaved by stream) to out. */
	int (*logs)(sbx_backend *b, sbx_buf *out, sbx_error *err);
	/* Removes the sandbox and everything it owns. Idempotent. */
	int (*destroy)(sbx_backend *b, sbx_error *err);
	/* Forgets the sandbox without removing it (--keep). */
	void (*free)(sbx_backend *b);
	/*
	 * Optional (NULL: not offered). On a started sandbox nobody uses yet (a
	 * warm one): does now what the next open_stream calls would otherwise
	 * start with (the bridges), so a claim pays only for the bytes. dest is
	 * kept for backends that still prepare a copy_in there.
	 */
	int (*prewarm)(sbx_backend *b, const char *dest, sbx_error *err);
	/*
	 * Optional (NULL: the caller closes s). Takes s, a stream to the server
	 * that answered and stays usable (the readiness check's), and hands it
	 * out on the next open_stream, so it is not opened again.
	 */
	void (*keep_stream)(sbx_backend *b, sbx_stream *s);
	/*
	 * Optional (NULL: not offered; Harbor tasks need it). Runs x->argv in the
	 * started sandbox: stdout into out, stderr into errout (either may be
	 * NULL); -ENOBUFS past x->max_bytes, -ETIME past x->timeout_ms (the
	 * process is left to the sandbox's removal); else 0 and *exit_code.
	 */
	int (*exec)(sbx_backend *b, const sbx_backend_exec *x, sbx_buf *out, sbx_buf *errout,
		    int *exit_code, sbx_error *err);
	/* Optional: unpacks a tar (len bytes) beneath dest in the started sandbox, as copy_in. */
	int (*copy_in_tar)(sbx_backend *b, const char *dest, const void *tar, size_t len,
			   sbx_error *err);
	/*
	 * Optional: before start, the image's own content at path as a tar (what
	 * the tmpfs mounted there hides), at most max bytes (-EFBIG beyond);
	 * -ENOENT when the image has nothing there. *tar: free().
	 */
	int (*image_tar)(sbx_backend *b, const char *path, size_t max, void **tar, size_t *len,
			 sbx_error *err);
} sbx_backend_ops;

struct sbx_backend {
	const sbx_backend_ops *ops;
	char *id;	/* the sandbox's id once created */
	char *image_id; /* the image actually used, once created */
	char *endpoint; /* published mode: "127.0.0.1:port" of the server, else NULL */
	sbx_sandbox_applied applied;
};

/*
 * The Docker backend on the engine named by $DOCKER_HOST (or the default
 * socket). Connects now: -ENOENT/-ECONNREFUSED/-EACCES say the engine is not
 * reachable. Free with b->ops->free(b).
 */
int sbx_backend_docker_new(sbx_backend **out, sbx_error *err);

/* The same on the engine at host ("unix:///path", "tcp://host:port"; NULL as above). */
int sbx_backend_docker_new_at(sbx_backend **out, const char *host, sbx_error *err);

/*
 * Makes the backend a launch runs on (engine: sbx_run_opts.engine,
 * sbx_warm_opts.engine). The run
 * owns *out from then on and frees it with b->ops->free.
 */
typedef int (*sbx_run_backend_fn)(sbx_backend **out, const char *engine, void *userdata,
				  sbx_error *err);

/* The socket the server listens on inside the sandbox, reached with sandbox-bridge. */
#define SBX_SANDBOX_SOCKET    "/run/sandbox/mcp.sock"
#define SBX_SANDBOX_WORKSPACE "/workspace"
/* Published mode: the server's TCP port inside the sandbox. */
#define SBX_SANDBOX_HTTP_PORT	   8080
#define SBX_SANDBOX_HTTP_PORT_SPEC "8080/tcp"
