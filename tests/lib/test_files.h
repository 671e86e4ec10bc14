/* SPDX-License-Identifier: MIT */
/* Files the C tests make and remove under their scratch directories. */
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Writes text to dir/rel (the test fails when it cannot). */
void sbx_test_put(const char *dir, const char *rel, const char *text);

/*
 * Removes name under the directory at (AT_FDCWD: the working directory) and
 * everything below it, never following a symlink. Inline so the fuzz
 * harnesses, which do not link Check, share it.
 */
static inline void sbx_test_rm_tree_at(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		struct dirent *de;
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				sbx_test_rm_tree_at(dirfd(d), de->d_name);
		closedir(d);
		unlinkat(at, name, AT_REMOVEDIR);
	} else {
		unlinkat(at, name, 0);
	}
}
