/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "say.h"
#include "sbx/log.h"

void say(const char *fmt, ...)
{
	va_list ap;
	char *raw = NULL, *shown;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&raw, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* A model's or a provider's words reach a terminal: escaped, one line (at most 4x). */
	shown = malloc(4 * (size_t)n + 1);
	if (shown) {
		sbx_escape_controls(shown, 4 * (size_t)n + 1, raw, false);
		fprintf(stderr, "%s: %s\n", agent_name, shown);
	}
	free(shown);
	free(raw);
}
