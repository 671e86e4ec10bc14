/* SPDX-License-Identifier: MIT */
/* Placeholder until its issue lands: refuses clearly instead of pretending. */
#include "cli.h"

int cmd_grade(int argc, char **argv)
{
	cli_error("'grade' is not available in this build yet");
	return EXIT_USAGE;
}
