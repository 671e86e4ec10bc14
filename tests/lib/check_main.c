/* SPDX-License-Identifier: MIT */
#include "check_main.h"

#include <stdlib.h>

TCase *sbx_test_case(Suite *s, const char *name, SFun setup, SFun teardown, int timeout_s)
{
	TCase *tc = tcase_create(name);

	if (setup || teardown)
		tcase_add_checked_fixture(tc, setup, teardown);
	if (timeout_s > 0)
		tcase_set_timeout(tc, timeout_s);
	suite_add_tcase(s, tc);
	return tc;
}

void sbx_test_add_all(TCase *tc, const TTest *const *tests)
{
	for (; *tests; tests++)
		tcase_add_test(tc, *tests);
}

TCase *sbx_test_add_case(Suite *s, const char *name, SFun setup, SFun teardown, int timeout_s,
			 const TTest *const *tests)
{
	TCase *tc = sbx_test_case(s, name, setup, teardown, timeout_s);

	sbx_test_add_all(tc, tests);
	return tc;
}

Suite *sbx_test_suite(const char *name, void (*add_cases)(Suite *s))
{
	Suite *s = suite_create(name);

	add_cases(s);
	return s;
}

int sbx_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
