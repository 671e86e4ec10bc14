/* SPDX-License-Identifier: MIT */
/* Placeholder until the GUI tools land: contributes no tools. */
#include "gui.h"

const tool_def *gui_tools(size_t *n_out)
{
	*n_out = 0;
	return NULL;
}
