/* SPDX-License-Identifier: MIT */
/*
 * The one place the relay reads an agent's path: the server's control API
 * (/control/...) is the host's, never an agent's. The path is read the way
 * the server will read it, so no spelling slips past: percent-escapes
 * decoded (once, as libmicrohttpd does), then any segment named "control",
 * in any case, anywhere in the path ("/x/../control", "//Control") refuses
 * it. No path an agent has a use for has such a segment.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "relay-internal.h"
#include "sbx/cleanup.h"

#define CONTROL_SEGMENT "control"

static int hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The path's decoded bytes (up to '?' or '#') into out, which holds strlen(p) + 1. */
static void decode_path(const char *p, char *out)
{
	size_t o = 0;

	for (; *p && *p != '?' && *p != '#'; p++) {
		int c = (unsigned char)*p;

		if (c == '%' && hex(p[1]) >= 0 && hex(p[2]) >= 0) {
			c = hex(p[1]) * 16 + hex(p[2]);
			p += 2;
		}
		out[o++] = (char)c;
	}
	out[o] = '\0';
}

bool sbx_relay__control_target(const char *target)
{
	_cleanup_free_ char *path = malloc(strlen(target) + 1);
	size_t n = strlen(CONTROL_SEGMENT);

	if (!path)
		return true; /* refused rather than guessed */
	/* The framing takes origin-form targets only ("/..."): no scheme or host to skip. */
	decode_path(target, path);
	for (const char *seg = path; *seg; seg += strcspn(seg, "/")) {
		seg += strspn(seg, "/");
		if (strcspn(seg, "/") == n && strncasecmp(seg, CONTROL_SEGMENT, n) == 0)
			return true;
	}
	return false;
}
