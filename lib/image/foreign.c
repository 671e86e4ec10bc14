/* SPDX-License-Identifier: MIT */
/*
 * Any image: the bundle volume a sandbox on a foreign image mounts read-only
 * at SBX_BUNDLE_DIR (see sbx/image.h). Made once per source image by a
 * short-lived helper container of our slim image, which copies its own
 * programs and the libraries they load; found again by name afterwards.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sbx/cleanup.h"
#include "sbx/image.h"
#include "sbx/json.h"
#include "sbx/labels.h"
#include "sbx/log.h"
#include "image-internal.h"

#define HELPER_TIMEOUT_MS (120 * 1000)
#define DEFAULT_PATH	  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/*
 * Runs in the helper (our slim image, root without capabilities, no
 * network) with the volume at /b: builds the bundle beside it and renames it
 * into place, so a sandbox never sees half of one and two helpers racing
 * leave the first one's. Prints the content hash.
 */
static const char bundle_script[] =
	"set -eu\n"
	"B=/b\n"
	"if [ -f $B/v1/HASH ]; then cat $B/v1/HASH; exit 0; fi\n"
	"T=$B/.tmp-$(hostname)-$$\n"
	"mkdir -p $T/bin $T/lib $T/libexec\n"
	"cp /usr/local/bin/sandbox-init /usr/local/bin/sandbox-bridge "
	"/usr/local/bin/sandbox-spawner $T/bin/\n"
	"cp /usr/local/bin/sandbox-mcp \"$(command -v tar)\" $T/libexec/\n"
	"for f in $T/libexec/*; do ldd \"$f\"; done | sed -n 's|.*=> \\(/[^ ]*\\) .*|\\1|p' |"
	" sort -u | while read -r l; do cp -L \"$l\" $T/lib/; done\n"
	"cp -L /lib64/ld-linux-x86-64.so.2 $T/lib/ld.so\n"
	/* Static; the server looks for it beside itself (/v1/sandboxes' exec and files). */
	"cp /usr/local/bin/sandbox-io $T/libexec/\n"
	/* The server runs as the loader: under this name, ps and /proc/PID/comm say so. */
	"mv $T/libexec/sandbox-mcp $T/libexec/sandbox-mcp.bin\n"
	"ln $T/lib/ld.so $T/libexec/sandbox-mcp\n"
	"(cd $T && find . -type f | LC_ALL=C sort | xargs sha256sum) > $T/MANIFEST\n"
	"sha256sum < $T/MANIFEST | cut -c1-64 > $T/HASH\n"
	"chmod -R a-w,a+rX $T/bin $T/lib $T/libexec $T/MANIFEST $T/HASH\n"
	"if ! mv -T $T $B/v1 2>/dev/null; then chmod -R u+w $T; rm -rf $T; fi\n"
	"cat $B/v1/HASH\n";

/* The image's own PATH (its tools: python, a compiler), after the bundle's bin/. */
static int image_path_env(const char *raw_json, char *out, size_t size)
{
	_cleanup_json_ cJSON *j = NULL;
	const char *path = DEFAULT_PATH;
	const cJSON *it;

	if (raw_json && sbx_json_parse(raw_json, strlen(raw_json), &j, NULL) == 0)
		cJSON_ArrayForEach (it, sbx_json_get(sbx_json_get(j, "Config"), "Env"))
			if (cJSON_IsString(it) && strncmp(it->valuestring, "PATH=", 5) == 0)
				path = it->valuestring + 5;
	if ((size_t)snprintf(out, size, "PATH=%s/bin:%s", SBX_BUNDLE_DIR, path) >= size)
		snprintf(out, size, "PATH=%s/bin:%s", SBX_BUNDLE_DIR, DEFAULT_PATH);
	return 0;
}

/* The image's VOLUMEs (Config.Volumes' keys), at most SBX_BUNDLE_MAX_VOLUMES. */
static int image_volumes(const char *ref, const char *raw_json, sbx_image_bundle *out,
			 sbx_error *err)
{
	_cleanup_json_ cJSON *j = NULL;
	const cJSON *it;

	if (!raw_json || sbx_json_parse(raw_json, strlen(raw_json), &j, NULL) < 0)
		return 0;
	cJSON_ArrayForEach (it, sbx_json_get(sbx_json_get(j, "Config"), "Volumes")) {
		if (out->n_volumes == SBX_BUNDLE_MAX_VOLUMES ||
		    strlen(it->string) >= sizeof(out->volumes[0]))
			return sbx_error_set(err, -EINVAL,
					     "image '%s' declares more than %d VOLUMEs, or one "
					     "longer than %zu bytes: refusing",
					     ref, SBX_BUNDLE_MAX_VOLUMES,
					     sizeof(out->volumes[0]) - 1);
		snprintf(out->volumes[out->n_volumes++], sizeof(out->volumes[0]), "%s", it->string);
	}
	return 0;
}

/*
 * One of our images: the label `sandboxctl build` (or a test's dev image) puts
 * there, on an image tagged in the namespaces sandboxctl and its tests make.
 * A label alone proves nothing (a task's Dockerfile may set it), and an image
 * we trust runs its own entrypoint as PID 1, as root with three capabilities.
 */
static bool image_is_ours(const sbx_docker_image *img)
{
	if (!sbx_docker_label_get(img->labels, img->n_labels, SBX_LABEL_IMAGE))
		return false;
	for (char **t = img->repo_tags; t && *t; t++)
		if (strncmp(*t, "sandboxctl/", 11) == 0 || strncmp(*t, "sandboxctl-test/", 16) == 0)
			return true;
	return false;
}

/* Reads the ready marker: 0 and the hash when the bundle volume is complete. */
static int bundle_ready(sbx_docker *d, const char *marker, char *hash, size_t size)
{
	sbx_docker_kv *labels = NULL;
	size_t n = 0;
	const char *h;
	int r = sbx_docker_volume_labels(d, marker, &labels, &n, NULL);

	if (r < 0)
		return r;
	h = sbx_docker_label_get(labels, n, SBX_LABEL_BUNDLE);
	r = h && strlen(h) == 64 ? 0 : -ENOENT;
	if (r == 0)
		snprintf(hash, size, "%s", h);
	sbx_docker_volume_labels_free(labels, n);
	return r;
}

/* The helper's run: create, start, wait, its output; removed whatever happens. */
static int run_helper(sbx_docker *d, const char *source, const char *volume, sbx_buf *out,
		      sbx_error *err)
{
	sbx_docker_container_opts o = SBX_DOCKER_CONTAINER_OPTS_INIT;
	_cleanup_free_ char *id = NULL, *bind = NULL, *owner = NULL;
	sbx_buf errs = SBX_BUF_INIT(4096);
	char created[32];
	/* Owned like a sandbox, so `gc` removes it if this process dies before it does. */
	sbx_docker_kv labels[] = {{SBX_LABEL_OWNER, ""},
				  {SBX_LABEL_CREATED, created},
				  {SBX_LABEL_RUN_ID, volume},
				  {SBX_LABEL_TASK, "(any-image bundle)"}};
	int r, code = -1;

	r = sbx_label_owner_self(&owner, err);
	if (r < 0)
		return r;
	labels[0].value = owner;
	snprintf(created, sizeof(created), "%lld", (long long)time(NULL));
	if (asprintf(&bind, "%s:/b", volume) < 0) {
		bind = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	o.image = source;
	o.entrypoint = (const char *const[]){"/bin/sh", "-c", bundle_script, NULL};
	o.cmd = (const char *const[]){"bundle", NULL};
	o.user = "0:0";
	o.cap_drop = (const char *const[]){"ALL", NULL};
	o.security_opt = (const char *const[]){"no-new-privileges:true", NULL};
	o.network_mode = "none";
	o.network_disabled = true;
	o.binds = (const char *const[]){bind, NULL};
	o.labels = labels;
	o.n_labels = SBX_ELEMENTSOF(labels);
	r = sbx_docker_container_create(d, &o, &id, err);
	if (r < 0)
		return r;
	r = sbx_docker_container_start(d, id, err);
	if (r >= 0)
		r = sbx_docker_container_wait(d, id, HELPER_TIMEOUT_MS, &code, err);
	if (r >= 0)
		r = sbx_docker_container_logs(d, id, 64 * 1024, out, &errs, err);
	if (r >= 0 && code != 0)
		r = sbx_error_set(err, -EIO, "bundle helper on '%s' exited with %d: %.300s", source,
				  code, sbx_buf_str(&errs));
	sbx_buf_free(&errs);
	sbx_docker_container_remove(d, id, true, false, NULL);
	return r;
}

/*
 * The bundles of earlier slim images: one per `sandboxctl build` (tens of MB
 * each). The engine refuses to remove one a sandbox still mounts; that one
 * stays, and goes at the next new bundle.
 */
static void remove_old_bundles(sbx_docker *d, const char *keep)
{
	char **names = NULL;

	if (sbx_docker_volume_names(d, SBX_BUNDLE_PREFIX, &names, NULL) < 0)
		return;
	for (char **n = names; *n; n++)
		if (strncmp(*n, keep, strlen(keep)) != 0 &&
		    sbx_docker_volume_remove(d, *n, false, NULL) == 0)
			sbx_log_debug("any image: removed the old bundle volume %s", *n);
	sbx_strv_free(names);
}

static int make_bundle(sbx_docker *d, const char *source, const char *volume, const char *marker,
		       char *hash, size_t size, sbx_error *err)
{
	sbx_buf out = SBX_BUF_INIT(64 * 1024);
	sbx_docker_kv label;
	const char *h;
	int r;

	r = sbx_docker_volume_create(d, volume, NULL, 0, err);
	if (r >= 0)
		r = run_helper(d, source, volume, &out, err);
	h = out.data ? out.data : "";
	if (r >= 0 && (strlen(h) < 64 || strspn(h, "0123456789abcdef") != 64))
		r = sbx_error_set(err, -EPROTO, "bundle helper on '%s': no content hash in '%.80s'",
				  source, h);
	if (r >= 0) {
		snprintf(hash, size, "%.64s", h);
		label = (sbx_docker_kv){SBX_LABEL_BUNDLE, hash};
		r = sbx_docker_volume_create(d, marker, &label, 1, err);
	}
	sbx_buf_free(&out);
	return r < 0 ? sbx_error_prefix(err, r, "making the any-image bundle") : r;
}

/* Named by its inputs: the source image and the recipe (a new layout, a new volume). */
int sbx_image__bundle_volume(const char *source_id, char *out, size_t size)
{
	_cleanup_free_ char *in = NULL;
	char h[SBX_IMAGE_HASH_LEN];

	if (asprintf(&in, "%s\n%s", source_id, bundle_script) < 0) {
		in = NULL;
		return -ENOMEM;
	}
	sbx_image__sha256(in, strlen(in), h);
	snprintf(out, size, SBX_BUNDLE_PREFIX "%.12s", h);
	return 0;
}

int sbx_image_prepare_foreign(sbx_docker *d, const char *ref, sbx_image_bundle *out, sbx_error *err)
{
	_cleanup_(sbx_docker_image_freep) sbx_docker_image *img = NULL, *src = NULL;
	char marker[sizeof(out->volume) + 8];
	int r;

	memset(out, 0, sizeof(*out));
	r = sbx_docker_image_inspect(d, ref, &img, NULL);
	if (r == -ENOENT) {
		/* Callers name the image; the engine's 404 is how they tell "no such image". */
		sbx_error_set(err, r, "not on the engine");
		if (err)
			err->http_status = 404;
		return r;
	}
	if (r < 0)
		return sbx_docker_image_inspect(d, ref, &img, err);
	if (image_is_ours(img))
		return 0;
	if (strcmp(img->os ? img->os : "", "linux") != 0 ||
	    strcmp(img->arch ? img->arch : "", "amd64") != 0)
		return sbx_error_set(err, -EINVAL,
				     "image '%s' is %s/%s: a sandbox needs linux/amd64", ref,
				     img->os ? img->os : "?", img->arch ? img->arch : "?");
	image_path_env(img->raw_json, out->path_env, sizeof(out->path_env));
	r = image_volumes(ref, img->raw_json, out, err);
	if (r < 0)
		return r;
	r = sbx_docker_image_inspect(d, SBX_IMAGE_SLIM, &src, NULL);
	if (r < 0)
		return sbx_error_set(err, r,
				     "image '%s' has none of sandboxctl's files, and the bundle "
				     "they come from needs %s: run 'sandboxctl build --slim'",
				     ref, SBX_IMAGE_SLIM);
	if (sbx_image__bundle_volume(src->id, out->volume, sizeof(out->volume)) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	snprintf(marker, sizeof(marker), "%s.ready", out->volume);
	/* Both: a volume removed by hand (its marker left) is made again, not mounted empty. */
	if (bundle_ready(d, marker, out->hash, sizeof(out->hash)) == 0) {
		sbx_docker_kv *l = NULL;
		size_t n = 0;

		if (sbx_docker_volume_labels(d, out->volume, &l, &n, NULL) == 0) {
			sbx_docker_volume_labels_free(l, n);
			return 0;
		}
		sbx_docker_volume_remove(d, marker, true, NULL);
	}
	r = make_bundle(d, src->id, out->volume, marker, out->hash, sizeof(out->hash), err);
	if (r < 0)
		return r;
	out->made = true;
	remove_old_bundles(d, out->volume);
	sbx_log_info("any image: bundle %.12s made in volume %s", out->hash, out->volume);
	return 0;
}
