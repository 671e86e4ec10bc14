/* SPDX-License-Identifier: MIT */
/*
 * Images a task brings (a Harbor task's environment/Dockerfile): the bases
 * checked on the engine, then POST /build with the directory as context.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "image-internal.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/docker_tar.h"
#include "sbx/file.h"
#include "sbx/image.h"

#define DOCKERFILE_MAX (1u << 20)
#define MAX_STAGES     32

void sbx_image_sha256_hex(const void *data, size_t len, char out[SBX_IMAGE_HASH_LEN])
{
	sbx_image__sha256(data, len, out);
}

/* The next whitespace-separated word of *p (at most cap-1 bytes), or false at the line's end. */
static bool word(const char **p, char *out, size_t cap)
{
	size_t n = 0;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (!**p || **p == '\n')
		return false;
	while (**p && **p != ' ' && **p != '\t' && **p != '\n' && **p != '\r') {
		if (n + 1 < cap)
			out[n++] = **p;
		(*p)++;
	}
	out[n] = '\0';
	return true;
}

/* The image id of ref appended to ids (when not NULL); false when the engine has no ref. */
static bool present(sbx_docker *d, const char *ref, sbx_buf *ids)
{
	_cleanup_(sbx_docker_image_freep) sbx_docker_image *img = NULL;

	if (sbx_docker_image_inspect(d, ref, &img, NULL) < 0)
		return false;
	if (ids && img->id)
		(void)sbx_buf_printf(ids, "%s\n", img->id);
	return true;
}

bool sbx_image_present(sbx_docker *d, const char *ref)
{
	return present(d, ref, NULL);
}

/* As sbx_image_check_bases; ids (may be NULL) gets each base's image id. */
static int check_bases(sbx_docker *d, const char *dockerfile, sbx_buf *ids, sbx_error *err)
{
	_cleanup_free_ char *text = NULL;
	char stages[MAX_STAGES][128];
	size_t len, n_stages = 0;
	unsigned line = 0;
	int r = sbx_file_read_capped(AT_FDCWD, dockerfile, DOCKERFILE_MAX, &text, &len, err);

	if (r < 0)
		return r;
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char kw[16], ref[256], as[8], name[128];
		bool stage = false;

		line++;
		if (!word(&p, kw, sizeof(kw)) || strcasecmp(kw, "FROM") != 0)
			continue;
		do {
			if (!word(&p, ref, sizeof(ref)))
				ref[0] = '\0';
		} while (strncmp(ref, "--", 2) == 0);
		for (size_t i = 0; i < n_stages; i++) /* an earlier stage, not an image */
			stage |= strcasecmp(stages[i], ref) == 0;
		if (word(&p, as, sizeof(as)) && strcasecmp(as, "AS") == 0 &&
		    word(&p, name, sizeof(name)) && n_stages < MAX_STAGES)
			snprintf(stages[n_stages++], sizeof(stages[0]), "%s", name);
		if (!ref[0] || stage || strcmp(ref, "scratch") == 0 || strchr(ref, '$'))
			continue;
		if (!present(d, ref, ids))
			return sbx_error_set(err, -ENOENT,
					     "%s:%u: FROM image '%s' is not on the engine (nothing "
					     "is pulled: load or build it first)",
					     dockerfile, line, ref);
	}
	return 0;
}

int sbx_image_check_bases(sbx_docker *d, const char *dockerfile, sbx_error *err)
{
	return check_bases(d, dockerfile, NULL, err);
}

int sbx_image_build_task(sbx_docker *d, const sbx_image_task_opts *o, char **image_id,
			 sbx_error *err)
{
	sbx_docker_build_opts b = SBX_DOCKER_BUILD_OPTS_INIT;
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *t = NULL;
	_cleanup_(sbx_docker_image_freep) sbx_docker_image *img = NULL;
	_cleanup_free_ char *dockerfile = NULL, *tag = NULL;
	_cleanup_(sbx_buf_free) sbx_buf ids = SBX_BUF_INIT(64 * 1024);
	sbx_docker_kv labels[8];
	char hash[SBX_IMAGE_HASH_LEN];
	const void *tar;
	size_t len;
	int r;

	if (asprintf(&dockerfile, "%s/Dockerfile", o->context_dir) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = check_bases(d, dockerfile, &ids, err);
	if (r < 0)
		return r;
	/*
	 * The context's content and the bases' ids name the image: an unchanged
	 * folder on unchanged bases is not sent again; a rebuilt base (a new
	 * sandbox image) builds it again.
	 */
	r = sbx_docker_tar_new(&t, SBX_IMAGE_CONTEXT_MAX_BYTES, err);
	if (r >= 0) {
		sbx_docker_tar_set_mtime(t, 0);
		r = sbx_docker_tar_add_tree(t, o->context_dir, "", 0, 0, err);
	}
	/* Not a file the Dockerfile names (the engine ignores it): there for the hash. */
	if (r >= 0)
		r = sbx_docker_tar_add_file(t, ".sandboxctl-bases", ids.data ? ids.data : "",
					    ids.len, 0644, 0, 0, err);
	if (r >= 0)
		r = sbx_docker_tar_finish(t, &tar, &len, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "%s", o->context_dir);
	sbx_image__sha256(tar, len, hash);
	if (asprintf(&tag, "%s:%.*s", o->repo, SBX_IMAGE_TAG_LEN, hash) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (sbx_docker_image_inspect(d, tag, &img, NULL) == 0 && img->id) {
		*image_id = strdup(img->id);
		return *image_id ? 0 : sbx_error_set(err, -ENOMEM, "out of memory");
	}
	b.context_tar = tar;
	b.context_tar_len = len;
	b.tags = (const char *const[]){tag, NULL};
	if (o->n_labels >= SBX_ELEMENTSOF(labels))
		return sbx_error_set(err, -EINVAL, "too many labels");
	memcpy(labels, o->labels, o->n_labels * sizeof(*labels));
	labels[o->n_labels] = (sbx_docker_kv){SBX_IMAGE_LABEL_TASK, o->repo};
	b.labels = labels;
	b.n_labels = o->n_labels + 1;
	b.pull = false;
	b.timeout_ms = (long)(o->timeout_s ? o->timeout_s : 600) * 1000;
	r = sbx_docker_image_build(d, &b, image_id, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "building %s", dockerfile);
	/* The task's older images go (an edited folder, an older base): they would keep old
	 * sandbox images' layers alive. One a container still uses stays. */
	sbx_image__prune(d, o->repo, SBX_IMAGE_LABEL_TASK, o->repo, *image_id, NULL);
	return 0;
}
