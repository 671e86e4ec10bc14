/* SPDX-License-Identifier: MIT */
#pragma once

/* Screenshot results shared by take_screenshot and the computer tool. */

#include <stdbool.h>

#include "tool.h"
#include "session.h"

/*
 * Captures a region into out: the PNG as out->image_png_b64 (image content)
 * and {width, height, timestamp} in out->structured, plus image_base64 when
 * with_base64 (the REST contract of take_screenshot wants it inline).
 * Creates out->structured if it is NULL. Returns 0 or a negative errno after
 * failing out.
 */
int gui__screenshot(gui_session *s, int x, int y, int w, int h, bool with_base64, tool_result *out);

/*
 * After an input action: attaches a screenshot of the settled screen as
 * out->image_png_b64 (image content only; structured stays as it is), as
 * Anthropic's reference computer tool returns one after every action.
 */
int gui__screenshot_after_action(gui_session *s, tool_result *out);
