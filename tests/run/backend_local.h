/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A backend for the lifecycle's unit tests: the "sandbox" is the real
 * sandbox-mcp run as a plain child process of the test, on a unix socket in
 * a temporary directory, with a host directory as its workspace. It
 * isolates nothing, so it lives under tests/ and only the test binaries link
 * it: no command line can select it.
 */

#include <stdbool.h>

#include "sbx/backend.h"

typedef struct local_config {
	const char *server; /* the sandbox-mcp binary; NULL: $SBX_BUILD_ROOT/server/sandbox-mcp */
	int fail_new;	    /* a -errno: the factory fails (the engine is unreachable) */
	int fail_create;    /* a -errno: create fails (-ENOENT: the image is missing) */
	int start_delay_ms; /* the server starts this late (a slow image) */
	unsigned streams;   /* counted: streams opened to the server (each one an exec) */
	unsigned copy_outs; /* counted: copy_out calls (the tar path) */
	sbx_backend *last;  /* set by the factory: the backend a run got */
	char root[256];	    /* set by create: the sandbox's directory (destroy removes it) */
} local_config;

/* An sbx_run_backend_fn; userdata is a local_config. */
int local_backend_new(sbx_backend **out, const char *engine, void *userdata, sbx_error *err);

/* The workspace directory on the host, once created. */
const char *local_backend_workspace(const sbx_backend *b);

/* Kills the server with SIGKILL: the sandbox's processes died. */
void local_backend_kill(sbx_backend *b);
