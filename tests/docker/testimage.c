/* SPDX-License-Identifier: MIT */
/* The integration tests' own image: Debian's static busybox, imported through the client. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/sbx.h"
#include "testimage.h"

#define BUSYBOX "/bin/busybox"
/* Bump when the rootfs changes (applets, directories): old images get replaced. */
#define ROOTFS_LABEL   "sandboxctl.test-rootfs"
#define ROOTFS_VERSION "1"

static const char *const applets[] = {
	"sh",	 "cat",	 "echo", "ls",	 "mkdir", "mknod", "mkfifo", "ln", "truncate",
	"sleep", "tar",	 "id",	 "test", "true",  "false", "printf", "rm", "touch",
	"chmod", "head", "wc",	 "env",	 "kill",  "stat",  "dd",     "[",  NULL,
};

/* The rootfs: /bin/busybox, applet symlinks, /tmp, /work. */
static void make_rootfs(const void **data, size_t *len, sbx_docker_tar **t)
{
	sbx_error err = SBX_ERROR_INIT;
	struct stat st;
	char *bb;
	int fd;

	fd = open(BUSYBOX, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "%s missing: install busybox-static", BUSYBOX);
	ck_assert_int_eq(fstat(fd, &st), 0);
	bb = malloc((size_t)st.st_size);
	ck_assert_int_eq(read(fd, bb, (size_t)st.st_size), st.st_size);
	close(fd);
	ck_assert_int_eq(sbx_docker_tar_new(t, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_dir(*t, "bin", 0755, 0, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_dir(*t, "tmp", 01777, 0, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_dir(*t, "work", 01777, 0, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_dir(*t, "etc", 0755, 0, 0, &err), 0);
	ck_assert_int_eq(sbx_docker_tar_add_file(*t, "bin/busybox", bb, (size_t)st.st_size, 0755, 0,
						 0, &err),
			 0);
	free(bb);
	for (const char *const *a = applets; *a; a++) {
		char name[64];
		snprintf(name, sizeof(name), "bin/%s", *a);
		ck_assert_int_eq(sbx_docker_tar_add_symlink(*t, name, "busybox", &err), 0);
	}
	ck_assert_int_eq(sbx_docker_tar_finish(*t, data, len, &err), 0);
}

/* Imports the test image when it is missing (CI starts with no images). */
void test_image_ensure(sbx_docker *d)
{
	const char *changes[] = {"LABEL " SBX_LABEL_TEST "=1",
				 "LABEL " ROOTFS_LABEL "=" ROOTFS_VERSION, "ENV PATH=/bin",
				 "CMD [\"/bin/sh\"]", NULL};
	sbx_docker_import_opts o = SBX_DOCKER_IMPORT_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	sbx_docker_image *img = NULL;
	sbx_docker_tar *t = NULL;
	char *id = NULL, *old_id = NULL;

	/* Reuse it only when it is this rootfs (the label names its version). */
	if (sbx_docker_image_inspect(d, SBX_TEST_IMAGE, &img, NULL) == 0) {
		const char *v = sbx_docker_label_get(img->labels, img->n_labels, ROOTFS_LABEL);

		if (v && strcmp(v, ROOTFS_VERSION) == 0) {
			sbx_docker_image_free(img);
			return;
		}
		old_id = strdup(img->id);
		sbx_docker_image_free(img);
	}
	make_rootfs(&o.tar_data, &o.tar_len, &t);
	o.repo = "sandboxctl-test/busybox";
	o.tag = "latest";
	o.changes = changes;
	ck_assert_msg(sbx_docker_image_import(d, &o, &id, &err) == 0, "%s", err.msg);
	ck_assert_msg(strncmp(id, "sha256:", 7) == 0, "image id '%s'", id);
	/* The outdated one, now untagged: gone unless a container still uses it. */
	if (old_id)
		sbx_docker_image_remove(d, old_id, false, NULL);
	free(old_id);
	free(id);
	sbx_docker_tar_free(t);
}

void test_remove_labelled(const char *label)
{
	const char *filters[] = {label, NULL};
	sbx_docker_container *cs = NULL;
	sbx_docker *d = NULL;
	size_t n = 0;

	if (sbx_docker_open(&d, NULL, NULL) < 0)
		return;
	if (sbx_docker_container_list(d, filters, &cs, &n, NULL) == 0) {
		for (size_t i = 0; i < n; i++)
			sbx_docker_container_remove(d, cs[i].id, true, true, NULL);
		sbx_docker_container_list_free(cs, n);
	}
	sbx_docker_free(d);
}
