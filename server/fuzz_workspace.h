/* SPDX-License-Identifier: MIT */
/*
 * What the server's fuzz harnesses share: a server over a temporary
 * workspace holding a real task workbook (SBX_FUZZ_SEED_BOOK), which
 * fuzz_workspace_restore() puts back so every input starts from one state.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "server.h"

/* Sets up srv over a fresh workspace; aborts on failure. Returns its path. */
const char *fuzz_workspace_init(server *srv);

/* Writes the seed workbook back over whatever the last input left. */
void fuzz_workspace_restore(void);

/* True when the input names a tool that starts processes (execute_*,
 * recalculate), or could spell one with an escape: such inputs are skipped. */
bool fuzz_input_runs_processes(const void *data, size_t size, const char *const *escapes,
			       size_t n_escapes);
