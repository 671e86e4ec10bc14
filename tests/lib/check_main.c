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

int sbx_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
