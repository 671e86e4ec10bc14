/* SPDX-License-Identifier: MIT */
#include "test_files.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sbx_test_put(const char *dir, const char *rel, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	ck_assert_msg(f, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

void sbx_test_assert_file(const char *dir, const char *rel, const char *want)
{
	char path[4096], got[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "r");
	ck_assert_msg(f, "cannot read %s", path);
	n = fread(got, 1, sizeof(got) - 1, f);
	fclose(f);
	got[n] = '\0';
	ck_assert_uint_eq(n, strlen(want));
	ck_assert_str_eq(got, want);
}

void sbx_test_assert_only(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	ck_assert_msg(d, "cannot open %s", dir);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			ck_assert_str_eq(de->d_name, name);
	closedir(d);
}

char sbx_test_scratch[64];

void sbx_test_scratch_setup(void)
{
	snprintf(sbx_test_scratch, sizeof(sbx_test_scratch), "/tmp/sbx-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(sbx_test_scratch));
}

void sbx_test_scratch_teardown(void)
{
	ck_assert_int_eq(sbx_path_remove_tree_at(AT_FDCWD, sbx_test_scratch), 0);
}

int sbx_test_scratch_fd = -1;

static void scratch_open(int flags)
{
	sbx_test_scratch_setup();
	sbx_test_scratch_fd = open(sbx_test_scratch, flags | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(sbx_test_scratch_fd, 0);
}

void sbx_test_scratch_open_setup(void)
{
	scratch_open(O_RDONLY);
}

void sbx_test_scratch_path_setup(void)
{
	scratch_open(O_PATH);
}

void sbx_test_scratch_open_teardown(void)
{
	close(sbx_test_scratch_fd);
	sbx_test_scratch_fd = -1;
	sbx_test_scratch_teardown();
}
