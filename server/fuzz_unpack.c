/* SPDX-License-Identifier: MIT */
/*
 * fuzz-unpack: PUT /control/files' tar reader (tools/unpack.c) over a real
 * workspace. The workspace holds a symlink planted to a directory beside it;
 * after every input that directory must still be empty (nothing escaped),
 * then the workspace is emptied for the next input.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/path.h"
#include "unpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[] = "/tmp/sbx-fuzz-unpack-XXXXXX";
static int ws_fd = -1, out_fd = -1;

static void setup(void)
{
	char path[64];

	if (!mkdtemp(root))
		abort();
	snprintf(path, sizeof(path), "%s/ws", root);
	if (mkdir(path, 0700) < 0)
		abort();
	ws_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/outside", root);
	if (ws_fd < 0 || mkdir(path, 0700) < 0)
		abort();
	out_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (out_fd < 0)
		abort();
}

/* The entries of dir (but . and ..): the first one's name, or NULL; removed when remove. */
static const char *scan(int dir, bool remove, char name[256])
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	const char *found = NULL;
	struct dirent *de;

	if (!d)
		abort();
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			if (remove)
				sbx_path_remove_tree_at(dirfd(d), de->d_name);
			else if (!found && snprintf(name, 256, "%s", de->d_name) >= 0)
				found = name;
		}
	closedir(d);
	return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sbx_error err = SBX_ERROR_INIT;
	unpack_stats st;
	int r;

	char name[256] = "";

	if (ws_fd < 0)
		setup();
	/* The workspace emptied but for the planted link, put back each time. */
	scan(ws_fd, true, name);
	if (symlinkat("../outside", ws_fd, "planted") < 0)
		abort();
	r = workspace_unpack(ws_fd, data, size, &st, &err);
	/* A refusal always says why. */
	if (r < 0 && !sbx_error_message(&err)[0])
		abort();
	if (r >= 0 && st.bytes > size)
		abort();
	if (scan(out_fd, false, name)) {
		fprintf(stderr, "fuzz-unpack: '%s' escaped the workspace\n", name);
		abort();
	}
	return 0;
}
