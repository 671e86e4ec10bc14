/* SPDX-License-Identifier: MIT */
/* Placeholder until its issue lands: refuses clearly instead of pretending. */
#include "cli.h"

int cmd_build(int argc, char **argv)
{
	cli_error("'build' is not available in this build yet");
	return EXIT_USAGE;
}
