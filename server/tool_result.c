/* SPDX-License-Identifier: MIT */
/*
 * Filling and clearing a tool_result: all a tool handler needs from the
 * server core, in a file of its own so the GUI tool tests link the same code.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"
#include "sbx/cleanup.h"

int tool_fail(tool_result *out, tool_error_kind kind, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	free(out->error);
	out->error = msg ? msg : strdup("out of memory");
	out->error_kind = kind;
	return 0;
}

void tool_result_clear(tool_result *r)
{
	if (!r)
		return;
	cJSON_Delete(r->structured);
	sbx_free_all(r->image_png_b64, r->error, r->error_code);
	*r = (tool_result){0};
}
