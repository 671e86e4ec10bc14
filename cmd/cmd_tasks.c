/* SPDX-License-Identifier: MIT */
/* Placeholder until its issue lands: refuses clearly instead of pretending. */
#include "cli.h"

int cmd_tasks(int argc, char **argv)
{
	cli_error("'tasks' is not available in this build yet");
	return EXIT_USAGE;
}
