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

/*
 * Reads one resource into *out ({contents:[{uri, mimeType, text|blob}]}).
 * Returns 0, or a negative errno with a message ("Resource not found: ...").
 */
int resources_read(const tool_context *ctx, const char *uri, cJSON **out, sbx_error *err);
