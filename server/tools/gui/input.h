/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Synthetic input through XTest on a locked gui_session. Every function
 * syncs with the X server before returning and reports protocol errors or a
 * lost server as errors. Coordinates are checked by the callers.
 */

#include <stdbool.h>

#include "keyspec.h"
#include "session.h"

#define GUI_TYPE_MAX_CHARS 20000 /* code points per type_text call */

/* Moves the pointer to (x, y) on the root window. */
int gui_input_move(gui_session *s, int x, int y, sbx_error *err);

/* Presses (down) or releases a mouse button (1..7) where the pointer is. */
int gui_input_button(gui_session *s, unsigned button, bool down, sbx_error *err);

/*
 * Clicks button count times (1 single, 2 double, 3 triple) where the pointer
 * is, holding the keys of mods (may be NULL) during the clicks.
 */
int gui_input_click(gui_session *s, unsigned button, int count, const gui_keycombo *mods,
		    sbx_error *err);

/*
 * Drags with button 1 from (x0, y0) to (x1, y1), moving in small steps so
 * applications see a drag rather than a jump.
 */
int gui_input_drag(gui_session *s, int x0, int y0, int x1, int y1, sbx_error *err);

/* Presses each combo of seq (keys down in order, up in reverse). */
int gui_input_keys(gui_session *s, const gui_keyseq *seq, sbx_error *err);

/* Presses (down) or releases (reverse order) all keys of combo. */
int gui_input_combo(gui_session *s, const gui_keycombo *combo, bool down, sbx_error *err);

/*
 * Types UTF-8 text. Characters the keymap lacks are typed through the
 * scratch keycodes of keymap.h. "\n" is Return, "\t" is Tab. Returns -EINVAL
 * for invalid UTF-8 or other control characters, -E2BIG past
 * GUI_TYPE_MAX_CHARS.
 */
int gui_input_type(gui_session *s, const char *text, sbx_error *err);

/* The pointer position on the root window. */
int gui_input_pointer(gui_session *s, int *x, int *y, sbx_error *err);
