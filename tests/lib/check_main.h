/* SPDX-License-Identifier: MIT */
/*
 * The Check runner every C test file shares: SBX_TEST_MAIN("name", add_cases)
 * is the whole main() of a test program, and add_cases(s) adds the suite's
 * cases, each with its tests, by SBX_TEST_CASE(). CK_RUN_CASE / CK_RUN_SUITE
 * (Check's own variables) pick one case; CK_FORK=no runs in-process
 * (valgrind).
 */
#pragma once

#include <check.h>

/*
 * Adds the case name to s with a checked fixture (setup and teardown run
 * around each test; either may be NULL) and a timeout in seconds (0: Check's
 * default). Returns the case for its tests (SBX_TEST_ADD, SBX_TEST_TABLE)
 * and anything else it needs (an unchecked fixture).
 */
TCase *sbx_test_case(Suite *s, const char *name, SFun setup, SFun teardown, int timeout_s);

/*
 * Adds the tests (START_TEST names, one or more) to tc in the order given:
 * one statement for a case's list rather than one tcase_add_test a test.
 */
void sbx_test_add_all(TCase *tc, const TTest *const *tests);
#define SBX_TEST_ADD(tc, ...) sbx_test_add_all(tc, (const TTest *const[]){__VA_ARGS__, NULL})

/*
 * sbx_test_case() and SBX_TEST_ADD() in one: a case and its tests (one or
 * more), the case returned for what it needs besides.
 */
#define SBX_TEST_CASE(s, name, setup, teardown, timeout_s, ...)                                    \
	sbx_test_add_case(s, name, setup, teardown, timeout_s,                                     \
			  (const TTest *const[]){__VA_ARGS__, NULL})
TCase *sbx_test_add_case(Suite *s, const char *name, SFun setup, SFun teardown, int timeout_s,
			 const TTest *const *tests);

/* A loop test run once per row of a static table: _i is the row. */
#define SBX_TEST_TABLE(tc, test, table)                                                            \
	tcase_add_loop_test(tc, test, 0, (int)(sizeof(table) / sizeof((table)[0])))

/* A new suite called name holding the cases add_cases adds to it. */
Suite *sbx_test_suite(const char *name, void (*add_cases)(Suite *s));

/* Runs every case of s (and frees it); the process exit code. */
int sbx_test_run(Suite *s);

#define SBX_TEST_MAIN(name, add_cases)                                                             \
	int main(void)                                                                             \
	{                                                                                          \
		return sbx_test_run(sbx_test_suite(name, add_cases));                              \
	}
