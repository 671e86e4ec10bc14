/* SPDX-License-Identifier: MIT */
/*
 * What `sandboxctl gc` removes besides sandboxes: the task images and
 * any-image bundle volumes the current build no longer uses. Building a task
 * image or a new bundle already removes the older ones, except those in use
 * at that moment; gc takes what was left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image-internal.h"
#include "sbx/cleanup.h"
#include "sbx/docker.h"
#include "sbx/image.h"
#include "sbx/labels.h"

#define MARKER_SUFFIX ".ready"

typedef struct gc_list {
	sbx_image_gc_item *v;
	size_t n, cap;
} gc_list;

static sbx_image_gc_item *gc_add(gc_list *l, sbx_image_gc_kind kind, const char *name,
				 const char *reason)
{
	sbx_image_gc_item *it;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		sbx_image_gc_item *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	it = &l->v[l->n++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	snprintf(it->name, sizeof(it->name), "%s", name);
	it->reason = reason;
	return it;
}

static bool image_used(const sbx_docker_container *cs, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (cs[i].image_id && strcmp(cs[i].image_id, id) == 0)
			return true;
	return false;
}

static bool volume_used(const sbx_docker_container *cs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		for (char **v = cs[i].volumes; v && *v; v++)
			if (strcmp(*v, name) == 0)
				return true;
	return false;
}

/* The tag of img in repo ("repo:..."), or NULL. */
static const char *tag_in(const sbx_docker_image *img, const char *repo)
{
	size_t len = strlen(repo);

	for (char **t = img->repo_tags; t && *t; t++)
		if (strncmp(*t, repo, len) == 0 && (*t)[len] == ':')
			return *t;
	return NULL;
}

static int task_images(sbx_docker *d, const sbx_docker_container *cs, size_t ncs, int64_t now,
		       int64_t older_than_s, gc_list *l, sbx_error *err)
{
	const char *filters[] = {SBX_IMAGE_LABEL_TASK, NULL};
	sbx_docker_image *imgs = NULL;
	size_t n = 0;
	int r;

	r = sbx_docker_image_list(d, filters, &imgs, &n, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n && r == 0; i++) {
		const char *repo = sbx_docker_label_get(imgs[i].labels, imgs[i].n_labels,
							SBX_IMAGE_LABEL_TASK);
		const char *tag = repo ? tag_in(&imgs[i], repo) : NULL;
		const char *why = NULL;
		bool newest = true;

		/* Only our tags: an image built FROM a task image inherits the label. */
		if (!tag || strncmp(repo, "sandboxctl-task/", 16) != 0 ||
		    image_used(cs, ncs, imgs[i].id))
			continue;
		for (size_t j = 0; j < n && newest; j++)
			if (j != i && tag_in(&imgs[j], repo) && imgs[j].created > imgs[i].created)
				newest = false;
		if (!newest)
			why = "superseded";
		else if (older_than_s >= 0 && now - imgs[i].created >= older_than_s)
			why = "older than the limit";
		if (why && !gc_add(l, SBX_IMAGE_GC_TASK_IMAGE, tag, why))
			r = -ENOMEM;
	}
	sbx_docker_image_list_free(imgs, n);
	return r < 0 ? sbx_error_set(err, r, "out of memory") : 0;
}

static bool has_name(char **names, const char *name)
{
	for (char **n = names; n && *n; n++)
		if (strcmp(*n, name) == 0)
			return true;
	return false;
}

static int bundles(sbx_docker *d, const sbx_docker_container *cs, size_t ncs, gc_list *l,
		   sbx_error *err)
{
	_cleanup_(sbx_docker_image_freep) sbx_docker_image *slim = NULL;
	char current[64], marker[sizeof(current) + sizeof(MARKER_SUFFIX)];
	char **names = NULL;
	int r;

	/* No slim image: no bundle can be told current, so all stay. */
	if (sbx_docker_image_inspect(d, SBX_IMAGE_SLIM, &slim, NULL) < 0)
		return 0;
	if (sbx_image__bundle_volume(slim->id, current, sizeof(current)) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	snprintf(marker, sizeof(marker), "%s" MARKER_SUFFIX, current);
	r = sbx_docker_volume_names(d, SBX_BUNDLE_PREFIX, &names, err);
	if (r < 0)
		return r;
	for (char **n = names; *n && r == 0; n++) {
		size_t len = strlen(*n), sl = strlen(MARKER_SUFFIX);
		bool is_marker = len > sl && strcmp(*n + len - sl, MARKER_SUFFIX) == 0;
		sbx_image_gc_item *it;

		if (strcmp(*n, current) == 0 || strcmp(*n, marker) == 0 || volume_used(cs, ncs, *n))
			continue;
		if (is_marker) {
			/* Its volume's item takes it; alone, it goes by itself. */
			char base[256];

			snprintf(base, sizeof(base), "%.*s", (int)(len - sl), *n);
			if (has_name(names, base))
				continue;
		}
		it = gc_add(l, SBX_IMAGE_GC_BUNDLE, *n, "old bundle");
		if (!it)
			r = -ENOMEM;
		else if (!is_marker) {
			snprintf(it->marker, sizeof(it->marker), "%s" MARKER_SUFFIX, *n);
			if (!has_name(names, it->marker))
				it->marker[0] = '\0';
		}
	}
	sbx_strv_free(names);
	return r < 0 ? sbx_error_set(err, r, "out of memory") : 0;
}

int sbx_image_gc_list(sbx_docker *d, int64_t now, int64_t older_than_s, sbx_image_gc_item **out,
		      size_t *n_out, sbx_error *err)
{
	sbx_docker_container *cs = NULL;
	gc_list l = {0};
	size_t ncs = 0;
	int r;

	r = sbx_docker_container_list(d, NULL, &cs, &ncs, err);
	if (r >= 0)
		r = task_images(d, cs, ncs, now, older_than_s, &l, err);
	if (r >= 0)
		r = bundles(d, cs, ncs, &l, err);
	sbx_docker_container_list_free(cs, ncs);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*out = l.v;
	*n_out = l.n;
	return 0;
}

int sbx_image_gc_remove(sbx_docker *d, const sbx_image_gc_item *item, sbx_error *err)
{
	int r;

	if (item->kind == SBX_IMAGE_GC_TASK_IMAGE)
		return sbx_docker_image_remove(d, item->name, false, err);
	r = sbx_docker_volume_remove(d, item->name, false, err);
	/* The marker only once its volume is gone: a volume without one counts as unfinished. */
	if ((r == 0 || r == -ENOENT) && item->marker[0]) {
		int m = sbx_docker_volume_remove(d, item->marker, false, err);

		if (m < 0 && m != -ENOENT)
			return m;
	}
	return r;
}
