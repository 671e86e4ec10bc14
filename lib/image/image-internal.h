/* SPDX-License-Identifier: MIT */
#pragma once

/* Shared between the files of lib/image; not part of the public API. */

#include <stddef.h>

#include "sbx/image.h"
#include "sbx/util.h"

/* Reads at most max bytes of dirfd/name, no symlink followed; *out is free()d. */
int sbx_image__read_file_at(int at, const char *name, const char *display, size_t max, char **out,
			    size_t *len_out, sbx_error *err);

/* Hex SHA-256 of data. */
void sbx_image__sha256(const void *data, size_t len, char out[SBX_IMAGE_HASH_LEN]);
void sbx_image__hash_hex(const unsigned char digest[32], char out[SBX_IMAGE_HASH_LEN]);
/* The any-image bundle's volume for the slim image source_id: "sandboxctl-bundle-<12 hex>". */
int sbx_image__bundle_volume(const char *source_id, char *out, size_t size);

/* Reports an event to opts->progress, if any. */
typedef struct sbx_image__progress {
	sbx_image_event_fn fn;
	void *payload;
	double start; /* CLOCK_MONOTONIC seconds */
} sbx_image__progress;

void sbx_image__emit(const sbx_image__progress *p, sbx_image_event_kind kind, const char *phase,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Seconds on CLOCK_MONOTONIC. */
double sbx_image__now(void);

typedef struct sbx_image__base_spec {
	const char *name;     /* "build", "slim", "full" */
	const char *packages; /* normalised list, one name per line */
	const char *suite;
	const char *mirror; /* URL or sources file */
	const char *tmp_dir;
	int64_t rebuild_before; /* unix time; a base created earlier is made again */
	const sbx_docker_kv *labels;
	size_t n_labels;
} sbx_image__base_spec;

/*
 * Makes sure the base exists: sandboxctl/base-<name>:<hash12> of the package
 * list, made with mmdebstrap and imported when missing. Writes its reference
 * (free()) and whether it was made now.
 */
int sbx_image__base_ensure(sbx_docker *d, const sbx_image__base_spec *spec,
			   const sbx_image__progress *p, char **ref_out, char **id_out, bool *made,
			   sbx_error *err);

/* The base's inputs hash (hex) for a spec: suite, mmdebstrap recipe, package list. */
void sbx_image__base_hash(const sbx_image__base_spec *spec, char out[SBX_IMAGE_HASH_LEN]);

/* Removes the tags <repo>:* of images labelled label=value, except keep_id's. */
void sbx_image__prune(sbx_docker *d, const char *repo, const char *label, const char *value,
		      const char *keep_id, const sbx_image__progress *p);
