/* SPDX-License-Identifier: MIT */
/*
 * The Check runner every C test file shares: SBX_TEST_MAIN(make_suite)
 * is the whole main() of a test program. CK_RUN_CASE / CK_RUN_SUITE (Check's
 * own variables) pick one case; CK_FORK=no runs in-process (valgrind).
 */
#pragma once

#include <check.h>

/* Runs every case of s (and frees it); the process exit code. */
int sbx_test_run(Suite *s);

#define SBX_TEST_MAIN(make_suite)                                                                  \
	int main(void)                                                                             \
	{                                                                                          \
		return sbx_test_run(make_suite());                                                 \
	}
