/* SPDX-License-Identifier: MIT */
/*
 * Where the GUI tools learn their display: the server's tool_context. Kept in
 * its own file so the GUI tests can link the tools without the server.
 */
#include <stdlib.h>

#include "tool-util.h"

#if __has_include("server.h")
#include "server.h"

const char *gui__display(tool_context *ctx)
{
	return ctx ? ctx->display : NULL;
}

bool gui__cancelled(tool_context *ctx)
{
	return ctx && ctx->cancelled && atomic_load(ctx->cancelled);
}
#else
/* Until server.h declares struct tool_context: the environment's display. */
const char *gui__display(tool_context *ctx)
{
	(void)ctx;
	return getenv("DISPLAY");
}

bool gui__cancelled(tool_context *ctx)
{
	(void)ctx;
	return false;
}
#endif
