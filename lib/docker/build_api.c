/* SPDX-License-Identifier: MIT */
/* Image build (POST /build) and import (POST /images/create?fromSrc=-). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "docker-internal.h"

#define BUILD_TIMEOUT_MS  (30L * 60 * 1000)
#define IMPORT_TIMEOUT_MS (10L * 60 * 1000)
#define MAX_CONTEXT_BYTES ((size_t)2 << 30)

static int lines_data(const char *p, size_t n, void *payload)
{
	return sbx_docker__lines_feed(payload, p, n);
}

static int add_query(sbx_buf *b, const char *key, const char *value)
{
	int r = sbx_buf_printf(b, "%c%s=", strchr(sbx_buf_str(b), '?') ? '&' : '?', key);

	return r < 0 ? r : sbx_docker__url_escape(b, value);
}

static int add_query_kv(sbx_buf *b, const char *key, const sbx_docker_kv *kv, size_t n)
{
	_cleanup_json_ cJSON *o = NULL;
	_cleanup_free_ char *json = NULL;

	if (n == 0)
		return 0;
	o = cJSON_CreateObject();
	if (!o || sbx_docker__add_labels(o, "x", kv, n) < 0)
		return -ENOMEM;
	json = sbx_json_print(sbx_json_get(o, "x"));
	return json ? add_query(b, key, json) : -ENOMEM;
}

static int build_query(sbx_buf *b, const sbx_docker_build_opts *o)
{
	int r = sbx_buf_puts(b, "/build");

	for (const char *const *t = o->tags; r == 0 && t && *t; t++)
		r = add_query(b, "t", *t);
	if (r == 0 && o->dockerfile)
		r = add_query(b, "dockerfile", o->dockerfile);
	if (r == 0)
		r = add_query_kv(b, "labels", o->labels, o->n_labels);
	if (r == 0)
		r = add_query_kv(b, "buildargs", o->build_args, o->n_build_args);
	if (r == 0 && o->target)
		r = add_query(b, "target", o->target);
	if (r == 0 && o->network_mode)
		r = add_query(b, "networkmode", o->network_mode);
	if (r == 0)
		r = add_query(b, "nocache", o->no_cache ? "1" : "0");
	if (r == 0)
		r = add_query(b, "pull", o->pull ? "1" : "0");
	if (r == 0)
		r = add_query(b, "rm", o->keep_intermediate ? "0" : "1");
	if (r == 0 && !o->keep_intermediate)
		r = add_query(b, "forcerm", "1");
	return r;
}

/* The engine's answer after the stream: its error, else the image id. */
static int stream_result(docker_lines *l, const docker_resp *resp, const char *what, bool import,
			 char **image_id_out, sbx_error *err)
{
	const char *id;
	int r = sbx_docker__check(resp, what, err);

	if (r < 0)
		return r;
	r = sbx_docker__lines_finish(l);
	if (r < 0)
		return r;
	/* Import: the last status line is the new image's id. Build: aux.ID. */
	if (import)
		id = l->last_status && strncmp(l->last_status, "sha256:", 7) == 0 ? l->last_status
										  : NULL;
	else
		id = l->aux_id;
	if (l->error)
		return sbx_error_set(err, -EIO, "%s failed: %s", what, l->error);
	if (!id || !*id)
		return sbx_error_set(err, -EPROTO, "%s: the engine reported no image id", what);
	if (image_id_out) {
		*image_id_out = strdup(id);
		if (!*image_id_out)
			return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * Sends req (path, body and timeout set) and reads its answer as progress
 * lines for fn; the image id the stream ends with goes to *image_id_out.
 */
static int run_streamed(sbx_docker *d, docker_req *req, sbx_docker_progress_fn fn, void *payload,
			const char *what, bool import, char **image_id_out, sbx_error *err)
{
	docker_lines lines;
	docker_resp resp = {0};
	int r;

	sbx_docker__lines_init(&lines, fn, payload);
	req->on_data = lines_data;
	req->payload = &lines;
	r = sbx_docker__request(d, req, &resp, what, err);
	if (r == 0)
		r = stream_result(&lines, &resp, what, import, image_id_out, err);
	else if (!err || !err->msg[0])
		sbx_error_set(err, r, "%s: aborted: %s", what, strerror(-r));
	sbx_docker__resp_done(&resp);
	sbx_docker__lines_done(&lines);
	return r;
}

int sbx_docker_image_build(sbx_docker *d, const sbx_docker_build_opts *o, char **image_id_out,
			   sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	sbx_docker_tar *tar = NULL;
	sbx_buf path = SBX_BUF_INIT(65536);
	docker_req req = {.method = "POST", .content_type = "application/x-tar"};
	const void *ctx;
	size_t ctx_len;
	int r;

	if (!o || o->version != SBX_DOCKER_BUILD_OPTS_VERSION)
		return sbx_error_set(err, -EINVAL, "build options: wrong version");
	if (!!o->context_dir == !!o->context_tar)
		return sbx_error_set(err, -EINVAL,
				     "build options: give exactly one of context_dir, context_tar");
	if (asprintf(&what, "image build%s%s%s", o->tags && o->tags[0] ? " '" : "",
		     o->tags && o->tags[0] ? o->tags[0] : "", o->tags && o->tags[0] ? "'" : "") < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (o->context_dir) {
		r = sbx_docker_tar_new(&tar, MAX_CONTEXT_BYTES, err);
		if (r == 0)
			r = sbx_docker_tar_add_tree(tar, o->context_dir, NULL, 0, 0, err);
		if (r == 0)
			r = sbx_docker_tar_finish(tar, &ctx, &ctx_len, err);
		if (r < 0) {
			sbx_docker_tar_free(tar);
			return sbx_error_prefix(err, r, "%s: context '%s'", what, o->context_dir);
		}
	} else {
		ctx = o->context_tar;
		ctx_len = o->context_tar_len;
	}
	r = build_query(&path, o);
	if (r < 0) {
		sbx_docker_tar_free(tar);
		return sbx_error_set(err, r, "%s: options too long", what);
	}
	req.path = path.data;
	req.body = ctx;
	req.body_len = ctx_len;
	req.timeout_ms = o->timeout_ms ? o->timeout_ms : BUILD_TIMEOUT_MS;
	r = run_streamed(d, &req, o->progress, o->progress_payload, what, false, image_id_out, err);
	sbx_buf_free(&path);
	sbx_docker_tar_free(tar);
	return r;
}

int sbx_docker_image_import(sbx_docker *d, const sbx_docker_import_opts *o, char **image_id_out,
			    sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	sbx_buf path = SBX_BUF_INIT(65536);
	docker_req req = {.method = "POST", .content_type = "application/x-tar"};
	int r;

	if (!o || o->version != SBX_DOCKER_IMPORT_OPTS_VERSION)
		return sbx_error_set(err, -EINVAL, "import options: wrong version");
	if (!!o->tar_path == !!o->tar_data)
		return sbx_error_set(err, -EINVAL,
				     "import options: give exactly one of tar_path, tar_data");
	if (o->repo && (r = sbx_docker__check_name("repository", o->repo, err)) < 0)
		return r;
	if (asprintf(&what, "image import '%s:%s'", o->repo ? o->repo : "(untagged)",
		     o->tag ? o->tag : "latest") < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (o->tar_path) {
		struct stat st;

		f = fopen(o->tar_path, "re");
		if (!f || fstat(fileno(f), &st) < 0)
			return sbx_error_set(err, -errno, "%s: '%s': %s", what, o->tar_path,
					     strerror(errno));
		if (!S_ISREG(st.st_mode))
			return sbx_error_set(err, -EINVAL, "%s: '%s' is not a regular file", what,
					     o->tar_path);
		req.body_file = f;
		req.body_len = (size_t)st.st_size;
	} else {
		req.body = o->tar_data;
		req.body_len = o->tar_len;
	}
	r = sbx_buf_puts(&path, "/images/create?fromSrc=-");
	if (r == 0 && o->repo) {
		r = add_query(&path, "repo", o->repo);
		if (r == 0)
			r = add_query(&path, "tag", o->tag ? o->tag : "latest");
	}
	for (const char *const *c = o->changes; r == 0 && c && *c; c++)
		r = add_query(&path, "changes", *c);
	if (r == 0 && o->message)
		r = add_query(&path, "message", o->message);
	if (r < 0)
		return sbx_error_set(err, r, "%s: options too long", what);
	req.path = path.data;
	req.timeout_ms = o->timeout_ms ? o->timeout_ms : IMPORT_TIMEOUT_MS;
	r = run_streamed(d, &req, o->progress, o->progress_payload, what, true, image_id_out, err);
	sbx_buf_free(&path);
	return r;
}
