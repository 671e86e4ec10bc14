/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The task's files from the host (PUT /control/files): a tar unpacked
 * beneath the workspace, regular files and directories only (unpack.c says
 * what else is refused and why).
 */
#include <stddef.h>

#include "sbx/error.h"

typedef struct unpack_stats {
	unsigned long files;
	unsigned long long bytes;
} unpack_stats;

/*
 * Unpacks the len bytes of tar beneath the directory ws_fd. 0, or a negative
 * errno with err naming the entry (or the byte offset) that stopped it; the
 * entries before it stay written.
 */
int workspace_unpack(int ws_fd, const void *tar, size_t len, unpack_stats *stats, sbx_error *err);
