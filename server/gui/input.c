/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>

#include "input.h"

/*
 * How long a client may take to read a key event that refers to a borrowed
 * keycode before we rebind that keycode. Toolkits that re-read the keymap
 * lazily would otherwise see the new binding and type a wrong character.
 */
#define SCRATCH_SETTLE_MS 150

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A keycode producing sym on level 1 (no Shift) or level 2 (Shift), if any. */
static bool keymap_find(gui_session *s, KeySym sym, KeyCode *kc, bool *shift)
{
	int per = s->keysyms_per_keycode, n = s->max_keycode - s->min_keycode + 1;

	for (int i = 0; i < s->n_scratch; i++)
		if (s->scratch[i].bound == sym) {
			s->scratch[i].last_use = ++s->use_clock;
			s->scratch[i].last_use_ms = now_ms();
			*kc = s->scratch[i].code;
			*shift = false;
			return true;
		}
	for (int col = 0; col < 2 && col < per; col++)
		for (int i = 0; i < n; i++)
			if (s->keymap[(size_t)i * (size_t)per + (size_t)col] == sym) {
				*kc = (KeyCode)(s->min_keycode + i);
				*shift = col == 1;
				return true;
			}
	return false;
}

static bool keycode_is_scratch(gui_session *s, int code)
{
	for (int i = 0; i < s->n_scratch; i++)
		if (s->scratch[i].code == code)
			return true;
	return false;
}

static bool keycode_is_empty(gui_session *s, int code)
{
	size_t per = (size_t)s->keysyms_per_keycode, row = (size_t)(code - s->min_keycode);

	for (size_t c = 0; c < per; c++)
		if (s->keymap[row * per + c] != NoSymbol)
			return false;
	return true;
}

/* A keycode to borrow: unbound ones first, else the highest ones (restored later). */
static int pick_keycode(gui_session *s)
{
	for (int pass = 0; pass < 2; pass++)
		for (int code = s->max_keycode; code > s->min_keycode; code--)
			if (!keycode_is_scratch(s, code) &&
			    (pass == 1 || keycode_is_empty(s, code)))
				return code;
	return -1;
}

static void write_row(gui_session *s, KeyCode code, const KeySym *row, int per)
{
	XChangeKeyboardMapping(s->dpy, code, per, (KeySym *)row, 1);
}

static const KeySym *orig_row(gui_session *s, KeyCode code)
{
	return s->keymap + (size_t)(code - s->min_keycode) * (size_t)s->keysyms_per_keycode;
}

/* Binds sym to a borrowed keycode (both shift levels) and returns it. */
static int bind_scratch(gui_session *s, KeySym sym, KeyCode *kc, sbx_error *err)
{
	int slot = -1;

	if (s->n_scratch < GUI_SCRATCH_KEYCODES) {
		int code = pick_keycode(s);

		if (code > 0) {
			slot = s->n_scratch++;
			s->scratch[slot].code = (KeyCode)code;
			s->scratch[slot].was_empty = keycode_is_empty(s, code);
		}
	}
	if (slot < 0) {
		double wait;

		if (s->n_scratch == 0)
			return sbx_error_set(err, -ENOSPC, "no spare keycode to type U+%04lX",
					     (unsigned long)sym);
		slot = 0;
		for (int i = 1; i < s->n_scratch; i++)
			if (s->scratch[i].last_use < s->scratch[slot].last_use)
				slot = i;
		/* Its last key event must have been read before the binding changes. */
		XSync(s->dpy, False);
		wait = s->scratch[slot].last_use_ms + SCRATCH_SETTLE_MS - now_ms();
		if (wait > 0)
			sleep_ms((long)wait + 1);
	}
	s->scratch[slot].bound = sym;
	s->scratch[slot].last_use = ++s->use_clock;
	s->scratch[slot].last_use_ms = now_ms();
	write_row(s, s->scratch[slot].code, (KeySym[]){sym, sym}, 2);
	XSync(s->dpy, False);
	*kc = s->scratch[slot].code;
	return 0;
}

/*
 * Gives borrowed keycodes their original binding back: those that had one
 * (after a settle time), or all of them when all is set.
 */
static void restore_scratch(gui_session *s, bool all)
{
	bool settled = false;
	int kept = 0;

	for (int i = 0; i < s->n_scratch; i++) {
		if (s->scratch[i].was_empty && !all) {
			s->scratch[kept++] = s->scratch[i];
			continue;
		}
		if (!settled) {
			XSync(s->dpy, False);
			sleep_ms(SCRATCH_SETTLE_MS);
			settled = true;
		}
		write_row(s, s->scratch[i].code, orig_row(s, s->scratch[i].code),
			  s->keysyms_per_keycode);
	}
	s->n_scratch = kept;
	if (settled)
		XSync(s->dpy, False);
}

void gui_input_restore_keymap(gui_session *s)
{
	if (!s->io_failed)
		restore_scratch(s, true);
}

static int resolve_key(gui_session *s, KeySym sym, KeyCode *kc, bool *shift, sbx_error *err)
{
	if (keymap_find(s, sym, kc, shift))
		return 0;
	*shift = false;
	return bind_scratch(s, sym, kc, err);
}

static int shift_keycode(gui_session *s, KeyCode *kc, sbx_error *err)
{
	bool shift;

	if (!keymap_find(s, XK_Shift_L, kc, &shift) && !keymap_find(s, XK_Shift_R, kc, &shift))
		return sbx_error_set(err, -ENOENT, "X server '%s': keymap has no Shift key",
				     s->name);
	return 0;
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

	for (size_t i = 0; i < combo->n; i++) {
		KeyCode kc;
		bool shift;

		r = resolve_key(s, combo->keys[i], &kc, &shift, err);
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
		restore_scratch(s, false);
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
	restore_scratch(s, false);
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
			sleep_ms(20);
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
	sleep_ms(20);
	XTestFakeButtonEvent(s->dpy, 1, True, CurrentTime);
	XSync(s->dpy, False);
	sleep_ms(20);
	for (int i = 1; i <= steps; i++) {
		XTestFakeMotionEvent(s->dpy, -1, x0 + (x1 - x0) * i / steps,
				     y0 + (y1 - y0) * i / steps, CurrentTime);
		XSync(s->dpy, False);
		sleep_ms(8);
	}
	sleep_ms(20);
	XTestFakeButtonEvent(s->dpy, 1, False, CurrentTime);
	return gui_session_check_errors(s, "drag", err);
}

int gui_input_type(gui_session *s, const char *text, sbx_error *err)
{
	size_t len = strlen(text), chars = 0;
	KeyCode shift_kc = 0;
	int r = 0;

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		int n = gui_utf8_decode(text + i, len - i, &cp);

		if (n < 0)
			return sbx_error_set(err, -EINVAL, "text is not valid UTF-8 (at byte %zu)",
					     i);
		if (cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r')
			return sbx_error_set(err, -EINVAL,
					     "cannot type control character U+%04X (at byte %zu)",
					     (unsigned)cp, i);
		if (cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			return sbx_error_set(err, -EINVAL,
					     "cannot type control character U+%04X (at byte %zu)",
					     (unsigned)cp, i);
		if (++chars > GUI_TYPE_MAX_CHARS)
			return sbx_error_set(err, -E2BIG, "text too long (more than %d characters)",
					     GUI_TYPE_MAX_CHARS);
		i += (size_t)n;
	}

	for (size_t i = 0; i < len && r >= 0;) {
		uint32_t cp;
		int n = gui_utf8_decode(text + i, len - i, &cp);
		KeyCode kc;
		bool shift;

		i += (size_t)n;
		/* "\r\n" is one Return. */
		if (cp == '\r' && i < len && text[i] == '\n')
			continue;
		r = resolve_key(s, gui_keysym_from_codepoint(cp), &kc, &shift, err);
		if (r < 0)
			break;
		if (shift && shift_kc == 0) {
			r = shift_keycode(s, &shift_kc, err);
			if (r < 0)
				break;
		}
		if (shift)
			key_event(s, shift_kc, true);
		key_event(s, kc, true);
		key_event(s, kc, false);
		if (shift)
			key_event(s, shift_kc, false);
		XFlush(s->dpy);
	}
	restore_scratch(s, false);
	if (r < 0)
		return r;
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
