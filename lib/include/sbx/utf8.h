/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/*
 * The length (1-4) of the valid UTF-8 sequence at s, of at most left bytes,
 * or 0 when there is none: a stray continuation byte, a truncated sequence,
 * an overlong form, a surrogate, past U+10FFFF. A NUL terminator ends a
 * sequence like any non-continuation byte, so a C string may pass SIZE_MAX.
 */
size_t sbx_utf8_seq(const unsigned char *s, size_t left);
