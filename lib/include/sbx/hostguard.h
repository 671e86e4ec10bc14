/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The DNS-rebinding guard for loopback HTTP services (the relay on the host,
 * sandbox-mcp in the sandbox). A page on evil.example whose name is made to
 * resolve to 127.0.0.1 can reach a loopback port, but its requests still
 * carry "Host: evil.example" and "Origin: http://evil.example": so Host must
 * name this machine (or an allowed name), and an Origin, where a browser sent
 * one, must too. One parser and one rule set for every listener.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sbx_hostguard {
	/* 0: any port; otherwise the authority must name this one (80/443 when it names none). */
	uint16_t port;
	/* Refuse a request without Host (HTTP/1.1 requires one; only HTTP/1.0 tools omit it). */
	bool require_host;
	/* Names accepted besides localhost, 127.0.0.1 and [::1]: "name" or "name:port". */
	char *const *extra;
	size_t n_extra;
} sbx_hostguard;

typedef enum sbx_hostguard_verdict {
	SBX_HOSTGUARD_OK = 0,
	SBX_HOSTGUARD_BAD_HOST,
	SBX_HOSTGUARD_BAD_ORIGIN,
} sbx_hostguard_verdict;

/*
 * Judges a request's Host and Origin header values (NULL: absent). Host is
 * an authority ("name[:port]", "[v6][:port]"); Origin is "http://" or
 * "https://" and an authority, nothing more ("null", other schemes, paths,
 * user info are refused). Names compare case-insensitively.
 */
sbx_hostguard_verdict sbx_hostguard_check(const sbx_hostguard *g, const char *host,
					  const char *origin);
