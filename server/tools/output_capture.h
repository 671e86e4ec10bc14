/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Captured output with a cap: the first CAPTURE_HEAD bytes and the last
 * CAPTURE_TAIL bytes are kept, with a marker saying how much was dropped in
 * between. The text handed out is valid UTF-8 (bad bytes become U+FFFD), so
 * it can go into JSON as is.
 */

#include <stdbool.h>
#include <stddef.h>

#define CAPTURE_HEAD (25u * 1024)
#define CAPTURE_TAIL (25u * 1024)

typedef struct capture {
	char *head;
	size_t head_len;
	char *tail; /* ring of CAPTURE_TAIL bytes */
	size_t tail_pos, tail_len;
	unsigned long long total;
	bool truncated;
	char *text; /* after capture_finish */
} capture;

void capture_init(capture *c);
void capture_add(capture *c, const char *p, size_t n);
/* Builds the text (head, marker, tail; UTF-8 cleaned). */
void capture_finish(capture *c);
/* The text after capture_finish ("" before, or on OOM). */
const char *capture_text(const capture *c);
void capture_free(capture *c);

/* Copies s (len bytes) with invalid UTF-8 and NUL bytes replaced; caller frees. */
char *utf8_sanitize(const char *s, size_t len);
