/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sbx/path.h"
#include "sbx/task.h"
#include "task_schema.h"
#include "sbx/cleanup.h"

int sbx_schema__fail(const sbx_schema *s, const sbx_ynode *node, const char *fmt, ...)
{
	char msg[SBX_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sbx_error_set(s->err, -EINVAL, "%s:%u:%u: %s", s->name, node ? node->line : 1,
			     node ? node->col : 1, msg);
}

static const char *kind_name(const sbx_ynode *node)
{
	switch (node->kind) {
	case SBX_YNODE_MAP:
		return "a mapping";
	case SBX_YNODE_SEQ:
		return "a list";
	default:
		return "a scalar";
	}
}

int sbx_schema__map(const sbx_schema *s, const sbx_ynode *node, const char *key,
		    const char *const *allowed)
{
	if (node->kind != SBX_YNODE_MAP)
		return sbx_schema__fail(s, node, "%s must be a mapping, not %s",
					key[0] ? key : "the document", kind_name(node));
	for (size_t i = 0; i < node->n; i++) {
		const char *k = node->keys[i]->value;
		bool ok = false;

		for (const char *const *a = allowed; *a && !ok; a++)
			ok = strcmp(*a, k) == 0;
		if (!ok)
			return sbx_schema__fail(s, node->keys[i], "unknown key '%s%s%s'", key,
						key[0] ? "." : "", k);
	}
	return 0;
}

int sbx_schema__string(const sbx_schema *s, const sbx_ynode *node, const char *key, size_t max_len,
		       char **out)
{
	char *v;

	if (node->kind != SBX_YNODE_SCALAR || sbx_ytree__is_null(node))
		return sbx_schema__fail(s, node, "%s must be a non-empty string", key);
	if (node->len == 0)
		return sbx_schema__fail(s, node, "%s must be a non-empty string", key);
	if (node->len > max_len)
		return sbx_schema__fail(s, node, "%s is too long (over %zu bytes)", key, max_len);
	v = strdup(node->value);
	if (!v)
		return sbx_error_set(s->err, -ENOMEM, "out of memory");
	free(*out);
	*out = v;
	return 0;
}

static bool parse_double(const sbx_ynode *node, double *out)
{
	char *end;
	double v;

	if (node->kind != SBX_YNODE_SCALAR || !node->plain || node->len == 0)
		return false;
	errno = 0;
	v = strtod(node->value, &end);
	if (errno || *end || !isfinite(v))
		return false;
	*out = v;
	return true;
}

static void describe_range(char *buf, size_t size, const char *what, double min, double max)
{
	if (isinf(max))
		snprintf(buf, size, "%s >= %g", what, min);
	else
		snprintf(buf, size, "%s between %g and %g", what, min, max);
}

int sbx_schema__number(const sbx_schema *s, const sbx_ynode *node, const char *key, double min,
		       double max, double *out)
{
	char want[128];
	double v;

	if (!parse_double(node, &v) || v < min || v > max) {
		describe_range(want, sizeof(want), "a number", min, max);
		return sbx_schema__fail(s, node, "%s must be %s", key, want);
	}
	*out = v;
	return 0;
}

int sbx_schema__int(const sbx_schema *s, const sbx_ynode *node, const char *key, int64_t min,
		    int64_t max, int64_t *out)
{
	char *end;
	long long v = 0;
	bool ok = node->kind == SBX_YNODE_SCALAR && node->plain && node->len > 0;

	if (ok) {
		errno = 0;
		v = strtoll(node->value, &end, 10);
		ok = !errno && !*end && v >= min && v <= max;
	}
	if (!ok)
		return sbx_schema__fail(s, node, "%s must be an integer between %lld and %lld", key,
					(long long)min, (long long)max);
	*out = v;
	return 0;
}

int sbx_schema__bool(const sbx_schema *s, const sbx_ynode *node, const char *key, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no",
									       "off"};

	if (node->kind == SBX_YNODE_SCALAR && node->plain)
		for (size_t i = 0; i < 3; i++) {
			if (strcasecmp(node->value, yes[i]) == 0) {
				*out = true;
				return 0;
			}
			if (strcasecmp(node->value, no[i]) == 0) {
				*out = false;
				return 0;
			}
		}
	return sbx_schema__fail(s, node, "%s must be true or false", key);
}

int sbx_schema__enum(const sbx_schema *s, const sbx_ynode *node, const char *key,
		     const char *const *choices, int *out)
{
	char list[256] = "";
	size_t used = 0;

	if (node->kind == SBX_YNODE_SCALAR)
		for (int i = 0; choices[i]; i++)
			if (strcmp(node->value, choices[i]) == 0) {
				*out = i;
				return 0;
			}
	for (int i = 0; choices[i] && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 choices[i]);
	return sbx_schema__fail(s, node, "%s must be one of: %s", key, list);
}

int sbx_schema__relpath(const sbx_schema *s, const sbx_ynode *node, const char *key,
			const char *path)
{
	sbx_error perr = SBX_ERROR_INIT;

	if (sbx_path_check_relative(path, &perr) < 0)
		return sbx_schema__fail(s, node, "%s: %s", key, perr.msg);
	return 0;
}

const char *sbx_task__file_path_problem(const char *path, size_t len)
{
	const char *p;

	if (strlen(path) != len)
		return "a NUL byte";
	for (const unsigned char *u = (const unsigned char *)path; *u; u++)
		if (*u < 0x20 || *u == 0x7f || (u[0] == 0xc2 && u[1] >= 0x80 && u[1] < 0xa0))
			return "a control character"; /* C0, DEL, C1 (UTF-8) */
	if (len && path[len - 1] == '/')
		return "ends with '/': a folder, not a file";
	for (p = path; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 0)
			return "an empty component";
		if (n == 1 && p[0] == '.')
			return "a '.' component";
		p += n + (p[n] == '/');
	}
	return NULL;
}

int sbx_schema__paths(const sbx_schema *s, const sbx_ynode *node, const char *key, size_t max,
		      char ***out, size_t *n_out)
{
	const sbx_ynode *single = node->kind == SBX_YNODE_SCALAR ? node : NULL;
	size_t n = single ? 1 : node->n;
	char **v;
	int r;

	if (node->kind == SBX_YNODE_MAP)
		return sbx_schema__fail(s, node, "%s must be a path or a list of paths", key);
	if (n == 0)
		return sbx_schema__fail(s, node, "%s must not be empty", key);
	if (n > max)
		return sbx_schema__fail(s, node, "%s has too many entries (at most %zu)", key, max);
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return sbx_error_set(s->err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const sbx_ynode *item = single ? single : node->items[i];

		const char *why;

		r = sbx_schema__string(s, item, key, 4096, &v[i]);
		if (r >= 0)
			r = sbx_schema__relpath(s, item, key, v[i]);
		/* "." or "out/" would pass here and fail at copy-in, as infra_error. */
		if (r >= 0 && (why = sbx_task__file_path_problem(v[i], item->len)))
			r = sbx_schema__fail(s, item,
					     "%s: '%s' is not a plain relative file path (%s)", key,
					     v[i], why);
		if (r < 0) {
			sbx_strv_free(v);
			return r;
		}
	}
	sbx_strv_free(*out);
	*out = v;
	*n_out = n;
	return 0;
}
