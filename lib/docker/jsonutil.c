/* SPDX-License-Identifier: MIT */
/* JSON pieces shared by the request encoders and the answer parsers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"

int sbx_docker__add_strv(cJSON *obj, const char *key, const char *const *list)
{
	cJSON *arr;

	if (!list)
		return 0;
	arr = cJSON_AddArrayToObject(obj, key);
	if (!arr)
		return -ENOMEM;
	for (; *list; list++) {
		cJSON *v = cJSON_CreateString(*list);
		if (!v || !cJSON_AddItemToArray(arr, v)) {
			cJSON_Delete(v);
			return -ENOMEM;
		}
	}
	return 0;
}

int sbx_docker__add_labels(cJSON *obj, const char *key, const sbx_docker_kv *kv, size_t n)
{
	cJSON *o;

	if (n == 0)
		return 0;
	o = cJSON_AddObjectToObject(obj, key);
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!kv[i].key)
			return -EINVAL;
		if (sbx_json_add_string(o, kv[i].key, kv[i].value ? kv[i].value : "") < 0)
			return -ENOMEM;
	}
	return 0;
}

void sbx_docker__free_labels(sbx_docker_kv *kv, size_t n)
{
	if (!kv)
		return;
	for (size_t i = 0; i < n; i++) {
		free((char *)kv[i].key);
		free((char *)kv[i].value);
	}
	free(kv);
}

int sbx_docker__parse_labels(const cJSON *obj, sbx_docker_kv **out, size_t *n_out)
{
	const cJSON *it;
	sbx_docker_kv *kv;
	size_t n = 0, i = 0;

	*out = NULL;
	*n_out = 0;
	if (!cJSON_IsObject(obj))
		return 0;
	cJSON_ArrayForEach (it, obj)
		n++;
	if (n == 0)
		return 0;
	kv = calloc(n, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	cJSON_ArrayForEach (it, obj) {
		if (!it->string || !cJSON_IsString(it))
			continue;
		kv[i].key = strdup(it->string);
		kv[i].value = strdup(it->valuestring ? it->valuestring : "");
		if (!kv[i].key || !kv[i].value) {
			sbx_docker__free_labels(kv, i + 1);
			return -ENOMEM;
		}
		i++;
	}
	*out = kv;
	*n_out = i;
	return 0;
}

/* Copies a string from each child of node: its member name, or its value when a string. */
static char **children_strv(const cJSON *node, bool names)
{
	const cJSON *it;
	size_t n = 0, i = 0;
	char **v;

	cJSON_ArrayForEach (it, node)
		n++;
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return NULL;
	cJSON_ArrayForEach (it, node) {
		const char *s = names ? it->string : cJSON_GetStringValue(it);

		if (!s)
			continue;
		v[i] = strdup(s);
		if (!v[i]) {
			sbx_strv_free(v);
			return NULL;
		}
		i++;
	}
	return v;
}

char **sbx_docker__parse_strv(const cJSON *arr)
{
	return children_strv(cJSON_IsArray(arr) ? arr : NULL, false);
}

char **sbx_docker__member_names(const cJSON *obj)
{
	return children_strv(cJSON_IsObject(obj) ? obj : NULL, true);
}

char *sbx_docker__strdup_json(const cJSON *obj, const char *key)
{
	const char *s = sbx_json_get_string(obj, key, NULL);

	return strdup(s ? s : "");
}

const char *sbx_docker_label_get(const sbx_docker_kv *labels, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (labels[i].key && strcmp(labels[i].key, key) == 0)
			return labels[i].value;
	return NULL;
}
