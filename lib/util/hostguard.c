/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <strings.h>

#include "sbx/hostguard.h"

#define NAME_MAX_LEN 255

typedef struct authority {
	char name[NAME_MAX_LEN + 1]; /* lowercased; a v6 address keeps its brackets */
	long port;		     /* -1 when none was given */
} authority;

/* Splits "name[:port]" or "[v6][:port]"; false when it is not one. */
static bool parse_authority(const char *s, authority *out)
{
	const char *end;
	size_t n;

	if (s[0] == '[') {
		end = strchr(s, ']');
		if (!end)
			return false;
		end++;
	} else {
		end = s + strcspn(s, ":");
	}
	n = (size_t)(end - s);
	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		/* No user info, path, query or white space can hide in an authority. */
		if (c == '@' || c == '/' || c == '?' || c == '#' || c == '\\' ||
		    (unsigned char)c <= ' ' || c == 0x7f)
			return false;
		out->name[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	out->name[n] = '\0';
	out->port = -1;
	if (*end == '\0')
		return true;
	if (*end != ':' || !end[1])
		return false;
	out->port = 0;
	for (const char *p = end + 1; *p; p++) {
		if (*p < '0' || *p > '9' || out->port > 65535)
			return false;
		out->port = out->port * 10 + (*p - '0');
	}
	return out->port <= 65535;
}

static bool loopback(const char *name)
{
	return strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0 ||
	       strcmp(name, "[::1]") == 0;
}

static bool allowed(const sbx_hostguard *g, const char *raw, long default_port)
{
	authority a;
	long port;

	if (!parse_authority(raw, &a))
		return false;
	port = a.port < 0 ? default_port : a.port;
	if (g->port && port != g->port)
		return false;
	if (loopback(a.name))
		return true;
	for (size_t i = 0; i < g->n_extra; i++)
		if (strcasecmp(g->extra[i], a.name) == 0 || strcasecmp(g->extra[i], raw) == 0)
			return true;
	return false;
}

sbx_hostguard_verdict sbx_hostguard_check(const sbx_hostguard *g, const char *host,
					  const char *origin)
{
	if (host ? !allowed(g, host, 80) : g->require_host)
		return SBX_HOSTGUARD_BAD_HOST;
	if (!origin)
		return SBX_HOSTGUARD_OK; /* not a browser: nothing to rebind */
	if (strncasecmp(origin, "http://", 7) == 0)
		return allowed(g, origin + 7, 80) ? SBX_HOSTGUARD_OK : SBX_HOSTGUARD_BAD_ORIGIN;
	if (strncasecmp(origin, "https://", 8) == 0)
		return allowed(g, origin + 8, 443) ? SBX_HOSTGUARD_OK : SBX_HOSTGUARD_BAD_ORIGIN;
	return SBX_HOSTGUARD_BAD_ORIGIN;
}
