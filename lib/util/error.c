/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sbx/error.h"

#include "sbx/log.h"

/*
 * Keeps the message one line and inert on a terminal: line breaks and tabs
 * become spaces, other control bytes are escaped.
 */
static void flatten(char *s)
{
	char raw[SBX_ERROR_MAX];
	bool plain = true;

	for (char *p = s; *p; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
		else if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			plain = false;
	}
	if (plain)
		return; /* the common case: nothing copied */
	memcpy(raw, s, SBX_ERROR_MAX);
	raw[SBX_ERROR_MAX - 1] = '\0';
	sbx_escape_controls(s, SBX_ERROR_MAX, raw, false);
}

int sbx_error_setv(sbx_error *err, int code, const char *fmt, va_list ap)
{
	if (!err || err->msg[0])
		return code;
	err->code = code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	flatten(err->msg);
	return code;
}

int(sbx_error_set)(sbx_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbx_error_setv(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int(sbx_error_replace)(sbx_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->msg[0] = '\0';
	va_start(ap, fmt);
	sbx_error_setv(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int(sbx_error_prefix)(sbx_error *err, int code, const char *fmt, ...)
{
	char prefix[SBX_ERROR_MAX], old[SBX_ERROR_MAX];
	va_list ap;

	if (!err)
		return code;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	if (!err->msg[0]) {
		err->code = code;
		snprintf(err->msg, sizeof(err->msg), "%s", prefix);
	} else {
		size_t n;

		memcpy(old, err->msg, sizeof(old));
		n = strnlen(prefix, sizeof(err->msg) - 1);
		memcpy(err->msg, prefix, n);
		/* Truncation is fine: the message stays one readable line. */
		snprintf(err->msg + n, sizeof(err->msg) - n, ": %.*s", (int)(sizeof(old) - 1), old);
		if (!err->code)
			err->code = code;
	}
	flatten(err->msg);
	return err->code;
}

void sbx_error_clear(sbx_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->http_status = 0;
	err->msg[0] = '\0';
}

const char *sbx_error_message(const sbx_error *err)
{
	if (!err)
		return "unknown error";
	if (err->msg[0])
		return err->msg;
	return err->code ? strerror(-err->code) : "no error";
}
