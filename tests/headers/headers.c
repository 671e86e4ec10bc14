/* SPDX-License-Identifier: MIT */
/*
 * Compiled with -std=c17 -pedantic -Werror: the public headers must stay
 * clean for any consumer, whatever warnings the project itself allows.
 */
#include "sbx/sbx.h"

int main(void)
{
	sbx_error err = SBX_ERROR_INIT;

	return err.code;
}
