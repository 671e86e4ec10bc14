/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The library never prints. A program installs a log handler; without one,
 * messages go nowhere.
 */

enum sbx_log_level {
	SBX_LOG_ERROR = 3,
	SBX_LOG_WARNING = 4,
	SBX_LOG_INFO = 6,
	SBX_LOG_DEBUG = 7,
};

typedef void (*sbx_log_fn)(int level, const char *msg, void *payload);

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Installs fn (NULL silences). Messages above max_level are not formatted. */
void sbx_log_set(sbx_log_fn fn, void *payload, int max_level);

/* Internal: used by library modules. */
void sbx__log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define sbx_log_error(...)   sbx__log(SBX_LOG_ERROR, __VA_ARGS__)
#define sbx_log_warning(...) sbx__log(SBX_LOG_WARNING, __VA_ARGS__)
#define sbx_log_info(...)    sbx__log(SBX_LOG_INFO, __VA_ARGS__)
#define sbx_log_debug(...)   sbx__log(SBX_LOG_DEBUG, __VA_ARGS__)

/*
 * Copies src to dst (size bytes, NUL included) with what a terminal would act
 * on escaped: C0 controls and DEL as \xNN, C1 controls (U+0080-U+009F) as
 * \uNNNN, the bidirectional controls (U+202E reverses what follows) as
 * \uNNNN, bytes that are not UTF-8 as \xNN. keep_lines keeps \n and \t.
 * Stops before a piece that does not fit. Returns the length written.
 * Every log message and error message goes through it: names from a sandbox
 * (a refused file, a tar entry) reach the terminal inert.
 */
size_t sbx_escape_controls(char *dst, size_t size, const char *src, bool keep_lines);

/* fputs of a multi-line text from outside (a grade report), escaped, lines kept. */
void sbx_fputs_escaped(const char *s, FILE *f);

/* fputs of a one-line text from outside (a title, a file name): newlines escaped too. */
void sbx_fputs_escaped_line(const char *s, FILE *f);
