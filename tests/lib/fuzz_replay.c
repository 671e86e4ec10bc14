/* SPDX-License-Identifier: MIT */
/*
 * Replays inputs through a libFuzzer target's LLVMFuzzerTestOneInput in an
 * ordinary build, so every seed and every kept crasher under
 * tests/data/fuzz/<target>/ runs in the unit suite (and under ASan in CI)
 * without clang or libFuzzer. Arguments are files or directories (one level).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	sbx_error err = SBX_ERROR_INIT;
	char *data = NULL;
	size_t len = 0;

	if (sbx_file_read_capped(AT_FDCWD, path, 64 << 20, &data, &len, &err) < 0) {
		fprintf(stderr, "fuzz-replay: %s\n", sbx_error_message(&err));
		return -1;
	}
	LLVMFuzzerTestOneInput((const uint8_t *)data, len);
	free(data);
	return 0;
}

static int replay_dir(const char *dir, unsigned *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(path) < 0)
			r = -1;
		(*count)++;
	}
	closedir(d);
	return r;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int r = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (replay_dir(argv[i], &count) < 0)
				r = 1;
		} else {
			if (replay_file(argv[i]) < 0)
				r = 1;
			count++;
		}
	}
	printf("fuzz-replay: %u inputs replayed\n", count);
	return count == 0 ? 1 : r;
}
