/* SPDX-License-Identifier: MIT */
#pragma once

/* Computer-use tools on the sandbox's X display (X11 + XTest, PNG via libpng). */

#include <stddef.h>

#include "tool.h"

/* The GUI tool rows, to be appended to the server's dispatch table. */
const tool_def *gui_tools(size_t *n_out);
