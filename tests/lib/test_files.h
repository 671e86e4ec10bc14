/* SPDX-License-Identifier: MIT */
/* Files the C tests make and remove under their scratch directories. */
#pragma once

#include <fcntl.h>

#include "sbx/path.h"

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
/* The same opened O_PATH, as the viewer opens its roots (same teardown). */
void sbx_test_scratch_path_setup(void);
