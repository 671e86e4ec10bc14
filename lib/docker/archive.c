/* SPDX-License-Identifier: MIT */
/*
 * Archive endpoints: PUT a tar into a container; GET a path as a tar and
 * extract it safely WHILE it streams (curl multi drives the transfer from
 * libarchive's read callback, so a hostile 2 GB entry is refused after its
 * header, not after downloading it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker-internal.h"
#include "sbx/base64.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

#define ARCHIVE_TIMEOUT_MS (10L * 60 * 1000)
#define CHUNK_PAUSE	   (256u << 10)
#define DEFAULT_RAW_MAX	   ((size_t)64 << 20)

/*
 * Checks id and the absolute container path, and prepares the call:
 * *what = "container '<id>': copy into '<path>'" (into) or "... copy
 * '<path>' out" for messages (free()), and b = /containers/<id>/archive?path=.
 */
static int archive_prepare(const char *id, const char *path, bool into, char **what, sbx_buf *b,
			   sbx_error *err)
{
	int r = sbx_docker__check_name("container", id, err);

	if (r < 0)
		return r;
	if (!path || path[0] != '/' || strlen(path) > 4096)
		return sbx_error_set(err, -EINVAL,
				     "container '%s': path '%s' must be absolute (and under 4096 "
				     "bytes)",
				     id, path ? path : "");
	if (asprintf(what,
		     into ? "container '%s': copy into '%s'" : "container '%s': copy '%s' out", id,
		     path) < 0) {
		*what = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r = sbx_buf_puts(b, "/containers/");
	if (r == 0)
		r = sbx_docker__url_escape(b, id);
	if (r == 0)
		r = sbx_buf_puts(b, "/archive?path=");
	if (r == 0)
		r = sbx_docker__url_escape(b, path);
	return r < 0 ? sbx_error_set(err, r, "out of memory") : 0;
}

int sbx_docker_archive_put(sbx_docker *d, const char *id, const char *dest_dir, const void *tar,
			   size_t tar_len, sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	sbx_buf path = SBX_BUF_INIT(16384);
	docker_req req = {.method = "PUT", .content_type = "application/x-tar"};
	docker_resp resp;
	int r;

	r = archive_prepare(id, dest_dir, true, &what, &path, err);
	if (r == 0 && (r = sbx_buf_puts(&path, "&noOverwriteDirNonDir=1")) < 0)
		sbx_error_set(err, r, "out of memory");
	if (r < 0) {
		sbx_buf_free(&path);
		return r;
	}
	req.path = path.data;
	req.body = tar ? tar : "";
	req.body_len = tar_len;
	req.timeout_ms = ARCHIVE_TIMEOUT_MS;
	r = sbx_docker__request(d, &req, &resp, what, err);
	sbx_buf_free(&path);
	if (r == 0)
		r = sbx_docker__check(&resp, what, err);
	sbx_docker__resp_done(&resp);
	return r;
}

int sbx_docker_archive_put_dir(sbx_docker *d, const char *id, const char *dest_dir,
			       const char *host_dir, sbx_error *err)
{
	sbx_docker_tar *t = NULL;
	const void *data;
	size_t len;
	int r;

	r = sbx_docker_tar_new(&t, 0, err);
	if (r == 0)
		r = sbx_docker_tar_add_tree(t, host_dir, NULL, 0, 0, err);
	if (r == 0)
		r = sbx_docker_tar_finish(t, &data, &len, err);
	if (r == 0)
		r = sbx_docker_archive_put(d, id, dest_dir, data, len, err);
	sbx_docker_tar_free(t);
	return r;
}

int sbx_docker_archive_get_raw(sbx_docker *d, const char *id, const char *path, size_t max_bytes,
			       void **tar_out, size_t *len_out, sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	sbx_buf p = SBX_BUF_INIT(16384);
	docker_req req = {.method = "GET", .timeout_ms = ARCHIVE_TIMEOUT_MS};
	docker_resp resp;
	int r;

	r = archive_prepare(id, path, false, &what, &p, err);
	if (r < 0) {
		sbx_buf_free(&p);
		return r;
	}
	req.path = p.data;
	req.max_body = max_bytes ? max_bytes : DEFAULT_RAW_MAX;
	r = sbx_docker__request(d, &req, &resp, what, err);
	sbx_buf_free(&p);
	if (r == -ENOBUFS)
		r = sbx_error_replace(err, -EFBIG, "%s: larger than %zu bytes", what, req.max_body);
	if (r == 0)
		r = sbx_docker__check(&resp, what, err);
	if (r == 0) {
		*tar_out = sbx_buf_steal(&resp.body, len_out);
		if (!*tar_out)
			r = sbx_error_set(err, -ENOMEM, "out of memory");
	}
	sbx_docker__resp_done(&resp);
	return r;
}

/* ------------------------------------------------------ streamed GET */

typedef struct pull {
	sbx_docker *d;
	CURLM *multi;
	CURL *c;
	sbx_buf chunk;	 /* body bytes handed to libarchive next */
	sbx_buf errbody; /* body of a non-200 answer */
	bool paused;
	bool handed; /* chunk was given to libarchive: reuse it on the next read */
	bool done;
	CURLcode result;
	const char *what;
	long timeout_ms;
	sbx_error *err;
} pull;

static size_t pull_write(char *p, size_t size, size_t nmemb, void *userdata)
{
	pull *x = userdata;
	size_t n = size * nmemb;
	long status = 0;

	curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		if (x->errbody.len + n <= DOCKER_MAX_ERROR_BODY)
			sbx_buf_append(&x->errbody, p, n);
		return n;
	}
	if (x->chunk.len >= CHUNK_PAUSE) {
		x->paused = true;
		return CURL_WRITEFUNC_PAUSE;
	}
	return sbx_buf_append(&x->chunk, p, n) < 0 ? CURL_WRITEFUNC_ERROR : n;
}

/* Runs the transfer a little: until data arrives, it ends, or a second passes. */
static void pump(pull *x)
{
	int running = 0, left = 0;
	CURLMsg *m;

	curl_multi_perform(x->multi, &running);
	while ((m = curl_multi_info_read(x->multi, &left)))
		if (m->msg == CURLMSG_DONE) {
			x->done = true;
			x->result = m->data.result;
		}
	if (!x->done && !running) {
		x->done = true;
		x->result = CURLE_OK;
	}
	if (!x->done && x->chunk.len == 0)
		curl_multi_poll(x->multi, NULL, 0, 1000, NULL);
}

static int pull_error(pull *x)
{
	if (x->result == CURLE_OK)
		return 0;
	x->d->curl_error[CURL_ERROR_SIZE - 1] = '\0';
	return sbx_docker__transport_error(x->d, x->c, x->result, x->what, x->timeout_ms, x->err);
}

static ssize_t pull_read(void *payload, const void **block)
{
	pull *x = payload;
	int r;

	if (x->handed) {
		sbx_buf_reset(&x->chunk);
		x->handed = false;
	}
	if (x->paused) {
		x->paused = false;
		curl_easy_pause(x->c, CURLPAUSE_CONT);
	}
	while (x->chunk.len == 0 && !x->done)
		pump(x);
	if (x->chunk.len == 0) {
		r = pull_error(x);
		return r < 0 ? r : 0;
	}
	x->handed = true;
	*block = x->chunk.data;
	return (ssize_t)x->chunk.len;
}

int sbx_docker_archive_get(sbx_docker *d, const char *id, const char *path, const char *dest_dir,
			   const sbx_docker_extract_opts *opts, sbx_docker_extract_stats *stats,
			   sbx_error *err)
{
	_cleanup_free_ char *what = NULL, *url = NULL;
	_cleanup_close_ int dirfd = -1;
	sbx_buf p = SBX_BUF_INIT(16384);
	pull x = {.d = d, .timeout_ms = ARCHIVE_TIMEOUT_MS, .err = err};
	long status = 0;
	int r;

	r = archive_prepare(id, path, false, &what, &p, err);
	if (r == 0 && asprintf(&url, "%s/v%s%s", d->base_url, d->api_version, p.data) < 0) {
		url = NULL;
		r = sbx_error_set(err, -ENOMEM, "out of memory");
	}
	sbx_buf_free(&p);
	if (r < 0)
		return r;
	x.what = what;
	dirfd = open(dest_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return sbx_error_set(err, -errno, "%s: '%s': %s", what, dest_dir, strerror(errno));

	sbx_buf_init(&x.chunk, CHUNK_PAUSE + CURL_MAX_WRITE_SIZE * 2);
	sbx_buf_init(&x.errbody, DOCKER_MAX_ERROR_BODY);
	x.multi = curl_multi_init();
	x.c = curl_easy_init();
	if (!x.multi || !x.c) {
		r = sbx_error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	d->curl_error[0] = '\0';
	sbx_docker__setup_transport(d, x.c, x.timeout_ms);
	curl_easy_setopt(x.c, CURLOPT_URL, url);
	curl_easy_setopt(x.c, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(x.c, CURLOPT_WRITEFUNCTION, pull_write);
	curl_easy_setopt(x.c, CURLOPT_WRITEDATA, &x);
	curl_multi_add_handle(x.multi, x.c);

	/* Headers first: a 404 or 500 carries JSON, not a tar. */
	while (!x.done && status == 0) {
		pump(&x);
		curl_easy_getinfo(x.c, CURLINFO_RESPONSE_CODE, &status);
	}
	if (status != 200) {
		while (!x.done)
			pump(&x);
		curl_easy_getinfo(x.c, CURLINFO_RESPONSE_CODE, &status);
		r = pull_error(&x);
		if (r == 0) {
			docker_resp resp = {.status = status, .body = x.errbody};
			r = sbx_docker__check(&resp, what, err);
		}
		goto done;
	}
	r = sbx_docker__tar_extract_stream(pull_read, &x, dirfd, opts, stats, err);
	if (r < 0)
		sbx_error_prefix(err, r, "%s", what);

done:
	if (x.multi && x.c)
		curl_multi_remove_handle(x.multi, x.c);
	if (x.c) {
		curl_easy_setopt(x.c, CURLOPT_ERRORBUFFER, NULL);
		curl_easy_cleanup(x.c);
	}
	if (x.multi)
		curl_multi_cleanup(x.multi);
	sbx_buf_free(&x.chunk);
	sbx_buf_free(&x.errbody);
	return r;
}

/* Go's os.FileMode bits in the engine's path stat. */
#define GO_MODE_DIR	(1u << 31)
#define GO_MODE_SYMLINK (1u << 27)

int sbx_docker_archive_stat(sbx_docker *d, const char *id, const char *path, bool *is_dir,
			    bool *is_link, sbx_error *err)
{
	_cleanup_free_ char *what = NULL;
	_cleanup_json_ cJSON *j = NULL;
	sbx_buf b = SBX_BUF_INIT(16384);
	docker_req req = {.method = "HEAD"};
	docker_resp resp;
	ssize_t n;
	uint32_t mode;
	int r;

	r = archive_prepare(id, path, false, &what, &b, err);
	if (r < 0) {
		sbx_buf_free(&b);
		return r;
	}
	req.path = b.data;
	r = sbx_docker__request(d, &req, &resp, what, err);
	sbx_buf_free(&b);
	if (r == 0)
		r = sbx_docker__check(&resp, what, err);
	if (r == 0 && (!resp.path_stat || (n = sbx_base64_decode(resp.path_stat)) < 0 ||
		       sbx_json_parse(resp.path_stat, (size_t)n, &j, NULL) < 0))
		r = sbx_error_set(err, -EPROTO, "%s: no path stat in the engine's answer", what);
	if (r == 0) {
		mode = (uint32_t)sbx_json_get_number(j, "mode", 0);
		*is_dir = mode & GO_MODE_DIR;
		*is_link = mode & GO_MODE_SYMLINK;
	}
	sbx_docker__resp_done(&resp);
	return r;
}
