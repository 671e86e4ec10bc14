/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The one dispatch table every transport serves (stdio, Streamable HTTP,
 * legacy SSE, REST). A tool is a row: name, schemas, annotations and a
 * handler. Handlers never print and never exit; they fill a result.
 */

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "sbx/util.h"

/* Why a tool failed; REST maps it to a status code, MCP to isError text. */
typedef enum tool_error_kind {
	TOOL_OK = 0,
	TOOL_E_ARGUMENT,    /* bad or missing argument, bad sheet/cell, missing file: REST 422 */
	TOOL_E_TIMEOUT,	    /* task deadline passed: REST 408 */
	TOOL_E_UNAVAILABLE, /* e.g. no display: REST 422 */
	TOOL_E_INTERNAL,    /* a real fault on our side: REST 500 */
	TOOL_E_FAILED, /* the tool ran, its work failed (code timed out, out of memory): REST 200,
			  success false; error_code says why */
} tool_error_kind;

/* Annotation bits (MCP ToolAnnotations). openWorldHint is always false: no network. */
enum {
	TOOL_READ_ONLY = 1u << 0,
	TOOL_DESTRUCTIVE = 1u << 1,
	TOOL_IDEMPOTENT = 1u << 2,
};

typedef struct tool_context tool_context; /* workspace, display, task session: see server.h */

typedef struct tool_result {
	cJSON *structured;   /* the result object (structuredContent / REST "result"); owned */
	char *image_png_b64; /* optional image content (base64 PNG); owned */
	tool_error_kind error_kind;
	char *error;	  /* one-line message when error_kind != TOOL_OK; owned */
	char *error_code; /* optional machine code, e.g. "E_TIMEOUT"; owned */
} tool_result;

typedef int (*tool_fn)(tool_context *ctx, const cJSON *args, tool_result *out);

typedef struct tool_def {
	const char *name;
	const char *title;
	const char *description;
	const char *input_schema;  /* JSON text of the inputSchema */
	const char *output_schema; /* JSON text of the outputSchema, or NULL */
	unsigned annotations;
	tool_fn fn;
} tool_def;

/*
 * A table row for a tool named after its handler, so the two cannot drift
 * apart: TOOL_DEF(read_cell, .title = ..., ...) is {.name = "read_cell",
 * .fn = read_cell, .title = ..., ...}.
 */
#define TOOL_DEF(handler, ...)                                                                     \
	{                                                                                          \
		.name = #handler, .fn = handler, __VA_ARGS__                                       \
	}

/* Schema text for the tables: a closed argument object, a result object, no arguments. */
#define TOOL_ARGS(props, required)                                                                 \
	"{\"type\":\"object\",\"properties\":{" props "},\"required\":[" required "],"             \
	"\"additionalProperties\":false}"
#define TOOL_RESULT(props, required)                                                               \
	"{\"type\":\"object\",\"properties\":{" props "},\"required\":[" required "]}"
#define TOOL_NO_ARGS "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}"

/* Fills out with a failure; returns 0 so handlers can `return tool_fail(...)`. */
int tool_fail(tool_result *out, tool_error_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void tool_result_clear(tool_result *r);
