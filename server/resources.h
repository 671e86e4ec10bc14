/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Workspace files as MCP resources: file://<workspace>/<relative path>,
 * percent-encoded. Text files are returned as text, the rest as base64 blobs.
 */

#include <cjson/cJSON.h>

#include "server.h"

/* {resources:[{uri, name, mimeType, size}]} (caller owns), or NULL on OOM. */
cJSON *resources_list(const tool_context *ctx);

/*
 * The reference's GET /resources: a bare list [{uri: "file://<relative
 * path>", name, mimeType, size}] (caller owns), or NULL on OOM.
 */
cJSON *resources_list_reference(const tool_context *ctx);

/* The most a resource read or GET /control/file returns of one file. */
#define MAX_RESOURCE_BYTES (16u << 20)

/*
 * The bytes of one workspace file (path as the tools take it: relative, or
 * absolute inside the workspace), confined as every tool is: `..`, paths
 * outside and symlinks out are refused, and so is anything but a regular
 * file (a FIFO is not waited on). *data (caller frees, NUL-terminated) and
 * *len are set on success. Returns 0, -ENOENT (no such file), -EPERM
 * (refused: outside, not regular), -EFBIG (over MAX_RESOURCE_BYTES) or
 * -ENOMEM, with a message.
 */
int resources_read_bytes(const tool_context *ctx, const char *path, char **data, size_t *len,
			 sbx_error *err);

/*
 * Reads one resource into *out ({contents:[{uri, mimeType, text|blob}]}).
 * Returns 0, or a negative errno with a message ("Resource not found: ...").
 */
int resources_read(const tool_context *ctx, const char *uri, cJSON **out, sbx_error *err);
