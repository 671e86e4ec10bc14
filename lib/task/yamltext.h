/* SPDX-License-Identifier: MIT */
#pragma once

/* YAML scalars for any text (lib/task internal; see yamltext.c). */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sbx/buf.h"

/* The offset of the first byte of text that is not well-formed UTF-8 (or is a NUL), or -1. */
ssize_t sbx_task__utf8_invalid(const char *text, size_t n);

/*
 * Appends s (valid UTF-8) as a double-quoted scalar, escaping what YAML may
 * not carry as it is. Returns 0 or a negative errno (the buffer freed itself).
 */
int sbx_task__yaml_quoted(sbx_buf *b, const char *s);

/*
 * Appends "key: value\n": a literal block scalar where it reads like the text
 * itself, quoted where a block cannot say it exactly. Returns 0 or -errno.
 */
int sbx_task__yaml_text(sbx_buf *b, const char *key, const char *s);
