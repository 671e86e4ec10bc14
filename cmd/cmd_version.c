/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "cli.h"
#include "sbx-config.h"

int cmd_version(int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		printf("Usage: sandboxctl version\n\nPrints the version of sandboxctl.\n");
		return EXIT_PASS;
	}
	printf("sandboxctl %s\n", SBX_VERSION);
	return EXIT_PASS;
}
