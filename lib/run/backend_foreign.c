/* SPDX-License-Identifier: MIT */
/*
 * The Docker backend on a foreign image (issue 30, any image): what a
 * sandbox's create adds when the image has none of our files. The hardening
 * itself is backend_docker.c's, the same for every image.
 */
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "backend-docker-internal.h"
#include "sbx/labels.h"

/*
 * Any image: what the image's own ENV must not decide, set explicitly (the
 * engine puts the container's values over the image's). PID 1 and the
 * server read SANDBOX_*; the loader reads LD_* and GLIBC_TUNABLES before
 * the bundle's programs run, so a hostile image could otherwise preload its
 * code into the server. Keys the lifecycle sets itself come from spec->env.
 */
static const char *const foreign_env[] = {"SANDBOX_UID=1000",
					  "SANDBOX_AGENT_UID=1001",
					  "SANDBOX_DISPLAY=",
					  "SANDBOX_OPEN=",
					  "SANDBOX_SCREEN=",
					  "SANDBOX_WORKSPACE=" SBX_SANDBOX_WORKSPACE,
					  "SANDBOX_TIMEOUT=",
					  "SANDBOX_TASK_TIMEOUT=",
					  "SANDBOX_TOOLSET=",
					  "SANDBOX_HTTP_TOKEN=",
					  "SANDBOX_EXEC_MAX_PROCESSES=256",
					  "LD_PRELOAD=",
					  "LD_LIBRARY_PATH=",
					  "LD_AUDIT=",
					  "LD_DEBUG=",
					  "LD_PROFILE=",
					  "GLIBC_TUNABLES=",
					  "GCONV_PATH=",
					  "MALLOC_TRACE=",
					  "HOME=/run/sandbox/home",
					  NULL};

/* The server, run by the bundle's loader with the bundle's libraries only. */
static const char *const foreign_cmd[] = {"--",
					  SBX_BUNDLE_DIR "/libexec/sandbox-mcp", /* the loader */
					  "--inhibit-cache",
					  "--library-path",
					  SBX_BUNDLE_LIBS,
					  "--argv0",
					  "sandbox-mcp",
					  SBX_BUNDLE_DIR "/libexec/sandbox-mcp.bin",
					  "--workspace",
					  SBX_SANDBOX_WORKSPACE,
					  "--unix",
					  SBX_SANDBOX_SOCKET,
					  "--ready-file",
					  "/run/sandbox/ready",
					  "--status-file",
					  "/run/sandbox/status.json",
					  NULL};

static const char *const foreign_entrypoint[] = {SBX_BUNDLE_DIR "/bin/sandbox-init", NULL};

/* GNU tar from the bundle; numeric owners, so no name lookup loads the image's NSS modules. */
static const char *const foreign_tar[] = {SBX_BUNDLE_LOADER,
					  "--inhibit-cache",
					  "--library-path",
					  SBX_BUNDLE_LIBS,
					  SBX_BUNDLE_DIR "/libexec/tar",
					  "--numeric-owner",
					  NULL};

static bool env_sets(const char *const *env, const char *kv)
{
	size_t k = strcspn(kv, "=");

	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], kv, k) == 0 && env[i][k] == '=')
			return true;
	return false;
}

/* Inside path (or path itself): "/run" holds "/run" and "/run/sandbox", not "/running". */
static bool path_within(const char *path, const char *top)
{
	size_t n = strlen(top);

	return strcmp(top, "/") == 0 ||
	       (strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/'));
}

/*
 * The image's VOLUMEs would be writable volumes on the read-only root: each
 * gets an empty size-capped tmpfs instead (the engine copies nothing into a
 * tmpfs). One at or under our own mounts, or above them, is refused.
 */
static int cover_image_volumes(const char *image, const sbx_image_bundle *bundle,
			       sbx_docker_kv *tmpfs, size_t *n_tmpfs, size_t max_tmpfs,
			       sbx_error *err)
{
	static const char *const ours[] = {
		SBX_BUNDLE_MOUNT, SBX_SANDBOX_WORKSPACE, "/tmp", "/run", "/proc", "/dev", "/sys"};

	for (size_t i = 0; i < bundle->n_volumes; i++) {
		const char *v = bundle->volumes[i];
		bool clash = v[0] != '/' || strstr(v, "/..") || strstr(v, "/./");

		for (size_t k = 0; k < SBX_ELEMENTSOF(ours) && !clash; k++)
			clash = path_within(v, ours[k]) || path_within(ours[k], v);
		if (clash)
			return sbx_error_set(err, -EINVAL,
					     "image '%s' declares VOLUME '%s', where the sandbox "
					     "has its own mounts: refusing",
					     image, v);
		if (*n_tmpfs == max_tmpfs)
			return sbx_error_set(err, -E2BIG, "image '%s': too many VOLUMEs", image);
		tmpfs[(*n_tmpfs)++] = (sbx_docker_kv){v, "rw,nosuid,nodev,size=67108864"};
	}
	return 0;
}

/*
 * A foreign image (none of our files): the bundle volume read-only at
 * SBX_BUNDLE_DIR, our PID 1 as the entrypoint whatever the image says, its
 * ENV neutralised where it matters. Everything else is the same hardened
 * sandbox. The exec'd tar and bridge come from the bundle too.
 */
int sbx_backend_docker__foreign(sbx_docker *d, const sbx_sandbox_spec *spec,
				const sbx_image_bundle *bundle, sbx_docker_container_opts *o,
				const char **env, size_t *ne, size_t max, sbx_docker_kv *tmpfs,
				size_t *n_tmpfs, size_t max_tmpfs, char *bind, size_t bind_size,
				sbx_error *err)
{
	int r;

	if (spec->published)
		return sbx_error_set(err, -EINVAL,
				     "image '%s' has none of sandboxctl's files: --network "
				     "published needs one of ours (its firewall is iptables')",
				     spec->image);
	if (spec->gui)
		return sbx_error_set(err, -EINVAL,
				     "image '%s' has none of sandboxctl's files: a GUI task needs "
				     "%s (Xvfb, LibreOffice)",
				     spec->image, SBX_IMAGE_FULL);
	snprintf(bind, bind_size, "%s:%s:ro,nocopy", bundle->volume, SBX_BUNDLE_MOUNT);
	r = cover_image_volumes(spec->image, bundle, tmpfs, n_tmpfs, max_tmpfs, err);
	if (r < 0)
		return r;
	for (size_t i = 0; foreign_env[i] && *ne < max - 2; i++)
		if (!env_sets(spec->env, foreign_env[i]))
			env[(*ne)++] = foreign_env[i];
	env[(*ne)++] = bundle->path_env;
	o->entrypoint = foreign_entrypoint;
	o->cmd = foreign_cmd;
	/* Not the workspace: the engine would make that directory 0755 before the tmpfs
	 * covers it, and the tmpfs would keep that mode (tool code could not write). */
	o->working_dir = "/";
	return sbx_docker_set_tar(d, foreign_tar, err);
}

int sbx_backend_docker__foreign_check(sbx_docker *d, const char *id, const char *image,
				      sbx_error *err)
{
	/* And the tmpfs mounts': one of them over the bundle's lib/ would be writable. */
	static const char *const paths[] = {"/opt", SBX_BUNDLE_MOUNT, SBX_SANDBOX_WORKSPACE, "/tmp",
					    "/run"};

	for (size_t i = 0; i < SBX_ELEMENTSOF(paths); i++) {
		bool dir = false, link = false;
		int r = sbx_docker_archive_stat(d, id, paths[i], &dir, &link, err);

		/* Not in the image: the engine makes a directory there at start. */
		if (r == -ENOENT) {
			sbx_error_clear(err);
			continue;
		}
		if (r < 0)
			return sbx_error_prefix(err, r, "image '%s': mount point '%s'", image,
						paths[i]);
		if (link || !dir)
			return sbx_error_set(err, -EINVAL,
					     "image '%s' has '%s' as a %s: sandboxctl mounts the "
					     "bundle of its programs or a tmpfs there, refusing",
					     image, paths[i], link ? "symlink" : "file");
	}
	return 0;
}
