/* SPDX-License-Identifier: MIT */
/* Files the C tests make and remove under their scratch directories. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Writes text to dir/rel (the test fails when it cannot). */
void sbx_test_put(const char *dir, const char *rel, const char *text);

/* Fails the test unless dir/rel holds exactly want (under 4 KiB). */
void sbx_test_assert_file(const char *dir, const char *rel, const char *want);

/* Fails the test unless the directory dir holds nothing but name. */
void sbx_test_assert_only(const char *dir, const char *name);

/*
 * A scratch directory for a test: sbx_test_scratch_setup makes a fresh
 * /tmp/sbx-test-XXXXXX into sbx_test_scratch, sbx_test_scratch_teardown
 * removes it with all it holds (both fail the test when they cannot). A
 * checked fixture pair, or called by the test itself.
 */
extern char sbx_test_scratch[64];
void sbx_test_scratch_setup(void);
void sbx_test_scratch_teardown(void);

/*
 * The same scratch directory also open, as sbx_test_scratch_fd (O_DIRECTORY),
 * for the *at() calls under test; the teardown closes it first.
 */
extern int sbx_test_scratch_fd;
void sbx_test_scratch_open_setup(void);
void sbx_test_scratch_open_teardown(void);

/*
 * Removes name under the directory at (AT_FDCWD: the working directory) and
 * everything below it, never following a symlink; 0 (also when name does not
 * exist) or the first -errno. Inline so the fuzz harnesses, which do not link
 * Check, share it.
 */
static inline int sbx_test_rm_tree_at(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = 0;

	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		struct dirent *de;
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				int k = sbx_test_rm_tree_at(dirfd(d), de->d_name);
				r = r ? r : k;
			}
		closedir(d);
		if (unlinkat(at, name, AT_REMOVEDIR) < 0 && !r)
			r = -errno;
	} else if (unlinkat(at, name, 0) < 0 && errno != ENOENT) {
		r = -errno;
	}
	return r;
}
