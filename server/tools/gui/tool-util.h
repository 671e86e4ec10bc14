/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Helpers the GUI tool handlers share: argument checks that fail the tool
 * with a clear message, session access, and result building. Each helper
 * that can fail fills out through tool_fail() and returns a negative errno,
 * so a handler reads `if (helper(..., out) < 0) return 0;`.
 */

#include <stdbool.h>

#include "tool.h"
#include "session.h"

/* The X display the server serves GUI tools on (tool_context), or NULL. */
const char *gui__display(tool_context *ctx);

/* Whether the client cancelled the call (tool_context), so long waits can stop early. */
bool gui__cancelled(tool_context *ctx);

/* Fails out from an sbx error, choosing the error kind from its code. */
int gui__fail(tool_result *out, int r, const sbx_error *err);

/* Fails unless args is absent or an object holding only keys from allowed (NULL-ended). */
int gui__args_check(const cJSON *args, const char *const *allowed, tool_result *out);

/* An integral number in [min, max]; def when absent and not required. */
int gui__arg_int(const cJSON *args, const char *key, bool required, long def, long min, long max,
		 long *v, tool_result *out);

/* A string of at most max_bytes; NULL when absent and not required. */
int gui__arg_string(const cJSON *args, const char *key, bool required, size_t max_bytes,
		    const char **v, tool_result *out);

/* A number in [min, max] (seconds and the like); def when absent and not required. */
int gui__arg_double(const cJSON *args, const char *key, bool required, double def, double min,
		    double max, double *v, tool_result *out);

/* An array of n integers, e.g. coordinate [x, y]; *present says whether it was given. */
int gui__arg_ints(const cJSON *args, const char *key, bool required, long *v, int n, bool *present,
		  tool_result *out);

/* Locks the GUI and opens the display; on failure out says "No display available: ...". */
int gui__begin(tool_context *ctx, gui_session **s, tool_result *out);
void gui__end(gui_session *s);

/* Fails unless (x, y) lies on the screen. */
int gui__check_point(const gui_session *s, long x, long y, tool_result *out);

/* Makes out->structured an empty object; fails out on OOM. */
cJSON *gui__result(tool_result *out);

/* Ends s, then the result object after an input that returned r: NULL when r failed (out
 * says why, from err) or memory ran out. */
cJSON *gui__end_result(gui_session *s, int r, const sbx_error *err, tool_result *out);

/* Adds a number, bool or string to a result object; false on OOM (out already failed). */
bool gui__put_num(tool_result *out, cJSON *obj, const char *key, double v);
bool gui__put_bool(tool_result *out, cJSON *obj, const char *key, bool v);
bool gui__put_str(tool_result *out, cJSON *obj, const char *key, const char *v);

/* The current time as ISO 8601 UTC with milliseconds: 2026-12-02T14:03:00.123Z. */
void gui__timestamp(char buf[32]);

/* The wheel button (4 up, 5 down, 6 left, 7 right) for a direction, or -1. */
int gui__scroll_button(const char *direction);

/* The Anthropic-style `computer` tool (computer.c). */
int gui__computer(tool_context *ctx, const cJSON *args, tool_result *out);
extern const char gui__computer_input_schema[];
extern const char gui__computer_output_schema[];
