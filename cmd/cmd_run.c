/* SPDX-License-Identifier: MIT */
/* Placeholder until its issue lands: refuses clearly instead of pretending. */
#include "cli.h"

int cmd_run(int argc, char **argv)
{
	cli_error("'run' is not available in this build yet");
	return EXIT_USAGE;
}
