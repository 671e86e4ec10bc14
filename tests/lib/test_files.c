/* SPDX-License-Identifier: MIT */
#include "test_files.h"

#include <check.h>
#include <stdio.h>

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
