/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared by the GUI test programs (stubs.c). */

#include <png.h>
#include <stddef.h>
#include <stdint.h>

#include "gui.h"

/* The display the tools use (gui__display); NULL means none. */
extern const char *test_display;

const tool_def *test_tool(const char *name);

/* Calls tool name with JSON arguments (NULL: none); *out must be cleared by the caller. */
int test_call(const char *name, const char *args_json, tool_result *out);

/* Decodes a PNG into malloc'd RGB with libpng's simplified API; 0 or -1. */
int test_png_decode(const void *data, size_t len, uint32_t *w, uint32_t *h, uint8_t **rgb);

/* Decodes standard base64 into a malloc'd buffer; 0 or -1. */
int test_base64_decode(const char *s, uint8_t **out, size_t *len);
