/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer: sbx_docker_tar_extract on arbitrary bytes. Besides not
 * crashing, the property checked is the one that matters: nothing is ever
 * written outside the target directory, and no symlink left inside resolves
 * outside it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-internal.h"
#include "sbx/path.h"

static char root[64];
static int rootfd = -1;

/* root holds exactly "t" (the target) and "canary" (untouched). */
static void check_outside(void)
{
	DIR *d = opendir(root);
	struct dirent *de;
	struct stat st;

	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "t") && strcmp(de->d_name, "canary"))
			abort();
	closedir(d);
	if (fstatat(rootfd, "canary", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_nlink != 2)
		abort();
}

static void cleanup(void)
{
	sbx_path_remove_tree_at(AT_FDCWD, root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sbx_docker_extract_opts o = SBX_DOCKER_EXTRACT_OPTS_INIT;
	int t;

	if (rootfd < 0) {
		snprintf(root, sizeof(root), "/tmp/sbx-fuzz-extract.%d", (int)getpid());
		mkdir(root, 0700);
		rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		mkdirat(rootfd, "canary", 0755);
		atexit(cleanup);
	}
	mkdirat(rootfd, "t", 0755);
	t = openat(rootfd, "t", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t < 0)
		abort();
	o.max_file_bytes = 1 << 20;
	o.max_total_bytes = 4 << 20;
	o.max_entries = 256;
	o.strip_components = size > 0 ? data[0] % 2 : 0;
	sbx_docker_tar_extract(data, size, t, &o, NULL, NULL);
	check_outside();
	close(t);
	sbx_path_remove_tree_at(rootfd, "t");
	return 0;
}
