/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One cached X connection for the GUI tools. Xlib connections are not
 * thread-safe and the server may run handlers on several threads, so every
 * use goes through gui_session_acquire()/gui_session_release(), which hold
 * one process-wide lock. The connection opens lazily on first use, is
 * reopened when the display name changes or the X server went away, and
 * Xlib's error handlers are replaced so a protocol error or a dead server
 * becomes an error message, never exit().
 */

#include <stdbool.h>
#include <X11/Xlib.h>

#include "sbx/error.h"

#define GUI_SCRATCH_KEYCODES 16

typedef struct gui_session {
	Display *dpy;
	char *name; /* display name as given, e.g. ":99" */
	Window root;
	int width, height;
	int min_keycode, max_keycode;
	int keysyms_per_keycode;
	KeySym *keymap; /* the core keyboard map, as XGetKeyboardMapping returned it */
	bool io_failed; /* the connection is dead: reopen on next acquire */
	int x_error;	/* first protocol error since gui_session_check_errors(), or 0 */
	unsigned char x_error_request, x_error_minor;
	/*
	 * The scratch block (keymap.c): the top keycodes, rebound to type
	 * characters the keymap lacks. n_scratch is 0 when there is none.
	 */
	int scratch_first, n_scratch;
	bool scratch_dirty; /* the block no longer holds its original rows */
	KeySym scratch_sym[GUI_SCRATCH_KEYCODES];
	unsigned long scratch_use[GUI_SCRATCH_KEYCODES];
	unsigned long use_clock;
	double scratch_last_ms; /* monotonic time of the last key sent through the block */
} gui_session;

/*
 * Locks the GUI and returns the session for display (opening it if needed)
 * in *out. On failure the lock is released and err says
 * "No display available: ..." (-ENXIO), or why the X server cannot be used.
 * On success the caller must call gui_session_release().
 */
int gui_session_acquire(const char *display, gui_session **out, sbx_error *err);

/* Releases the lock taken by a successful gui_session_acquire(). */
void gui_session_release(gui_session *s);

/*
 * Round-trips to the X server (XSync) and turns a protocol error or a lost
 * connection since the last check into an error ("X error: BadValue ..."
 * / "X server ':99' connection lost"). Clears the recorded error.
 */
int gui_session_check_errors(gui_session *s, const char *what, sbx_error *err);

/* Re-reads the core keyboard map (after someone changed it). */
int gui_session_reload_keymap(gui_session *s, sbx_error *err);

/* Closes the cached connection, if any (tests, shutdown). Takes the lock. */
void gui_session_close_all(void);
