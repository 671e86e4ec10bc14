/* SPDX-License-Identifier: MIT */
#pragma once

/* Screen capture: a region of the root window as a base64 PNG. */

#include <stdint.h>

#include "session.h"

typedef struct gui_capture {
	char *png_b64; /* owned; free() */
	uint32_t width, height;
	size_t png_bytes;
	double grab_ms, encode_ms; /* time in XGetImage and in PNG + base64 */
} gui_capture;

/*
 * Captures the w x h region at (x, y) of the root window (the caller checks
 * it lies on the screen) into out. On failure out is untouched and err
 * says why.
 */
int gui_capture_region(gui_session *s, int x, int y, int w, int h, gui_capture *out,
		       sbx_error *err);

#define GUI_SETTLE_POLL_MS 50

/*
 * A screenshot of the whole screen once it has stopped changing: waits
 * min_ms (so applications see the input just sent), then grabs every
 * GUI_SETTLE_POLL_MS until two grabs are identical or max_ms have passed,
 * and encodes the last grab. grab_ms in out is the whole wait.
 */
int gui_capture_settled(gui_session *s, int min_ms, int max_ms, gui_capture *out, sbx_error *err);

/* Frees what out holds. Accepts NULL. */
void gui_capture_clear(gui_capture *c);
