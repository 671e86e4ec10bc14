/* SPDX-License-Identifier: MIT */
/* Images: inspect, list by label, remove, tag. Build and import live in build.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"

static void image_clear(sbx_docker_image *img)
{
	free(img->id);
	sbx_strv_free(img->repo_tags);
	sbx_docker__free_labels(img->labels, img->n_labels);
	sbx_free_all(img->os, img->arch, img->raw_json);
}

void sbx_docker_image_free(sbx_docker_image *img)
{
	if (!img)
		return;
	image_clear(img);
	free(img);
}

void sbx_docker_image_list_free(sbx_docker_image *imgs, size_t n)
{
	if (!imgs)
		return;
	for (size_t i = 0; i < n; i++)
		image_clear(&imgs[i]);
	free(imgs);
}

/* Fills the fields list and inspect share; inspect keeps labels under Config. */
static int image_from_json(const cJSON *j, bool inspect, sbx_docker_image *img)
{
	const cJSON *labels = inspect ? sbx_json_get(sbx_json_get(j, "Config"), "Labels")
				      : sbx_json_get(j, "Labels");

	memset(img, 0, sizeof(*img));
	img->id = sbx_docker__strdup_json(j, "Id");
	img->repo_tags = sbx_docker__parse_strv(sbx_json_get(j, "RepoTags"));
	if (sbx_docker__parse_labels(labels, &img->labels, &img->n_labels) < 0 || !img->id ||
	    !img->repo_tags)
		return -ENOMEM;
	img->size = (int64_t)sbx_json_get_number(j, "Size", 0);
	if (inspect) {
		img->created = sbx_docker__parse_time(sbx_json_get_string(j, "Created", NULL));
		img->os = sbx_docker__strdup_json(j, "Os");
		img->arch = sbx_docker__strdup_json(j, "Architecture");
		if (!img->os || !img->arch)
			return -ENOMEM;
	} else {
		img->created = (int64_t)sbx_json_get_number(j, "Created", 0);
	}
	return 0;
}

int sbx_docker_image_inspect(sbx_docker *d, const char *name, sbx_docker_image **out,
			     sbx_error *err)
{
	_cleanup_json_ cJSON *root = NULL;
	_cleanup_free_ char *what = NULL;
	sbx_buf path = SBX_BUF_INIT(4096);
	sbx_docker_image *img;
	int r;

	r = sbx_docker__object_prepare("image", name, "inspect", &what, &path, err, "/json");
	if (r < 0)
		return r;
	r = sbx_docker__get_json(d, "GET", path.data, what, &root, err);
	sbx_buf_free(&path);
	if (r < 0)
		return r;
	img = calloc(1, sizeof(*img));
	if (!img)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = image_from_json(root, true, img);
	if (r == 0) {
		img->raw_json = sbx_json_print(root);
		if (!img->raw_json)
			r = -ENOMEM;
	}
	if (r < 0) {
		sbx_docker_image_free(img);
		return sbx_error_set(err, r, "out of memory");
	}
	*out = img;
	return 0;
}

int sbx_docker_image_list(sbx_docker *d, const char *const *label_filters, sbx_docker_image **out,
			  size_t *n_out, sbx_error *err)
{
	_cleanup_json_ cJSON *root = NULL;
	sbx_buf path = SBX_BUF_INIT(65536);
	sbx_docker_image *imgs;
	const cJSON *it;
	size_t n, i = 0;
	int r;

	r = sbx_buf_puts(&path, "/images/json");
	if (r == 0)
		r = sbx_docker__filters_query(&path, "?", label_filters);
	if (r < 0)
		return sbx_error_set(err, r, "image list: filters too long");
	r = sbx_docker__get_json(d, "GET", path.data, "image list", &root, err);
	sbx_buf_free(&path);
	if (r < 0)
		return r;
	if (!cJSON_IsArray(root))
		return sbx_error_set(err, -EPROTO, "image list: the engine did not answer a list");
	n = (size_t)cJSON_GetArraySize(root);
	imgs = calloc(n ? n : 1, sizeof(*imgs));
	if (!imgs)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	cJSON_ArrayForEach (it, root) {
		if (image_from_json(it, false, &imgs[i++]) < 0) {
			sbx_docker_image_list_free(imgs, i);
			return sbx_error_set(err, -ENOMEM, "out of memory");
		}
	}
	*out = imgs;
	*n_out = i;
	return 0;
}

int sbx_docker_image_remove(sbx_docker *d, const char *name, bool force, sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	sbx_buf path = SBX_BUF_INIT(4096);
	int r;

	r = sbx_docker__object_prepare("image", name, "remove", &what, &path, err, "?force=%d",
				       force ? 1 : 0);
	if (r < 0)
		return r;
	r = sbx_docker__simple(d, "DELETE", path.data, what, NULL, err);
	sbx_buf_free(&path);
	return r;
}

int sbx_docker_image_tag(sbx_docker *d, const char *name, const char *repo, const char *tag,
			 sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	sbx_buf path = SBX_BUF_INIT(4096);
	int r;

	r = sbx_docker__check_name("image", name, err);
	if (r == 0)
		r = sbx_docker__check_name("repository", repo, err);
	if (r == 0 && tag)
		r = sbx_docker__check_name("tag", tag, err);
	if (r < 0)
		return r;
	if (asprintf(&what, "image '%s': tag as '%s:%s'", name, repo, tag ? tag : "latest") < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = sbx_buf_puts(&path, "/images/");
	if (r == 0)
		r = sbx_docker__url_escape(&path, name);
	if (r == 0)
		r = sbx_buf_puts(&path, "/tag?repo=");
	if (r == 0)
		r = sbx_docker__url_escape(&path, repo);
	if (r == 0)
		r = sbx_buf_puts(&path, "&tag=");
	if (r == 0)
		r = sbx_docker__url_escape(&path, tag ? tag : "latest");
	if (r < 0)
		return sbx_error_set(err, r, "out of memory");
	r = sbx_docker__simple(d, "POST", path.data, what, NULL, err);
	sbx_buf_free(&path);
	return r;
}
