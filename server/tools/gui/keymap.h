/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Keysym to keycode, including characters the keyboard map lacks.
 *
 * Like xdotool, a missing character is typed by binding it to a spare
 * keycode for a while. Doing that one keycode at a time races applications:
 * Xlib re-reads a changed keymap when the application gets to the
 * MappingNotify, and a second change arriving during that read is lost, so
 * a busy application sees NoSymbol. We therefore reserve one contiguous
 * block of keycodes (the top ones, multimedia keys nobody presses in a
 * sandbox), bind every character a chunk of text needs with ONE request
 * (one MappingNotify), and keep bindings until the slot is needed again
 * (least recently used, after a settle time) or the session closes.
 */

#include <stdbool.h>
#include <stddef.h>

#include "session.h"

/* Sets up the scratch block of a freshly opened session. */
void gui_keymap_init(gui_session *s);

/* Whether sym is missing from the keymap, so it needs a slot in the block. */
bool gui_keymap_needs_slot(const gui_session *s, KeySym sym);

/*
 * Makes every keysym of syms typable, binding those without a slot yet into
 * the block in one request. At most GUI_SCRATCH_KEYCODES distinct keysyms
 * of syms may need a slot (-E2BIG otherwise; callers chunk their input with
 * gui_keymap_needs_slot()).
 */
int gui_keymap_prepare(gui_session *s, const KeySym *syms, size_t n, sbx_error *err);

/*
 * The keycode for sym and whether Shift is needed, after gui_keymap_prepare().
 * Returns false when sym is not typable.
 */
bool gui_keymap_lookup(gui_session *s, KeySym sym, KeyCode *kc, bool *shift);

/* Gives the block its original rows back (session close). */
void gui_keymap_restore(gui_session *s);
