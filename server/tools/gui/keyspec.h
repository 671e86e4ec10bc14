/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Key specs in xdotool syntax, as agents send them: "Return", "ctrl+s",
 * "alt+F4", "shift+Tab", "super", "ctrl+shift+t", several combos separated
 * by spaces ("ctrl+a Delete"). Resolving names needs no X connection, so the
 * parser is tested on its own.
 */

#include <stddef.h>
#include <stdint.h>
#include <X11/X.h>

#include "sbx/error.h"

#define GUI_KEYSPEC_MAX_LEN   256 /* bytes of a whole spec */
#define GUI_KEYSPEC_MAX_COMBO 8	  /* keys held together */
#define GUI_KEYSPEC_MAX_SEQ   16  /* combos pressed one after another */

typedef struct gui_keycombo {
	KeySym keys[GUI_KEYSPEC_MAX_COMBO]; /* pressed in order, released in reverse */
	size_t n;
} gui_keycombo;

typedef struct gui_keyseq {
	gui_keycombo combos[GUI_KEYSPEC_MAX_SEQ];
	size_t n;
} gui_keyseq;

/*
 * Parses spec into out. Names are X keysym names ("Return", "KP_0",
 * "Page_Down"), xdotool's aliases (ctrl, alt, shift, super, meta), common
 * spellings agents use (Enter, Esc, Backspace, PageUp, cmd, win), any
 * single character ("a", "A", "%", "é"), and case-insensitive keysym names
 * ("return", "f4"). Returns 0, or -EINVAL with "Unknown key 'Foo' in
 * 'ctrl+Foo'"-style messages; out is written only on success.
 */
int gui_keyspec_parse(const char *spec, gui_keyseq *out, sbx_error *err);

/* The keysym that types Unicode code point cp (Latin-1 keysyms are the code point). */
KeySym gui_keysym_from_codepoint(uint32_t cp);

/*
 * Decodes one UTF-8 sequence at s (up to len bytes): stores the code point and
 * returns the bytes consumed, or -EILSEQ for a malformed, overlong or
 * surrogate sequence.
 */
int gui_utf8_decode(const char *s, size_t len, uint32_t *cp);
