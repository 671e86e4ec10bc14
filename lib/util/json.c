/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "sbx/json.h"

/*
 * cJSON recurses per nesting level (with its own limit of 1000), so a hostile
 * 10,000-deep document is refused here first by a linear scan that tracks
 * brackets outside strings.
 */
static int check_depth(const char *text, size_t len, size_t *where)
{
	bool in_string = false, escaped = false;
	int depth = 0;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_string) {
			if (escaped)
				escaped = false;
			else if (c == '\\')
				escaped = true;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"')
			in_string = true;
		else if (c == '[' || c == '{') {
			if (++depth > SBX_JSON_MAX_DEPTH) {
				*where = i;
				return -E2BIG;
			}
		} else if (c == ']' || c == '}')
			depth--;
	}
	return 0;
}

int sbx_json_parse(const char *text, size_t len, cJSON **out, sbx_error *err)
{
	const char *end = NULL;
	size_t where = 0;
	cJSON *root;

	if (!text || len == 0)
		return sbx_error_set(err, -EINVAL, "invalid JSON: empty input");
	if (check_depth(text, len, &where) < 0)
		return sbx_error_set(err, -E2BIG,
				     "invalid JSON: nesting deeper than %d at byte %zu",
				     SBX_JSON_MAX_DEPTH, where);
	root = cJSON_ParseWithLengthOpts(text, len, &end, false);
	if (!root) {
		size_t at = end && end >= text ? (size_t)(end - text) : 0;
		return sbx_error_set(err, -EINVAL, "invalid JSON at byte %zu", at);
	}
	for (size_t i = (size_t)(end - text); i < len; i++) {
		char c = text[i];
		if (c == '\0' && i == len - 1)
			break;
		if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
			cJSON_Delete(root);
			return sbx_error_set(err, -EINVAL,
					     "invalid JSON: trailing data at byte %zu", i);
		}
	}
	*out = root;
	return 0;
}

const cJSON *sbx_json_get(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

const char *sbx_json_get_string(const cJSON *obj, const char *key, const char *fallback)
{
	const cJSON *v = sbx_json_get(obj, key);

	/* cJSON_Is*(NULL) is false, but the analyser cannot see into libcjson: say it. */
	return v && cJSON_IsString(v) && v->valuestring ? v->valuestring : fallback;
}

double sbx_json_get_number(const cJSON *obj, const char *key, double fallback)
{
	const cJSON *v = sbx_json_get(obj, key);

	return v && cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

bool sbx_json_get_bool(const cJSON *obj, const char *key, bool fallback)
{
	const cJSON *v = sbx_json_get(obj, key);

	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : fallback;
}

int sbx_json_add_string(cJSON *obj, const char *key, const char *value)
{
	return cJSON_AddStringToObject(obj, key, value ? value : "") ? 0 : -ENOMEM;
}

int sbx_json_add_number(cJSON *obj, const char *key, double value)
{
	return cJSON_AddNumberToObject(obj, key, value) ? 0 : -ENOMEM;
}

int sbx_json_add_bool(cJSON *obj, const char *key, bool value)
{
	return cJSON_AddBoolToObject(obj, key, value) ? 0 : -ENOMEM;
}

char *sbx_json_print(const cJSON *item)
{
	return cJSON_PrintUnformatted(item);
}
