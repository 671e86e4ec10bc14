/* SPDX-License-Identifier: MIT */
#pragma once

#include <pthread.h>
#include <stdbool.h>

#include "sbx/backend.h"
#include "sbx/docker.h"
#include "sbx/image.h"

#define SBX_BUNDLE_BRIDGE SBX_BUNDLE_DIR "/bin/sandbox-bridge"

#define PREWARM_STREAMS 3

/* The Docker backend: backend_docker.c, and its create in backend_docker_create.c. */
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

/* The container's log options: at most 3 files of 8 MiB (backend_docker.c). */
extern const sbx_docker_kv sbx_backend_docker__log_opts[2];

/* What every exec in a published sandbox gets instead of Config.Env's token. */
extern const char *const sbx_backend_docker__published_exec_env[];

/* backend_docker.c: db->d_stream, opened on first use (db->lock held). */
int sbx_backend_docker__open_locked_conn(docker_backend *db, sbx_error *err);

/* backend_docker_create.c: the backend's create operation (sbx_backend_ops.create). */
int sbx_backend_docker__create(sbx_backend *b, const sbx_sandbox_spec *spec, sbx_error *err);

/*
 * A sandbox on a foreign image (bundle->volume set): the bundle volume
 * read-only at SBX_BUNDLE_MOUNT (bind, of bind_size, is its Binds entry),
 * our PID 1 as the entrypoint whatever the image says, the image's ENV
 * neutralised where it matters (appended to env, *ne of max used), a
 * tmpfs over each VOLUME it declares (appended to tmpfs, *n_tmpfs of
 * max_tmpfs), and d's exec'd tar from the bundle; o->cmd is cmd (max_cmd
 * entries), the server's command with the spec's workspace. Refuses what needs one of our
 * images (--network published, a GUI task) and a VOLUME over our mounts in one line.
 */
int sbx_backend_docker__foreign(sbx_docker *d, const sbx_sandbox_spec *spec,
				const sbx_image_bundle *bundle, sbx_docker_container_opts *o,
				const char **env, size_t *ne, size_t max, sbx_docker_kv *tmpfs,
				size_t *n_tmpfs, size_t max_tmpfs, char *bind, size_t bind_size,
				const char **cmd, size_t max_cmd, sbx_error *err);

/*
 * After create: /opt, the bundle's mount point and the tmpfs mount points
 * (the workspace, /tmp, /run) must be directories in the image, not symlinks:
 * the engine follows one, and would mount the bundle over the workspace, or
 * a writable tmpfs over the bundle's libraries (or, for a Harbor workdir
 * /app -> /etc, over /etc). One line when not. Not foreign: the workspace only.
 */
int sbx_backend_docker__foreign_check(sbx_docker *d, const char *id, const char *image,
				      const char *workspace, bool foreign, sbx_error *err);
