/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The sandbox image: collect the build context from the source tree, make
 * the Debian bases offline (mmdebstrap from the host's mirror, imported
 * through the Engine API), build images/Dockerfile on top, and tag the
 * result with a hash of everything that went in, so an unchanged tree is
 * never built twice.
 *
 * Names: sandboxctl/sandbox[-slim]:<hash12> and :latest for the images,
 * sandboxctl/base-{build,slim,full}:<hash12> for the bases. Every one
 * carries SBX_LABEL_INPUTS_HASH; sandbox images also SBX_LABEL_IMAGE
 * (sbx/labels.h) = "full" or "slim", bases SBX_LABEL_BASE.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/docker.h"
#include "sbx/error.h"

#define SBX_IMAGE_REPO_FULL "sandboxctl/sandbox"
#define SBX_IMAGE_REPO_SLIM "sandboxctl/sandbox-slim"
#define SBX_IMAGE_REPO_BASE "sandboxctl/base" /* + "-build", "-slim", "-full" */

#define SBX_LABEL_INPUTS_HASH "sandboxctl.inputs-hash"
#define SBX_LABEL_BASE	      "sandboxctl.base"

/* The build context's list of paths, relative to the source root. */
#define SBX_IMAGE_CONTEXT_LIST "images/context.list"
#define SBX_IMAGE_DOCKERFILE   "images/Dockerfile"
#define SBX_IMAGE_PACKAGES_DIR "images/packages"

/* Hex SHA-256 plus NUL; tags use the first 12 characters. */
#define SBX_IMAGE_HASH_LEN 65
#define SBX_IMAGE_TAG_LEN  12

/* Caps on what the context collection reads from the source tree. */
#define SBX_IMAGE_CONTEXT_MAX_FILES	 20000
#define SBX_IMAGE_CONTEXT_MAX_FILE_BYTES (16u << 20)
#define SBX_IMAGE_CONTEXT_MAX_BYTES	 (256u << 20)
#define SBX_IMAGE_CONTEXT_MAX_DEPTH	 24

typedef enum sbx_image_variant {
	SBX_IMAGE_VARIANT_SLIM = 0, /* the server and Python: no display, no LibreOffice */
	SBX_IMAGE_VARIANT_FULL = 1, /* plus Xvfb and LibreOffice Calc */
} sbx_image_variant;

/* "slim" / "full". */
const char *sbx_image_variant_name(sbx_image_variant v);

/* "sandboxctl/sandbox-slim" / "sandboxctl/sandbox". */
const char *sbx_image_variant_repo(sbx_image_variant v);

/*
 * What to do about a missing image ref, for the error that says it is
 * missing: "build it with 'sandboxctl build --slim'" for the images
 * `sandboxctl build` makes, else that sandboxctl does not make it and it
 * must be loaded into the engine. A static string.
 */
const char *sbx_image_missing_advice(const char *ref);

/*
 * The source tree to build from: dir when not NULL, else $SBX_SOURCE_ROOT,
 * else the tree this program was compiled from. Checks that it holds
 * images/Dockerfile (-ENOENT with a hint otherwise). Returns a pointer to
 * one of those strings (not copied).
 */
int sbx_image_source_dir(const char *dir, const char **out, sbx_error *err);

/* ---------------------------------------------------------------- context */

typedef struct sbx_image_context sbx_image_context;

/*
 * Collects the build context from source_dir: every path named in
 * images/context.list (files, or directories taken recursively), skipping
 * hidden names, build output (*.o, *.pyc, __pycache__), docs (*.md) and anything but
 * regular files, directories and symlinks. Entries are sorted by path, so
 * the same tree always gives the same context. Caps: SBX_IMAGE_CONTEXT_MAX_*.
 * *out is freed with sbx_image_context_free.
 */
int sbx_image_context_collect(sbx_image_context **out, const char *source_dir, sbx_error *err);
void sbx_image_context_free(sbx_image_context *ctx);

/* Number of entries, and the path of entry i (owned by ctx). */
size_t sbx_image_context_count(const sbx_image_context *ctx);
const char *sbx_image_context_path(const sbx_image_context *ctx, size_t i);

/* The content of a collected file, or NULL (owned by ctx). */
const void *sbx_image_context_file(const sbx_image_context *ctx, const char *path, size_t *len);

/*
 * SHA-256 (hex) over each entry's path, type, executable bit, and content or
 * link target. Modification times and owners do not count: touching a file
 * changes nothing, editing one changes the hash.
 */
void sbx_image_context_hash(const sbx_image_context *ctx, char out[SBX_IMAGE_HASH_LEN]);

/*
 * Writes the context as a tar (fixed mtime, root-owned) for POST /build.
 * *tar_out is freed with sbx_docker_tar_free; *data and *len point into it.
 */
int sbx_image_context_tar(const sbx_image_context *ctx, sbx_docker_tar **tar_out, const void **data,
			  size_t *len, sbx_error *err);

/* ---------------------------------------------------------------- bases */

/* Which base a package list makes. */
typedef enum sbx_image_base_kind {
	SBX_IMAGE_BASE_BUILD = 0,   /* compilers and -dev packages for the build stage */
	SBX_IMAGE_BASE_RUNTIME = 1, /* the runtime stage of the chosen variant */
} sbx_image_base_kind;

/*
 * The normalised package list of a base: the package names of
 * images/packages/build.txt (build), slim.txt (+ gui.txt for full), comments
 * dropped, sorted, unique, one per line. The packages files are read from
 * ctx. *out is free()d by the caller.
 */
int sbx_image_base_packages(const sbx_image_context *ctx, sbx_image_base_kind kind,
			    sbx_image_variant v, char **out, sbx_error *err);

/* ---------------------------------------------------------------- build */

typedef enum sbx_image_event_kind {
	SBX_IMAGE_EVENT_PHASE = 0, /* a phase starts: message says what */
	SBX_IMAGE_EVENT_OUTPUT,	   /* a line of output (engine build step, mmdebstrap) */
	SBX_IMAGE_EVENT_SKIP,	   /* a phase was not needed: message says why */
	SBX_IMAGE_EVENT_DONE,	   /* a phase finished */
	SBX_IMAGE_EVENT_ERROR, /* the build failed (sent by front ends; the library returns errors)
				*/
} sbx_image_event_kind;

typedef struct sbx_image_event {
	sbx_image_event_kind kind;
	const char *phase;   /* "context", "base-build", "base-slim", "base-full", "image", "tag" */
	const char *message; /* one line, no newline */
	double elapsed_s;    /* since the build started */
} sbx_image_event;

/* Progress callback; strings are valid only during the call. */
typedef void (*sbx_image_event_fn)(const sbx_image_event *ev, void *payload);

typedef enum sbx_image_base_source {
	SBX_IMAGE_BASES_LOCAL = 0, /* mmdebstrap from the host's mirror; no registry */
	SBX_IMAGE_BASES_REGISTRY,  /* FROM debian:bookworm-slim (the engine pulls) */
} sbx_image_base_source;

typedef struct sbx_image_build_opts {
	unsigned int version;
	sbx_image_variant variant;
	const char *source_dir; /* see sbx_image_source_dir; NULL: the default */
	bool force;		/* build the image even when one with the hash exists */
	/* Make bases again that were created before this unix time (e.g. for a newer
	 * mirror); 0: never. A front end passes its start time, so a base made earlier
	 * in the same invocation (--all) is not made twice. */
	int64_t rebuild_bases_before;
	sbx_image_base_source bases;
	/* mmdebstrap: a mirror URL or an apt sources file; NULL: $SBX_DEBIAN_MIRROR, else
	 * /etc/apt/sources.list.d/debian.sources when it exists, else deb.debian.org. */
	const char *mirror;
	const char *suite;   /* NULL: "bookworm" */
	const char *tmp_dir; /* where the base tarball is written; NULL: $TMPDIR or /var/tmp */
	const char *repo;    /* image repository; NULL: sbx_image_variant_repo(variant) */
	const sbx_docker_kv *labels; /* extra labels on everything built (tests: sandboxctl.test) */
	size_t n_labels;
	sbx_image_event_fn progress;
	void *progress_payload;
} sbx_image_build_opts;

#define SBX_IMAGE_BUILD_OPTS_VERSION 1
#define SBX_IMAGE_BUILD_OPTS_INIT                                                                  \
	{                                                                                          \
		.version = SBX_IMAGE_BUILD_OPTS_VERSION                                            \
	}

typedef struct sbx_image_result {
	char *ref;	   /* "sandboxctl/sandbox-slim:<hash12>" */
	char *latest_ref;  /* "sandboxctl/sandbox-slim:latest" */
	char *id;	   /* "sha256:..." */
	char *inputs_hash; /* the full hex hash */
	bool built;	   /* false when an image with the hash already existed */
	int bases_built;   /* how many bases were made with mmdebstrap this time */
	int64_t size;	   /* bytes, as the engine reports */
	double seconds;	   /* wall time of the whole call */
} sbx_image_result;

/*
 * Makes sure the sandbox image of opts->variant exists for the current
 * source tree, building what is missing: the bases (local mode), then the
 * image, tagged <repo>:<hash12> and <repo>:latest. Skips the build when an
 * image with the same inputs hash exists (unless opts->force). Needs root or
 * unprivileged user namespaces for mmdebstrap when a base must be made.
 * *out is freed with sbx_image_result_free.
 */
int sbx_image_build(sbx_docker *d, const sbx_image_build_opts *opts, sbx_image_result **out,
		    sbx_error *err);
void sbx_image_result_free(sbx_image_result *r);

/*
 * Any image (issue 30): a sandbox on an image that has none of our files.
 * The sandbox's own programs travel as one read-only bundle in a named
 * volume, mounted at SBX_BUNDLE_MOUNT; in SBX_BUNDLE_DIR: bin/ the static sandbox-init,
 * sandbox-bridge and sandbox-spawner; libexec/ sandbox-mcp and tar, run by
 * the bundle's own loader (lib/ld.so) with lib/ as their only library path.
 * The volume is made once per source image (our slim image, whose programs
 * it copies) and found again by name; a second, empty volume
 * "<volume>.ready" marks it complete and carries its content hash.
 */
#define SBX_BUNDLE_MOUNT       "/opt/sandboxctl"      /* the volume */
#define SBX_BUNDLE_DIR	       SBX_BUNDLE_MOUNT "/v1" /* the bundle in it, renamed in when complete */
#define SBX_BUNDLE_LOADER      SBX_BUNDLE_DIR "/lib/ld.so"
#define SBX_BUNDLE_LIBS	       SBX_BUNDLE_DIR "/lib"
#define SBX_BUNDLE_PREFIX      "sandboxctl-bundle-"
#define SBX_LABEL_BUNDLE       "sandboxctl.bundle-hash"
#define SBX_BUNDLE_MAX_VOLUMES 8

typedef struct sbx_image_bundle {
	char volume[64]; /* "sandboxctl-bundle-<12 hex>"; "" when ref is ours (none needed) */
	char hash[SBX_IMAGE_HASH_LEN]; /* sha256 of the bundle's manifest */
	char path_env[1024];	       /* "PATH=/opt/sandboxctl/bin:<the image's PATH>" */
	bool made;		       /* made by this call (not found ready) */
	/* The image's VOLUMEs: the engine would mount a writable volume at each (the
	 * sandbox covers them with a tmpfs, or refuses). More are refused. */
	char volumes[SBX_BUNDLE_MAX_VOLUMES][256];
	size_t n_volumes;
} sbx_image_bundle;

/*
 * What a sandbox on ref needs: nothing when ref is one of our images
 * (SBX_LABEL_IMAGE on an image tagged sandboxctl/... or sandboxctl-test/...:
 * the label alone is not trusted), else the bundle, made on first use from
 * SBX_IMAGE_SLIM. Refuses a ref that is not linux/amd64 in one line, and
 * one the engine does not have with -ENOENT and "not on the engine" (the
 * caller names the image and what to do).
 */
int sbx_image_prepare_foreign(sbx_docker *d, const char *ref, sbx_image_bundle *out,
			      sbx_error *err);

/* ---------------------------------------------------------------- task images */

/* SHA-256 of data as hex (64 characters and a NUL). */
void sbx_image_sha256_hex(const void *data, size_t len, char out[SBX_IMAGE_HASH_LEN]);

/* True when the engine has the image ref (name:tag or id). */
bool sbx_image_present(sbx_docker *d, const char *ref);

/*
 * Checks that every image a Dockerfile's FROM lines name (not an earlier
 * stage, not scratch) is on the engine, since nothing is pulled: -ENOENT
 * with "path:line: FROM image 'x' is not on the engine ..." for the first
 * missing one. Lines with a build ARG in the image are skipped.
 */
int sbx_image_check_bases(sbx_docker *d, const char *dockerfile, sbx_error *err);

/* On a task's own image: its repo ("sandboxctl-task/<id>"), to find its older ones. */
#define SBX_IMAGE_LABEL_TASK "sandboxctl.task-image"

typedef struct sbx_image_task_opts {
	const char *context_dir;     /* environment/: the Dockerfile and its context */
	const char *repo;	     /* "sandboxctl-task/<id>": tagged :<hash12> of the context */
	uint32_t timeout_s;	     /* the build's; 0: 600 */
	const sbx_docker_kv *labels; /* at most 7 */
	size_t n_labels;
} sbx_image_task_opts;

/*
 * A task's own environment (a Harbor task's environment/Dockerfile), built
 * through the Engine API with its context, offline (no pull; the bases
 * checked first as above), tagged repo:<first 12 of a sha256 over the
 * context's tar and the bases' image ids>; an image with that tag is used
 * without a build (an edited file or a rebuilt base builds again), and
 * the task's older images are removed. *image_id: "sha256:...".
 */
int sbx_image_build_task(sbx_docker *d, const sbx_image_task_opts *o, char **image_id,
			 sbx_error *err);

/* ---------------------------------------------------------------- gc */

typedef enum sbx_image_gc_kind {
	SBX_IMAGE_GC_TASK_IMAGE, /* a task's own image (SBX_IMAGE_LABEL_TASK): name is its tag */
	SBX_IMAGE_GC_BUNDLE,	 /* an any-image bundle volume (or a marker left alone) */
} sbx_image_gc_kind;

typedef struct sbx_image_gc_item {
	sbx_image_gc_kind kind;
	char name[256];	    /* "sandboxctl-task/<id>:<hash12>", or the volume's name */
	char marker[272];   /* a bundle's "<name>.ready" when it has one, else "" */
	const char *reason; /* "superseded", "older than the limit", "old bundle" (static) */
} sbx_image_gc_item;

/*
 * What `sandboxctl gc` removes besides sandboxes, for the build in hand:
 *   - task images of a task that has a newer one (superseded; building a task
 *     removes its older images, except one in use then), and with
 *     older_than_s >= 0 any created that long before now (unix seconds);
 *   - bundle volumes (SBX_BUNDLE_PREFIX) other than the one of the current
 *     SBX_IMAGE_SLIM, and their markers (none when that image is absent:
 *     nothing then tells the current bundle).
 * Never one that a container uses, running or not (read from the engine's
 * containers now). *out: an array of *n_out items, free().
 */
int sbx_image_gc_list(sbx_docker *d, int64_t now, int64_t older_than_s, sbx_image_gc_item **out,
		      size_t *n_out, sbx_error *err);

/*
 * Removes item (a bundle with its marker), never forced: the engine refuses
 * one that a container took since the list (err says so). -ENOENT: gone already.
 */
int sbx_image_gc_remove(sbx_docker *d, const sbx_image_gc_item *item, sbx_error *err);
