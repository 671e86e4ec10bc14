/* SPDX-License-Identifier: MIT */
#pragma once

/* What sandboxes.c (the table, create, delete) and sandbox_io.c (exec, files) share. */

#include <stdatomic.h>

#include "service.h"

/* The image a sandbox gets when the client names none ("slim"; "full" the other). */
#define SERVE_SANDBOX_IMAGE	 "sandboxctl/sandbox-slim:latest"
#define SERVE_SANDBOX_IMAGE_FULL "sandboxctl/sandbox:latest"
#define SERVE_SANDBOX_WORKDIR	 "/workspace"
/* The image's one non-root user exec runs as (uid 1001; images/README.md). */
#define SERVE_SANDBOX_USER "agent"

struct serve_sandbox {
	char id[40]; /* "sbx-<16 hex>" */
	sbx_warm *w;
	char *image, *workdir;
	size_t engine;	    /* index in the pool's engines */
	char *engine_url;   /* NULL: the default */
	bool warm;	    /* taken from the warm pool */
	int64_t expires_at; /* unix seconds: removed then */
	double create_ms;
	unsigned refs;	     /* requests using w now (sbx_serve__sandbox_get) */
	atomic_bool removed; /* deleted, expired or shut down while requests ran */
};

/* The sandbox id with a reference held (release with _put), or NULL. */
serve_sandbox *sbx_serve__sandbox_get(sbx_serve *s, const char *id);
void sbx_serve__sandbox_put(sbx_serve *s, serve_sandbox *sb);

/*
 * The routes that answer JSON; *out the malloc'd answer (NULL with 204).
 * Delete answers 202 at once (the id is unknown from then on) and ends the
 * sandbox in the background: reset back to the pool (--reuse) or removed.
 */
int sbx_serve__sandbox_create(sbx_serve *s, const char *body, size_t len, char **out);
int sbx_serve__sandbox_delete(sbx_serve *s, const char *id, char **out);
int sbx_serve__sandbox_list(sbx_serve *s, char **out);

/* The create answer's JSON for sb (GET /v1/sandboxes/{id}); malloc'd, NULL on OOM. */
char *sbx_serve__sandbox_show(const serve_sandbox *sb);

/* {"error": code, "message": message} into *out; returns status. */
int sbx_serve__sandbox_error(char **out, int status, const char *code, const char *message);

/* --max-sandboxes with its default. */
unsigned sbx_serve__sandboxes_max(const sbx_serve_opts *o);
