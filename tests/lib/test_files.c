/* SPDX-License-Identifier: MIT */
#include "test_files.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

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

char sbx_test_scratch[64];

void sbx_test_scratch_setup(void)
{
	snprintf(sbx_test_scratch, sizeof(sbx_test_scratch), "/tmp/sbx-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(sbx_test_scratch));
}

void sbx_test_scratch_teardown(void)
{
	ck_assert_int_eq(sbx_test_rm_tree_at(AT_FDCWD, sbx_test_scratch), 0);
}
