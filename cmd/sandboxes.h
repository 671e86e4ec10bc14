/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by ps and gc: the sandboxes sandboxctl left on the engine. */

#include <stddef.h>

#include "sbx/docker.h"

/*
 * Connects to the engine and lists every container labelled as a sandbox
 * (only run_id's when run_id is not NULL). On failure prints "<cmd>: <why>"
 * on stderr and returns EXIT_ENGINE; on success returns EXIT_PASS with the
 * engine handle in *d_out (sbx_docker_free) and the list in *out, *n_out
 * (sbx_docker_container_list_free).
 */
int cli_sandboxes_list(const char *cmd, const char *run_id, sbx_docker **d_out,
		       sbx_docker_container **out, size_t *n_out);

/* Creation time: the label when present (set by sandboxctl), else the engine's. */
long long cli_sandbox_created(const sbx_docker_container *c);
