/* SPDX-License-Identifier: MIT */
/*
 * sandbox-grader: the child process run, mcp, sweep and serve grade each
 * episode in (lib/run/grade.c says why). Not for people: its only verb is
 * the internal `__grade`, as sandboxctl's own.
 */
#include <stdio.h>
#include <string.h>

#include "sbx/run.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "__grade") == 0)
		return sbx_run_grader_main(argc - 1, argv + 1);
	fputs("sandbox-grader: the grading child of sandboxctl, not a command (see "
	      "'sandboxctl grade')\n",
	      stderr);
	return 2;
}
