/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sbx/json.h"
#include "sbx/util.h"
#include "tool_schema.h"

#define PATH_MAX_LEN 256

static const char *type_of(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsNumber(v))
		return (isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble))
			       ? "integer"
			       : "number";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsArray(v))
		return "array";
	if (cJSON_IsObject(v))
		return "object";
	return "null";
}

static bool type_matches(const char *want, const cJSON *v)
{
	const char *have = type_of(v);

	if (strcmp(want, have) == 0)
		return true;
	/* Every integer is a number. */
	return strcmp(want, "number") == 0 && strcmp(have, "integer") == 0;
}

static bool check_type(const cJSON *type, const cJSON *v)
{
	const cJSON *t;

	if (cJSON_IsString(type))
		return type_matches(type->valuestring, v);
	if (!cJSON_IsArray(type))
		return true;
	cJSON_ArrayForEach (t, type)
		if (cJSON_IsString(t) && type_matches(t->valuestring, v))
			return true;
	return false;
}

static void type_names(const cJSON *type, char *buf, size_t size)
{
	const cJSON *t;
	size_t used = 0;

	buf[0] = '\0';
	if (cJSON_IsString(type)) {
		snprintf(buf, size, "%s", type->valuestring);
		return;
	}
	cJSON_ArrayForEach (t, type) {
		int n;

		if (!cJSON_IsString(t) || used >= size)
			continue;
		n = snprintf(buf + used, size - used, "%s%s", used ? " or " : "", t->valuestring);
		if (n > 0)
			used += (size_t)n;
	}
}

static int fail(sbx_error *err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(sbx_error *err, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (*path)
		return sbx_error_set(err, -EINVAL, "argument '%s': %s", path, msg);
	return sbx_error_set(err, -EINVAL, "arguments: %s", msg);
}

/* A property wrong in an object: an "argument" at the top, a "property" of one below. */
static int property_fail(sbx_error *err, const char *path, const char *what, const char *name)
{
	if (*path)
		return sbx_error_set(err, -EINVAL, "argument '%s': %s property '%s'", path, what,
				     name);
	return sbx_error_set(err, -EINVAL, "%s argument '%s'", what, name);
}

static bool json_equal(const cJSON *a, const cJSON *b)
{
	return cJSON_Compare(a, b, true);
}

static int validate(const cJSON *schema, const cJSON *v, char *path, size_t path_len, int depth,
		    sbx_error *err);

static int validate_object(const cJSON *schema, const cJSON *v, char *path, size_t path_len,
			   int depth, sbx_error *err)
{
	const cJSON *props = sbx_json_get(schema, "properties");
	const cJSON *additional = sbx_json_get(schema, "additionalProperties");
	const cJSON *req, *item;
	int r;

	cJSON_ArrayForEach (req, sbx_json_get(schema, "required")) {
		if (cJSON_IsString(req) && !sbx_json_get(v, req->valuestring))
			return property_fail(err, path, "missing required", req->valuestring);
	}
	cJSON_ArrayForEach (item, v) {
		const cJSON *sub = sbx_json_get(props, item->string);
		size_t n = strlen(path);

		if (!sub) {
			if (cJSON_IsFalse(additional))
				return property_fail(err, path, "unexpected", item->string);
			if (!cJSON_IsObject(additional))
				continue;
			sub = additional;
		}
		snprintf(path + n, path_len - n, "%s%s", n ? "." : "", item->string);
		r = validate(sub, item, path, path_len, depth + 1, err);
		path[n] = '\0';
		if (r < 0)
			return r;
	}
	return 0;
}

static int validate_array(const cJSON *schema, const cJSON *v, char *path, size_t path_len,
			  int depth, sbx_error *err)
{
	const cJSON *items = sbx_json_get(schema, "items");
	const cJSON *min = sbx_json_get(schema, "minItems"),
		    *max = sbx_json_get(schema, "maxItems");
	int count = cJSON_GetArraySize(v), i = 0, r;
	const cJSON *item;

	if (cJSON_IsNumber(min) && count < min->valuedouble)
		return fail(err, path, "needs at least %d items", min->valueint);
	if (cJSON_IsNumber(max) && count > max->valuedouble)
		return fail(err, path, "allows at most %d items", max->valueint);
	if (!cJSON_IsObject(items))
		return 0;
	cJSON_ArrayForEach (item, v) {
		size_t n = strlen(path);

		snprintf(path + n, path_len - n, "[%d]", i++);
		r = validate(items, item, path, path_len, depth + 1, err);
		path[n] = '\0';
		if (r < 0)
			return r;
	}
	return 0;
}

static int validate(const cJSON *schema, const cJSON *v, char *path, size_t path_len, int depth,
		    sbx_error *err)
{
	const cJSON *type = sbx_json_get(schema, "type");
	const cJSON *en = sbx_json_get(schema, "enum");
	const cJSON *k;

	if (depth > SBX_JSON_MAX_DEPTH)
		return fail(err, path, "nested too deeply");
	if (type && !check_type(type, v)) {
		char names[128];

		type_names(type, names, sizeof(names));
		return fail(err, path, "expected %s, got %s", names, type_of(v));
	}
	if (cJSON_IsArray(en)) {
		bool found = false;

		cJSON_ArrayForEach (k, en)
			if (json_equal(k, v))
				found = true;
		if (!found)
			return fail(err, path, "value not allowed (see the enum in the schema)");
	}
	if (cJSON_IsNumber(v)) {
		const cJSON *min = sbx_json_get(schema, "minimum");
		const cJSON *max = sbx_json_get(schema, "maximum");

		if (cJSON_IsNumber(min) && v->valuedouble < min->valuedouble)
			return fail(err, path, "must be >= %g", min->valuedouble);
		if (cJSON_IsNumber(max) && v->valuedouble > max->valuedouble)
			return fail(err, path, "must be <= %g", max->valuedouble);
	}
	if (cJSON_IsString(v)) {
		const cJSON *min = sbx_json_get(schema, "minLength");
		const cJSON *max = sbx_json_get(schema, "maxLength");
		size_t len = strlen(v->valuestring);

		if (cJSON_IsNumber(min) && (double)len < min->valuedouble)
			return fail(err, path, "must be at least %d characters", min->valueint);
		if (cJSON_IsNumber(max) && (double)len > max->valuedouble)
			return fail(err, path, "must be at most %d characters", max->valueint);
	}
	if (cJSON_IsObject(v))
		return validate_object(schema, v, path, path_len, depth, err);
	if (cJSON_IsArray(v))
		return validate_array(schema, v, path, path_len, depth, err);
	return 0;
}

int schema_validate(const cJSON *schema, const cJSON *value, sbx_error *err)
{
	char path[PATH_MAX_LEN] = "";

	return validate(schema, value, path, sizeof(path), 0, err);
}
