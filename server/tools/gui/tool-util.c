/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "tool-util.h"

int gui__fail(tool_result *out, int r, const sbx_error *err)
{
	tool_error_kind kind;

	switch (r) {
	case -ENXIO:
	case -EPIPE:
		kind = TOOL_E_UNAVAILABLE;
		break;
	case -EINVAL:
	case -E2BIG:
	case -ERANGE:
		kind = TOOL_E_ARGUMENT;
		break;
	default:
		kind = TOOL_E_INTERNAL;
	}
	/* A failed call carries no partial result. */
	cJSON_Delete(out->structured);
	out->structured = NULL;
	tool_fail(out, kind, "%s", sbx_error_message(err));
	return r < 0 ? r : -EIO;
}

int gui__args_check(const cJSON *args, const char *const *allowed, tool_result *out)
{
	const cJSON *item;

	if (!args || cJSON_IsNull(args))
		return 0;
	if (!cJSON_IsObject(args)) {
		tool_fail(out, TOOL_E_ARGUMENT, "Arguments must be a JSON object");
		return -EINVAL;
	}
	cJSON_ArrayForEach (item, args) {
		bool known = false;

		for (size_t i = 0; allowed[i]; i++)
			if (item->string && strcmp(item->string, allowed[i]) == 0)
				known = true;
		if (!known) {
			tool_fail(out, TOOL_E_ARGUMENT, "Unknown argument '%.64s'",
				  item->string ? item->string : "");
			return -EINVAL;
		}
	}
	return 0;
}

static const cJSON *lookup(const cJSON *args, const char *key)
{
	const cJSON *v = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, key) : NULL;

	/* An explicit null is the same as leaving the argument out. */
	return cJSON_IsNull(v) ? NULL : v;
}

static int missing(const char *key, tool_result *out)
{
	tool_fail(out, TOOL_E_ARGUMENT, "Missing required argument '%s'", key);
	return -EINVAL;
}

int gui__arg_int(const cJSON *args, const char *key, bool required, long def, long min, long max,
		 long *v, tool_result *out)
{
	const cJSON *item = lookup(args, key);
	double d;

	if (!item) {
		if (required)
			return missing(key, out);
		*v = def;
		return 0;
	}
	d = cJSON_IsNumber(item) ? item->valuedouble : NAN;
	if (!isfinite(d) || d != floor(d)) {
		tool_fail(out, TOOL_E_ARGUMENT, "Argument '%s' must be an integer", key);
		return -EINVAL;
	}
	if (d < (double)min || d > (double)max) {
		tool_fail(out, TOOL_E_ARGUMENT,
			  "Argument '%s' must be between %ld and %ld, got %.0f", key, min, max, d);
		return -ERANGE;
	}
	*v = (long)d;
	return 0;
}

int gui__arg_double(const cJSON *args, const char *key, bool required, double def, double min,
		    double max, double *v, tool_result *out)
{
	const cJSON *item = lookup(args, key);

	if (!item) {
		if (required)
			return missing(key, out);
		*v = def;
		return 0;
	}
	if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble)) {
		tool_fail(out, TOOL_E_ARGUMENT, "Argument '%s' must be a number", key);
		return -EINVAL;
	}
	if (item->valuedouble < min || item->valuedouble > max) {
		tool_fail(out, TOOL_E_ARGUMENT, "Argument '%s' must be between %g and %g, got %g",
			  key, min, max, item->valuedouble);
		return -ERANGE;
	}
	*v = item->valuedouble;
	return 0;
}

int gui__arg_string(const cJSON *args, const char *key, bool required, size_t max_bytes,
		    const char **v, tool_result *out)
{
	const cJSON *item = lookup(args, key);

	if (!item) {
		if (required)
			return missing(key, out);
		*v = NULL;
		return 0;
	}
	if (!cJSON_IsString(item) || !item->valuestring) {
		tool_fail(out, TOOL_E_ARGUMENT, "Argument '%s' must be a string", key);
		return -EINVAL;
	}
	if (strlen(item->valuestring) > max_bytes) {
		tool_fail(out, TOOL_E_ARGUMENT, "Argument '%s' is too long (at most %zu bytes)",
			  key, max_bytes);
		return -E2BIG;
	}
	*v = item->valuestring;
	return 0;
}

int gui__arg_ints(const cJSON *args, const char *key, bool required, long *v, int n, bool *present,
		  tool_result *out)
{
	const cJSON *item = lookup(args, key), *el;
	int i = 0;

	*present = item != NULL;
	if (!item) {
		if (required)
			return missing(key, out);
		return 0;
	}
	if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != n)
		goto bad;
	cJSON_ArrayForEach (el, item) {
		double d = cJSON_IsNumber(el) ? el->valuedouble : NAN;

		if (!isfinite(d) || d != floor(d) || fabs(d) > 1e9)
			goto bad;
		v[i++] = (long)d;
	}
	return 0;
bad:
	tool_fail(out, TOOL_E_ARGUMENT, "Argument '%s' must be an array of %d integers", key, n);
	return -EINVAL;
}

int gui__begin(tool_context *ctx, gui_session **s, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	int r = gui_session_acquire(gui__display(ctx), s, &err);

	if (r < 0)
		return gui__fail(out, r, &err);
	return 0;
}

void gui__end(gui_session *s)
{
	gui_session_release(s);
}

int gui__check_point(const gui_session *s, long x, long y, tool_result *out)
{
	if (x < 0 || y < 0 || x >= s->width || y >= s->height) {
		tool_fail(out, TOOL_E_ARGUMENT,
			  "Coordinates (%ld, %ld) are outside the screen (%dx%d; x 0..%d, y 0..%d)",
			  x, y, s->width, s->height, s->width - 1, s->height - 1);
		return -ERANGE;
	}
	return 0;
}

cJSON *gui__result(tool_result *out)
{
	cJSON *obj = cJSON_CreateObject();

	if (!obj) {
		tool_fail(out, TOOL_E_INTERNAL, "out of memory");
		return NULL;
	}
	cJSON_Delete(out->structured);
	out->structured = obj;
	return obj;
}

cJSON *gui__end_result(gui_session *s, int r, const sbx_error *err, tool_result *out)
{
	gui__end(s);
	if (r < 0) {
		gui__fail(out, r, err);
		return NULL;
	}
	return gui__result(out);
}

static bool put(tool_result *out, cJSON *obj, const char *key, cJSON *item)
{
	if (item && cJSON_AddItemToObject(obj, key, item))
		return true;
	cJSON_Delete(item);
	cJSON_Delete(out->structured);
	out->structured = NULL;
	tool_fail(out, TOOL_E_INTERNAL, "out of memory");
	return false;
}

bool gui__put_num(tool_result *out, cJSON *obj, const char *key, double v)
{
	return put(out, obj, key, cJSON_CreateNumber(v));
}

bool gui__put_bool(tool_result *out, cJSON *obj, const char *key, bool v)
{
	return put(out, obj, key, cJSON_CreateBool(v));
}

bool gui__put_str(tool_result *out, cJSON *obj, const char *key, const char *v)
{
	return put(out, obj, key, cJSON_CreateString(v));
}

void gui__timestamp(char buf[32])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	long ms = ts.tv_nsec / 1000000 % 1000;

	buf[n++] = '.';
	buf[n++] = (char)('0' + ms / 100);
	buf[n++] = (char)('0' + ms / 10 % 10);
	buf[n++] = (char)('0' + ms % 10);
	buf[n++] = 'Z';
	buf[n] = '\0';
}
