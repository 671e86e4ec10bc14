/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sbx/error.h"

/* Keeps the message one line: control characters become spaces. */
static void flatten(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
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

int sbx_error_set(sbx_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbx_error_setv(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int sbx_error_replace(sbx_error *err, int code, const char *fmt, ...)
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

int sbx_error_prefix(sbx_error *err, int code, const char *fmt, ...)
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
