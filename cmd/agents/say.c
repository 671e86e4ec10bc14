/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "say.h"

void say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", agent_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
