/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <time.h>
#include <X11/Xlib.h>

#include "sbx/clock.h"
#include "keymap.h"

/*
 * How long an application may take to read a key event sent through a
 * scratch keycode before that keycode is rebound to another character.
 */
#define SETTLE_MS 150

void gui_keymap_init(gui_session *s)
{
	int count = s->max_keycode - s->min_keycode + 1;

	/* Leave the block out on a server with a tiny keymap. */
	s->n_scratch = count >= 4 * GUI_SCRATCH_KEYCODES ? GUI_SCRATCH_KEYCODES : 0;
	s->scratch_first = s->max_keycode - s->n_scratch + 1;
	for (int i = 0; i < s->n_scratch; i++) {
		s->scratch_sym[i] = NoSymbol;
		s->scratch_use[i] = 0;
	}
	s->scratch_dirty = false;
}

static bool in_block(const gui_session *s, int code)
{
	return code >= s->scratch_first && code < s->scratch_first + s->n_scratch;
}

/* Outside the block: level 1 (no Shift) first, then level 2 (Shift). */
static bool find_in_keymap(const gui_session *s, KeySym sym, KeyCode *kc, bool *shift)
{
	size_t per = (size_t)s->keysyms_per_keycode;
	int n = s->max_keycode - s->min_keycode + 1;

	for (size_t col = 0; col < 2 && col < per; col++)
		for (int i = 0; i < n; i++)
			if (s->keymap[(size_t)i * per + col] == sym &&
			    !in_block(s, s->min_keycode + i)) {
				*kc = (KeyCode)(s->min_keycode + i);
				*shift = col == 1;
				return true;
			}
	return false;
}

static int find_in_block(const gui_session *s, KeySym sym)
{
	for (int i = 0; i < s->n_scratch; i++)
		if (s->scratch_sym[i] == sym)
			return i;
	return -1;
}

bool gui_keymap_needs_slot(const gui_session *s, KeySym sym)
{
	KeyCode kc;
	bool shift;

	return !find_in_keymap(s, sym, &kc, &shift);
}

bool gui_keymap_lookup(gui_session *s, KeySym sym, KeyCode *kc, bool *shift)
{
	int slot;

	if (find_in_keymap(s, sym, kc, shift))
		return true;
	slot = find_in_block(s, sym);
	if (slot < 0)
		return false;
	s->scratch_use[slot] = ++s->use_clock;
	s->scratch_last_ms = sbx_now_msf();
	*kc = (KeyCode)(s->scratch_first + slot);
	*shift = false;
	return true;
}

static bool wanted(KeySym sym, const KeySym *syms, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (syms[i] == sym)
			return true;
	return false;
}

int gui_keymap_prepare(gui_session *s, const KeySym *syms, size_t n, sbx_error *err)
{
	KeySym rows[2 * GUI_SCRATCH_KEYCODES];
	bool taken[GUI_SCRATCH_KEYCODES] = {false}, rebinding = false;
	size_t missing = 0, slotted = 0;

	for (size_t i = 0; i < n; i++)
		if (gui_keymap_needs_slot(s, syms[i]) && !wanted(syms[i], syms, i)) {
			slotted++;
			if (find_in_block(s, syms[i]) < 0)
				missing++;
		}
	if (missing == 0)
		return 0;
	if (s->n_scratch == 0)
		return sbx_error_set(err, -ENOSPC,
				     "X server '%s': no spare keycodes to type U+%04lX", s->name,
				     (unsigned long)(syms[0] & 0xffffff));
	if (slotted > (size_t)s->n_scratch)
		return sbx_error_set(err, -E2BIG, "too many distinct characters to bind at once");

	/* Bindings this chunk uses stay; the others are free, least recently used first. */
	for (int i = 0; i < s->n_scratch; i++)
		taken[i] = s->scratch_sym[i] != NoSymbol && wanted(s->scratch_sym[i], syms, n);
	for (size_t i = 0; i < n; i++) {
		int best = -1;

		if (!gui_keymap_needs_slot(s, syms[i]) || find_in_block(s, syms[i]) >= 0)
			continue;
		for (int j = 0; j < s->n_scratch; j++)
			if (!taken[j] && (best < 0 || s->scratch_use[j] < s->scratch_use[best]))
				best = j;
		if (s->scratch_sym[best] != NoSymbol)
			rebinding = true;
		taken[best] = true;
		s->scratch_sym[best] = syms[i];
		s->scratch_use[best] = ++s->use_clock;
	}
	/* A key sent through a slot we rebind must have been read first. */
	if (rebinding) {
		double wait = s->scratch_last_ms + SETTLE_MS - sbx_now_msf();

		XSync(s->dpy, False);
		if (wait > 0)
			sbx_sleep_ms(wait + 1);
	}
	for (int i = 0; i < s->n_scratch; i++)
		rows[2 * i] = rows[2 * i + 1] = s->scratch_sym[i];
	XChangeKeyboardMapping(s->dpy, s->scratch_first, 2, rows, s->n_scratch);
	s->scratch_dirty = true;
	return gui_session_check_errors(s, "keyboard mapping", err);
}

void gui_keymap_restore(gui_session *s)
{
	size_t per = (size_t)s->keysyms_per_keycode;

	if (!s->scratch_dirty || s->n_scratch == 0)
		return;
	XChangeKeyboardMapping(s->dpy, s->scratch_first, (int)per,
			       s->keymap + (size_t)(s->scratch_first - s->min_keycode) * per,
			       s->n_scratch);
	XSync(s->dpy, False);
	s->scratch_dirty = false;
	for (int i = 0; i < s->n_scratch; i++)
		s->scratch_sym[i] = NoSymbol;
}
