/* SPDX-License-Identifier: MIT */
/* sbx_image_build: context, bases, hash, then the image unless one with the hash exists. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "image-internal.h"
#include "sbx-config.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/labels.h"

#define REGISTRY_BASE "debian:bookworm-slim"
#define HOST_SOURCES  "/etc/apt/sources.list.d/debian.sources"
#define MAX_LABELS    16

const char *sbx_image_variant_name(sbx_image_variant v)
{
	return v == SBX_IMAGE_VARIANT_FULL ? "full" : "slim";
}

const char *sbx_image_variant_repo(sbx_image_variant v)
{
	return v == SBX_IMAGE_VARIANT_FULL ? SBX_IMAGE_REPO_FULL : SBX_IMAGE_REPO_SLIM;
}

const char *sbx_image_missing_advice(const char *ref)
{
	size_t slim = strlen(SBX_IMAGE_REPO_SLIM), full = strlen(SBX_IMAGE_REPO_FULL);

	if (ref && strncmp(ref, SBX_IMAGE_REPO_SLIM, slim) == 0 &&
	    (ref[slim] == ':' || ref[slim] == '\0'))
		return "build it with 'sandboxctl build --slim'";
	if (ref && strncmp(ref, SBX_IMAGE_REPO_FULL, full) == 0 &&
	    (ref[full] == ':' || ref[full] == '\0'))
		return "build it with 'sandboxctl build --full'";
	return "not an image 'sandboxctl build' makes: load it into the engine (docker pull, "
	       "docker load) or drop --image";
}

double sbx_image__now(void)
{
	return sbx_now_msf() / 1e3;
}

void sbx_image__emit(const sbx_image__progress *p, sbx_image_event_kind kind, const char *phase,
		     const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!p || !p->fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->fn(&(sbx_image_event){kind, phase, msg, sbx_image__now() - p->start}, p->payload);
}

int sbx_image_source_dir(const char *dir, const char **out, sbx_error *err)
{
	char probe[4096];
	struct stat s;

	if (!dir || !*dir)
		dir = getenv("SBX_SOURCE_ROOT");
#ifdef SBX_SOURCE_ROOT
	if (!dir || !*dir)
		dir = SBX_SOURCE_ROOT;
#endif
	if (!dir || !*dir)
		return sbx_error_set(err, -ENOENT, "no source tree: pass --source-dir");
	snprintf(probe, sizeof(probe), "%s/%s", dir, SBX_IMAGE_DOCKERFILE);
	if (stat(probe, &s) < 0 || !S_ISREG(s.st_mode))
		return sbx_error_set(err, -ENOENT,
				     "source tree '%s' has no '%s': pass --source-dir with a "
				     "sandboxctl checkout",
				     dir, SBX_IMAGE_DOCKERFILE);
	*out = dir;
	return 0;
}

void sbx_image_result_free(sbx_image_result *r)
{
	if (!r)
		return;
	sbx_free_all(r->ref, r->latest_ref, r->id, r->inputs_hash);
	free(r);
}

SBX_DEFINE_CLEANUP(sbx_image_result, sbx_image_result_free)
SBX_DEFINE_CLEANUP(sbx_image_context, sbx_image_context_free)

static const char *default_mirror(const char *mirror)
{
	const char *env = getenv("SBX_DEBIAN_MIRROR");

	if (mirror && *mirror)
		return mirror;
	if (env && *env)
		return env;
	return access(HOST_SOURCES, R_OK) == 0 ? HOST_SOURCES : NULL;
}

static int check_word(const char *what, const char *s, sbx_error *err)
{
	if (!*s || s[0] == '-' || strlen(s) > 64 ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(s))
		return sbx_error_set(err, -EINVAL, "%s '%s': expected a Debian suite name", what,
				     s);
	return 0;
}

typedef struct build_state {
	const sbx_image_build_opts *opts;
	sbx_image__progress progress;
	sbx_image_context *ctx;
	char *build_ref, *build_id, *runtime_ref, *runtime_id;
	int bases_built;
} build_state;

static int ensure_bases(sbx_docker *d, build_state *s, sbx_error *err)
{
	const sbx_image_build_opts *o = s->opts;
	const char *tmp = o->tmp_dir && *o->tmp_dir ? o->tmp_dir : getenv("TMPDIR");
	_cleanup_free_ char *build_pkgs = NULL, *runtime_pkgs = NULL;
	sbx_image__base_spec spec = {
		.suite = o->suite && *o->suite ? o->suite : "bookworm",
		.mirror = default_mirror(o->mirror),
		.tmp_dir = tmp && *tmp ? tmp : "/var/tmp",
		.rebuild_before = o->rebuild_bases_before,
		.labels = o->labels,
		.n_labels = o->n_labels,
	};
	bool made;
	int r;

	if (o->bases == SBX_IMAGE_BASES_REGISTRY) {
		s->build_ref = strdup(REGISTRY_BASE);
		s->runtime_ref = strdup(REGISTRY_BASE);
		s->build_id = strdup(REGISTRY_BASE);
		s->runtime_id = strdup(REGISTRY_BASE);
		return s->build_ref && s->runtime_ref && s->build_id && s->runtime_id
			       ? 0
			       : sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r = check_word("suite", spec.suite, err);
	if (r < 0)
		return r;
	if (spec.mirror && !strstr(spec.mirror, "://") && spec.mirror[0] != '/')
		return sbx_error_set(err, -EINVAL,
				     "mirror '%s': expected a URL or an absolute path to an apt "
				     "sources file",
				     spec.mirror);
	r = sbx_image_base_packages(s->ctx, SBX_IMAGE_BASE_BUILD, o->variant, &build_pkgs, err);
	if (r < 0)
		return r;
	r = sbx_image_base_packages(s->ctx, SBX_IMAGE_BASE_RUNTIME, o->variant, &runtime_pkgs, err);
	if (r < 0)
		return r;

	spec.name = "build";
	spec.packages = build_pkgs;
	r = sbx_image__base_ensure(d, &spec, &s->progress, &s->build_ref, &s->build_id, &made, err);
	if (r < 0)
		return r;
	s->bases_built += made;

	spec.name = sbx_image_variant_name(o->variant);
	spec.packages = runtime_pkgs;
	r = sbx_image__base_ensure(d, &spec, &s->progress, &s->runtime_ref, &s->runtime_id, &made,
				   err);
	if (r < 0)
		return r;
	s->bases_built += made;
	return 0;
}

/* The engine's build output, a line at a time (a chunk may hold several). */
static int on_build_progress(const sbx_docker_progress *p, void *payload)
{
	const sbx_image__progress *prog = payload;
	const char *text = p->stream ? p->stream : p->status;

	while (text && *text) {
		size_t n = strcspn(text, "\n");

		while (n > 0 && (text[n - 1] == '\r' || text[n - 1] == ' '))
			n--;
		if (n > 0)
			sbx_image__emit(prog, SBX_IMAGE_EVENT_OUTPUT, "image", "%.*s", (int)n,
					text);
		text += strcspn(text, "\n");
		text += *text == '\n';
	}
	return 0;
}

static int run_build(sbx_docker *d, build_state *s, const char *ref, const char *latest,
		     const char *hash, char **id_out, sbx_error *err)
{
	const sbx_image_build_opts *o = s->opts;
	_cleanup_(sbx_docker_tar_freep) sbx_docker_tar *tar = NULL;
	const void *data;
	size_t len;
	sbx_docker_kv labels[MAX_LABELS + 1];
	size_t nl = 0;
	int r;

	if (o->n_labels > MAX_LABELS)
		return sbx_error_set(err, -E2BIG, "more than %d labels", MAX_LABELS);
	r = sbx_image_context_tar(s->ctx, &tar, &data, &len, err);
	if (r < 0)
		return r;
	/* SBX_LABEL_IMAGE comes from the Dockerfile; each label here costs a build step. */
	labels[nl++] = (sbx_docker_kv){SBX_LABEL_INPUTS_HASH, hash};
	for (size_t i = 0; i < o->n_labels; i++)
		labels[nl++] = o->labels[i];

	const sbx_docker_kv args[] = {
		{"BUILD_BASE", s->build_ref},
		{"RUNTIME_BASE", s->runtime_ref},
		{"VARIANT", sbx_image_variant_name(o->variant)},
		{"DISPLAY_DEFAULT", o->variant == SBX_IMAGE_VARIANT_FULL ? ":99" : ""},
	};
	const char *tags[] = {ref, latest, NULL};
	sbx_docker_build_opts bo = SBX_DOCKER_BUILD_OPTS_INIT;

	bo.context_tar = data;
	bo.context_tar_len = len;
	bo.dockerfile = SBX_IMAGE_DOCKERFILE;
	bo.tags = tags;
	bo.labels = labels;
	bo.n_labels = nl;
	bo.build_args = args;
	bo.n_build_args = SBX_ELEMENTSOF(args);
	/* Local bases hold every package: the RUN steps need no network at all. */
	bo.network_mode = o->bases == SBX_IMAGE_BASES_LOCAL ? "none" : NULL;
	bo.no_cache = o->force;
	bo.progress = on_build_progress;
	bo.progress_payload = &s->progress;
	sbx_image__emit(&s->progress, SBX_IMAGE_EVENT_PHASE, "image",
			"building %s (%zu kB context) on %s", ref, len / 1024, s->runtime_ref);
	/* The client's message already names the image. */
	return sbx_docker_image_build(d, &bo, id_out, err);
}

/*
 * Removes the tags <repo>:* of images labelled label=value other than
 * keep_id: older builds, so rebuilding after every edit does not fill the
 * disk. An image still used by a container stays (the engine refuses).
 */
void sbx_image__prune(sbx_docker *d, const char *repo, const char *label, const char *value,
		      const char *keep_id, const sbx_image__progress *p)
{
	char filter[256];
	const char *filters[] = {filter, NULL};
	sbx_docker_image *imgs = NULL;
	size_t n = 0, prefix = strlen(repo);

	snprintf(filter, sizeof(filter), "%s=%s", label, value);
	if (sbx_docker_image_list(d, filters, &imgs, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(imgs[i].id, keep_id) == 0)
			continue;
		for (char **t = imgs[i].repo_tags; t && *t; t++) {
			if (strncmp(*t, repo, prefix) != 0 || (*t)[prefix] != ':')
				continue;
			if (sbx_docker_image_remove(d, *t, false, NULL) == 0)
				sbx_image__emit(p, SBX_IMAGE_EVENT_OUTPUT, "prune",
						"removed superseded %s", *t);
		}
	}
	sbx_docker_image_list_free(imgs, n);
}

static bool untagged(const sbx_docker_image *img)
{
	for (char **t = img->repo_tags; t && *t; t++)
		if (strcmp(*t, "<none>:<none>") != 0)
			return false;
	return true;
}

/*
 * The classic builder leaves each build's first stage (the compiler and the
 * compiled server) as an untagged image labelled like the build base. The
 * newest is the cache of the next build; older ones are ~430 MB each that
 * no one uses, so they go. The engine refuses an image still in use.
 */
static void prune_build_stages(sbx_docker *d, const sbx_image__progress *p)
{
	const char *filters[] = {SBX_LABEL_BASE "=build", NULL};
	sbx_docker_image *imgs = NULL;
	size_t n = 0, newest = SIZE_MAX;

	if (sbx_docker_image_list(d, filters, &imgs, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (untagged(&imgs[i]) &&
		    (newest == SIZE_MAX || imgs[i].created > imgs[newest].created))
			newest = i;
	for (size_t i = 0; i < n; i++) {
		if (i == newest || !untagged(&imgs[i]))
			continue;
		if (sbx_docker_image_remove(d, imgs[i].id, false, NULL) == 0)
			sbx_image__emit(p, SBX_IMAGE_EVENT_OUTPUT, "prune",
					"removed old build stage %.19s", imgs[i].id);
	}
	sbx_docker_image_list_free(imgs, n);
}

static void build_state_done(build_state *s)
{
	sbx_image_context_free(s->ctx);
	sbx_free_all(s->build_ref, s->build_id, s->runtime_ref, s->runtime_id);
}

int sbx_image_build(sbx_docker *d, const sbx_image_build_opts *opts, sbx_image_result **out,
		    sbx_error *err)
{
	_cleanup_(build_state_done) build_state s = {.opts = opts};
	_cleanup_(sbx_image_result_freep) sbx_image_result *res = calloc(1, sizeof(*res));
	char ctx_hash[SBX_IMAGE_HASH_LEN], hash[SBX_IMAGE_HASH_LEN], tag[SBX_IMAGE_TAG_LEN + 1];
	_cleanup_free_ char *inputs = NULL;
	const char *src, *repo;
	sbx_docker_image *img = NULL;
	int r;

	assert(opts && opts->version == SBX_IMAGE_BUILD_OPTS_VERSION);
	if (!res)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	s.progress =
		(sbx_image__progress){opts->progress, opts->progress_payload, sbx_image__now()};
	repo = opts->repo && *opts->repo ? opts->repo : sbx_image_variant_repo(opts->variant);

	r = sbx_image_source_dir(opts->source_dir, &src, err);
	if (r < 0)
		return r;
	sbx_image__emit(&s.progress, SBX_IMAGE_EVENT_PHASE, "context", "collecting from '%s'", src);
	r = sbx_image_context_collect(&s.ctx, src, err);
	if (r < 0)
		return r;
	sbx_image_context_hash(s.ctx, ctx_hash);
	sbx_image__emit(&s.progress, SBX_IMAGE_EVENT_DONE, "context", "%zu entries, hash %.12s",
			sbx_image_context_count(s.ctx), ctx_hash);

	r = ensure_bases(d, &s, err);
	if (r < 0)
		return r;

	/* Everything that goes in: the recipe version, variant, both bases, the sources. */
	if (asprintf(&inputs,
		     "sandboxctl-image/1\nvariant %s\nbuild-base %s\nruntime-base %s\n"
		     "context %s\n",
		     sbx_image_variant_name(opts->variant), s.build_id, s.runtime_id,
		     ctx_hash) < 0) {
		inputs = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	sbx_image__sha256(inputs, strlen(inputs), hash);
	snprintf(tag, sizeof(tag), "%.*s", SBX_IMAGE_TAG_LEN, hash);
	if (asprintf(&res->ref, "%s:%s", repo, tag) < 0 ||
	    asprintf(&res->latest_ref, "%s:latest", repo) < 0 ||
	    !(res->inputs_hash = strdup(hash))) {
		res->ref = res->latest_ref = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}

	r = sbx_docker_image_inspect(d, res->ref, &img, NULL);
	if (r >= 0 && !opts->force) {
		const char *have =
			sbx_docker_label_get(img->labels, img->n_labels, SBX_LABEL_INPUTS_HASH);

		if (!have || strcmp(have, hash) != 0) {
			sbx_docker_image_free(img);
			img = NULL;
			r = -ENOENT; /* same short tag, other inputs: build it again */
		}
	}
	if (r >= 0 && !opts->force) {
		sbx_image__emit(&s.progress, SBX_IMAGE_EVENT_SKIP, "image",
				"%s is up to date (inputs %.12s)", res->ref, hash);
	} else {
		sbx_docker_image_free(img);
		img = NULL;
		if (r < 0 && r != -ENOENT)
			return sbx_error_set(err, r, "image '%s': inspect failed", res->ref);
		r = run_build(d, &s, res->ref, res->latest_ref, hash, NULL, err);
		if (r < 0)
			return r;
		res->built = true;
		r = sbx_docker_image_inspect(d, res->ref, &img, err);
		if (r < 0)
			return sbx_error_prefix(err, r, "image '%s' built but", res->ref);
	}
	r = sbx_docker_image_tag(d, res->ref, repo, "latest", err);
	if (r >= 0 && !(res->id = strdup(img->id)))
		r = sbx_error_set(err, -ENOMEM, "out of memory");
	res->size = img->size;
	sbx_docker_image_free(img);
	if (r < 0)
		return r;
	if (res->built) {
		sbx_image__prune(d, repo, SBX_LABEL_IMAGE, sbx_image_variant_name(opts->variant),
				 res->id, &s.progress);
		prune_build_stages(d, &s.progress);
	}
	res->bases_built = s.bases_built;
	res->seconds = sbx_image__now() - s.progress.start;
	sbx_image__emit(&s.progress, SBX_IMAGE_EVENT_DONE, "image", "%s (%s)", res->ref,
			res->built ? "built" : "up to date");
	*out = TAKE_PTR(res);
	return 0;
}
