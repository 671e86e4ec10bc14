/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "sbx/log.h"

static sbx_log_fn log_fn;
static void *log_payload;
static int log_max = SBX_LOG_INFO;

void sbx_log_set(sbx_log_fn fn, void *payload, int max_level)
{
	log_fn = fn;
	log_payload = payload;
	log_max = max_level;
}

void sbx__log(int level, const char *fmt, ...)
{
	char raw[2048], msg[2048];
	va_list ap;

	if (!log_fn || level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	sbx_escape_controls(msg, sizeof(msg), raw, false);
	log_fn(level, msg, log_payload);
}
