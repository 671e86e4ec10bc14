/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Errors: a fallible function returns int (0 on success, a negative errno on
 * failure) and fills a caller-owned sbx_error with one line that says what
 * failed, where and why. The error may be NULL when the caller does not care.
 */

#include <errno.h>
#include <stdarg.h>

#define SBX_ERROR_MAX 1024

typedef struct sbx_error {
	int code;		 /* negative errno, 0 when unset */
	int http_status;	 /* HTTP status from the engine or a server, 0 if none */
	char msg[SBX_ERROR_MAX]; /* one line, never ends with a newline */
} sbx_error;

#define SBX_ERROR_INIT                                                                             \
	{                                                                                          \
		0, 0,                                                                              \
		{                                                                                  \
			0                                                                          \
		}                                                                                  \
	}

/*
 * Sets err to code and a printf-style message, unless err already holds a
 * message (the first, most precise error wins). Returns code, which must be
 * negative, so `return sbx_error_set(err, -EINVAL, "...")` reads naturally.
 */
int sbx_error_set(sbx_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int sbx_error_setv(sbx_error *err, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Like sbx_error_set, but always replaces what err held. */
int sbx_error_replace(sbx_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Adds context in front of the message already held: "ctx: old message".
 * Use it at the boundary where the context helps the user. Returns err->code
 * (or code when err is NULL or empty).
 */
int sbx_error_prefix(sbx_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * What the three above return, seen by every caller: a failure is negative even when
 * the code passed is not (-errno read after a call that left errno at 0 would
 * otherwise return 0, success). Inline so that callers, and the static analyser
 * (scripts/analyze.sh), see that `return sbx_error_set(...)` never reads as success.
 * The parentheses around the name call the function, not the macro.
 */
static inline int sbx__error_failure(int code)
{
	return code < 0 ? code : -EIO;
}
#define sbx_error_set(err, code, ...) sbx__error_failure((sbx_error_set)(err, code, __VA_ARGS__))
#define sbx_error_replace(err, code, ...)                                                          \
	sbx__error_failure((sbx_error_replace)(err, code, __VA_ARGS__))
#define sbx_error_prefix(err, code, ...)                                                           \
	sbx__error_failure((sbx_error_prefix)(err, code, __VA_ARGS__))

/* Clears err so it can be reused. Accepts NULL. */
void sbx_error_clear(sbx_error *err);

/* The message, or a strerror-based text when none was set. Never NULL. */
const char *sbx_error_message(const sbx_error *err);
