/* SPDX-License-Identifier: MIT */
/* Named volumes: create, inspect (labels), remove. The any-image bundle lives in one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

int sbx_docker_volume_create(sbx_docker *d, const char *name, const sbx_docker_kv *labels,
			     size_t n_labels, sbx_error *err)
{
	_cleanup_json_ cJSON *body = cJSON_CreateObject(), *root = NULL;
	_cleanup_free_ char *text = NULL, *what = NULL;
	docker_req req = {.method = "POST", .path = "/volumes/create"};
	docker_resp resp;
	int r;

	r = sbx_docker__check_name("volume", name, err);
	if (r < 0)
		return r;
	if (!body || !cJSON_AddStringToObject(body, "Name", name) ||
	    sbx_docker__add_labels(body, "Labels", labels, n_labels) < 0 ||
	    !(text = cJSON_PrintUnformatted(body)) ||
	    asprintf(&what, "volume '%s': create", name) < 0) {
		what = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	req.body = text;
	req.body_len = strlen(text);
	r = sbx_docker__request(d, &req, &resp, what, err);
	return sbx_docker__answer_json(&resp, r, what, &root, err);
}

int sbx_docker_volume_labels(sbx_docker *d, const char *name, sbx_docker_kv **labels,
			     size_t *n_labels, sbx_error *err)
{
	_cleanup_json_ cJSON *root = NULL;
	_cleanup_free_ char *what = NULL;
	sbx_buf path = SBX_BUF_INIT(4096);
	int r;

	r = sbx_docker__object_prepare("volume", name, "inspect", &what, &path, err, "%s", "");
	if (r < 0)
		return r;
	r = sbx_docker__get_json(d, "GET", path.data, what, &root, err);
	sbx_buf_free(&path);
	if (r < 0)
		return r;
	if (sbx_docker__parse_labels(sbx_json_get(root, "Labels"), labels, n_labels) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

void sbx_docker_volume_labels_free(sbx_docker_kv *labels, size_t n)
{
	sbx_docker__free_labels(labels, n);
}

int sbx_docker_volume_remove(sbx_docker *d, const char *name, bool force, sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	sbx_buf path = SBX_BUF_INIT(4096);
	int r;

	r = sbx_docker__object_prepare("volume", name, "remove", &what, &path, err, "%s",
				       force ? "?force=1" : "");
	if (r < 0)
		return r;
	r = sbx_docker__simple(d, "DELETE", path.data, what, NULL, err);
	sbx_buf_free(&path);
	return r;
}

int sbx_docker_volume_names(sbx_docker *d, const char *prefix, char ***names, sbx_error *err)
{
	_cleanup_json_ cJSON *root = NULL;
	const cJSON *it;
	size_t n = 0, k = 0;
	char **v;
	int r;

	r = sbx_docker__get_json(d, "GET", "/volumes", "volumes: list", &root, err);
	if (r < 0)
		return r;
	n = (size_t)cJSON_GetArraySize(sbx_json_get(root, "Volumes"));
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	cJSON_ArrayForEach (it, sbx_json_get(root, "Volumes")) {
		const char *name = sbx_json_get_string(it, "Name", NULL);

		if (k < n && name &&
		    strncmp(name, prefix ? prefix : "", strlen(prefix ? prefix : "")) == 0 &&
		    !(v[k++] = strdup(name))) {
			sbx_strv_free(v);
			return sbx_error_set(err, -ENOMEM, "out of memory");
		}
	}
	*names = v;
	return 0;
}
