/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by ps and gc: the sandboxes sandboxctl left on the engine. */

#include <stddef.h>

#include "sbx/docker.h"

/* The sandboxes on the engine, and the engine (to act on them). */
typedef struct cli_sandboxes {
	sbx_docker *engine;
	sbx_docker_container *v;
	size_t n;
} cli_sandboxes;

/*
 * Connects to the engine and lists every container labelled as a sandbox
 * (only run_id's when run_id is not NULL) into *out, which starts zeroed
 * (free it with cli_sandboxes_clear). Like cli_parse_options, returns 1 to go
 * on, else minus the exit code: -EXIT_ENGINE with "<cmd>: <why>" printed.
 */
int cli_sandboxes_list(const char *cmd, const char *run_id, cli_sandboxes *out);

void cli_sandboxes_clear(cli_sandboxes *s);

/* Creation time: the label when present (set by sandboxctl), else the engine's. */
long long cli_sandbox_created(const sbx_docker_container *c);
