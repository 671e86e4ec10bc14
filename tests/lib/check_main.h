/* SPDX-License-Identifier: MIT */
/*
 * The Check runner every C test file shares: SBX_TEST_MAIN(make_suite)
 * is the whole main() of a test program, and sbx_test_case() adds a case to
 * its suite. CK_RUN_CASE / CK_RUN_SUITE (Check's own variables) pick one
 * case; CK_FORK=no runs in-process (valgrind).
 */
#pragma once

#include <check.h>

/*
 * Adds the case name to s with a checked fixture (setup and teardown run
 * around each test; either may be NULL) and a timeout in seconds (0: Check's
 * default). Returns the case for its tests (tcase_add_test, SBX_TEST_TABLE)
 * and anything else it needs (an unchecked fixture).
 */
TCase *sbx_test_case(Suite *s, const char *name, SFun setup, SFun teardown, int timeout_s);

/* A loop test run once per row of a static table: _i is the row. */
#define SBX_TEST_TABLE(tc, test, table)                                                            \
	tcase_add_loop_test(tc, test, 0, (int)(sizeof(table) / sizeof((table)[0])))

/* Runs every case of s (and frees it); the process exit code. */
int sbx_test_run(Suite *s);

#define SBX_TEST_MAIN(make_suite)                                                                  \
	int main(void)                                                                             \
	{                                                                                          \
		return sbx_test_run(make_suite());                                                 \
	}
