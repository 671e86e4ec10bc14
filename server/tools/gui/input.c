/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>

#include "input.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "keymap.h"

static int shift_keycode(gui_session *s, KeyCode *kc, sbx_error *err)
{
	bool shift;

	if (!gui_keymap_lookup(s, XK_Shift_L, kc, &shift) &&
	    !gui_keymap_lookup(s, XK_Shift_R, kc, &shift))
		return sbx_error_set(err, -ENOENT, "X server '%s': keymap has no Shift key",
				     s->name);
	return 0;
}

static int lookup(gui_session *s, KeySym sym, KeyCode *kc, bool *shift, sbx_error *err)
{
	if (gui_keymap_lookup(s, sym, kc, shift))
		return 0;
	return sbx_error_set(err, -EIO, "no keycode for keysym 0x%lx", (unsigned long)sym);
}

static void key_event(gui_session *s, KeyCode kc, bool down)
{
	XTestFakeKeyEvent(s->dpy, kc, down ? True : False, CurrentTime);
}

int gui_input_move(gui_session *s, int x, int y, sbx_error *err)
{
	XTestFakeMotionEvent(s->dpy, -1, x, y, CurrentTime);
	return gui_session_check_errors(s, "mouse move", err);
}

int gui_input_button(gui_session *s, unsigned button, bool down, sbx_error *err)
{
	XTestFakeButtonEvent(s->dpy, button, down ? True : False, CurrentTime);
	return gui_session_check_errors(s, "mouse button", err);
}

/*
 * The keycodes of a combo, with Shift inserted before any key that needs it.
 * Fills codes (capacity 2 * GUI_KEYSPEC_MAX_COMBO) and returns how many.
 */
static int combo_codes(gui_session *s, const gui_keycombo *combo, KeyCode *codes, sbx_error *err)
{
	KeyCode shift_kc = 0;
	int n = 0, r;

	r = gui_keymap_prepare(s, combo->keys, combo->n, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < combo->n; i++) {
		KeyCode kc;
		bool shift;

		r = lookup(s, combo->keys[i], &kc, &shift, err);
		if (r < 0)
			return r;
		if (shift) {
			if (shift_kc == 0) {
				r = shift_keycode(s, &shift_kc, err);
				if (r < 0)
					return r;
			}
			codes[n++] = shift_kc;
		}
		codes[n++] = kc;
	}
	return n;
}

int gui_input_combo(gui_session *s, const gui_keycombo *combo, bool down, sbx_error *err)
{
	KeyCode codes[2 * GUI_KEYSPEC_MAX_COMBO];
	int n = combo_codes(s, combo, codes, err);

	if (n < 0)
		return n;
	if (down)
		for (int i = 0; i < n; i++)
			key_event(s, codes[i], true);
	else {
		for (int i = n - 1; i >= 0; i--)
			key_event(s, codes[i], false);
	}
	return gui_session_check_errors(s, down ? "key down" : "key up", err);
}

int gui_input_keys(gui_session *s, const gui_keyseq *seq, sbx_error *err)
{
	int r = 0;

	for (size_t c = 0; c < seq->n && r >= 0; c++) {
		KeyCode codes[2 * GUI_KEYSPEC_MAX_COMBO];
		int n = combo_codes(s, &seq->combos[c], codes, err);

		if (n < 0) {
			r = n;
			break;
		}
		for (int i = 0; i < n; i++)
			key_event(s, codes[i], true);
		for (int i = n - 1; i >= 0; i--)
			key_event(s, codes[i], false);
		XFlush(s->dpy);
	}
	if (r < 0)
		return r;
	return gui_session_check_errors(s, "key press", err);
}

int gui_input_click(gui_session *s, unsigned button, int count, const gui_keycombo *mods,
		    sbx_error *err)
{
	int r;

	if (mods && mods->n > 0) {
		r = gui_input_combo(s, mods, true, err);
		if (r < 0)
			return r;
	}
	for (int i = 0; i < count; i++) {
		XTestFakeButtonEvent(s->dpy, button, True, CurrentTime);
		XTestFakeButtonEvent(s->dpy, button, False, CurrentTime);
		XFlush(s->dpy);
		if (i + 1 < count)
			sbx_sleep_ms(20);
	}
	if (mods && mods->n > 0) {
		r = gui_input_combo(s, mods, false, err);
		if (r < 0)
			return r;
	}
	return gui_session_check_errors(s, "mouse click", err);
}

int gui_input_drag(gui_session *s, int x0, int y0, int x1, int y1, sbx_error *err)
{
	const int steps = 12;

	XTestFakeMotionEvent(s->dpy, -1, x0, y0, CurrentTime);
	XSync(s->dpy, False);
	sbx_sleep_ms(20);
	XTestFakeButtonEvent(s->dpy, 1, True, CurrentTime);
	XSync(s->dpy, False);
	sbx_sleep_ms(20);
	for (int i = 1; i <= steps; i++) {
		XTestFakeMotionEvent(s->dpy, -1, x0 + (x1 - x0) * i / steps,
				     y0 + (y1 - y0) * i / steps, CurrentTime);
		XSync(s->dpy, False);
		sbx_sleep_ms(8);
	}
	sbx_sleep_ms(20);
	XTestFakeButtonEvent(s->dpy, 1, False, CurrentTime);
	return gui_session_check_errors(s, "drag", err);
}

/* Checks text and turns it into keysyms ("\r\n" is one Return); *n is the count. */
static int text_keysyms(const char *text, KeySym **out, size_t *n, sbx_error *err)
{
	size_t len = strlen(text), count = 0;
	KeySym *syms;

	syms = calloc(len + 1, sizeof(*syms));
	if (!syms)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int k = gui_utf8_decode(text + i, len - i, &cp);

		if (k < 0) {
			free(syms);
			return sbx_error_set(err, -EINVAL, "text is not valid UTF-8 (at byte %zu)",
					     i);
		}
		if ((cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r') || cp == 0x7f ||
		    (cp >= 0x80 && cp < 0xa0)) {
			free(syms);
			return sbx_error_set(err, -EINVAL,
					     "cannot type control character U+%04X (at byte %zu)",
					     (unsigned)cp, i);
		}
		if (count == GUI_TYPE_MAX_CHARS) {
			free(syms);
			return sbx_error_set(err, -E2BIG, "text too long (more than %d characters)",
					     GUI_TYPE_MAX_CHARS);
		}
		i += (size_t)k;
		if (cp == '\r' && i < len && text[i] == '\n')
			continue;
		syms[count++] = gui_keysym_from_codepoint(cp);
	}
	*out = syms;
	*n = count;
	return 0;
}

/*
 * The end of the chunk starting at from: as many keysyms as keep the distinct
 * ones that need a scratch slot within the block.
 */
static size_t chunk_end(gui_session *s, const KeySym *syms, size_t n, size_t from)
{
	KeySym slotted[GUI_SCRATCH_KEYCODES];
	size_t used = 0, i;

	for (i = from; i < n; i++) {
		bool seen = false;

		if (!gui_keymap_needs_slot(s, syms[i]))
			continue;
		for (size_t j = 0; j < used; j++)
			seen = seen || slotted[j] == syms[i];
		if (seen)
			continue;
		if (used == GUI_SCRATCH_KEYCODES)
			break;
		slotted[used++] = syms[i];
	}
	return i > from ? i : from + 1;
}

int gui_input_type(gui_session *s, const char *text, sbx_error *err)
{
	_cleanup_free_ KeySym *syms = NULL;
	KeyCode shift_kc = 0;
	size_t n = 0, i = 0;
	int r;

	r = text_keysyms(text, &syms, &n, err);
	if (r < 0)
		return r;
	while (i < n) {
		size_t end = chunk_end(s, syms, n, i);

		r = gui_keymap_prepare(s, syms + i, end - i, err);
		if (r < 0)
			return r;
		for (; i < end; i++) {
			KeyCode kc;
			bool shift;

			r = lookup(s, syms[i], &kc, &shift, err);
			if (r < 0)
				return r;
			if (shift && shift_kc == 0) {
				r = shift_keycode(s, &shift_kc, err);
				if (r < 0)
					return r;
			}
			if (shift)
				key_event(s, shift_kc, true);
			key_event(s, kc, true);
			key_event(s, kc, false);
			if (shift)
				key_event(s, shift_kc, false);
			XFlush(s->dpy);
		}
	}
	return gui_session_check_errors(s, "type", err);
}

int gui_input_pointer(gui_session *s, int *x, int *y, sbx_error *err)
{
	Window root_ret, child;
	int rx = 0, ry = 0, wx, wy, r;
	unsigned mask;

	if (!XQueryPointer(s->dpy, s->root, &root_ret, &child, &rx, &ry, &wx, &wy, &mask)) {
		r = gui_session_check_errors(s, "cursor position", err);
		if (r < 0)
			return r;
		return sbx_error_set(err, -EIO, "cursor position: pointer is on another screen");
	}
	r = gui_session_check_errors(s, "cursor position", err);
	if (r < 0)
		return r;
	*x = rx;
	*y = ry;
	return 0;
}
