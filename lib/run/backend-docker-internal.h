/* SPDX-License-Identifier: MIT */
#pragma once

#include "sbx/backend.h"
#include "sbx/docker.h"
#include "sbx/image.h"

#define SBX_BUNDLE_BRIDGE SBX_BUNDLE_DIR "/bin/sandbox-bridge"

/*
 * A sandbox on a foreign image (bundle->volume set): the bundle volume
 * read-only at SBX_BUNDLE_MOUNT (bind, of bind_size, is its Binds entry),
 * our PID 1 as the entrypoint whatever the image says, the image's ENV
 * neutralised where it matters (appended to env, *ne of max used), a
 * tmpfs over each VOLUME it declares (appended to tmpfs, *n_tmpfs of
 * max_tmpfs), and d's exec'd tar from the bundle. Refuses what needs one of our images
 * (--network published, a GUI task) and a VOLUME over our mounts in one line.
 */
int sbx_backend_docker__foreign(sbx_docker *d, const sbx_sandbox_spec *spec,
				const sbx_image_bundle *bundle, sbx_docker_container_opts *o,
				const char **env, size_t *ne, size_t max, sbx_docker_kv *tmpfs,
				size_t *n_tmpfs, size_t max_tmpfs, char *bind, size_t bind_size,
				sbx_error *err);

/*
 * After create: /opt, the bundle's mount point and the tmpfs mount points
 * (/workspace, /tmp, /run) must be directories in the image, not symlinks:
 * the engine follows one, and would mount the bundle over the workspace, or
 * a writable tmpfs over the bundle's libraries. One line when not.
 */
int sbx_backend_docker__foreign_check(sbx_docker *d, const char *id, const char *image,
				      sbx_error *err);
