/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <X11/Xlib.h>
#include <X11/keysym.h>

#include "sbx/cleanup.h"
#include "keyspec.h"

/* xdotool's modifier aliases plus what agents write for special keys. */
static const struct {
	const char *alias;
	const char *keysym;
} aliases[] = {
	{"ctrl", "Control_L"},
	{"control", "Control_L"},
	{"alt", "Alt_L"},
	{"shift", "Shift_L"},
	{"super", "Super_L"},
	{"meta", "Meta_L"},
	{"win", "Super_L"},
	{"windows", "Super_L"},
	{"cmd", "Super_L"},
	{"command", "Super_L"},
	{"altgr", "ISO_Level3_Shift"},
	{"enter", "Return"},
	{"return", "Return"},
	{"esc", "Escape"},
	{"escape", "Escape"},
	{"backspace", "BackSpace"},
	{"del", "Delete"},
	{"delete", "Delete"},
	{"ins", "Insert"},
	{"insert", "Insert"},
	{"tab", "Tab"},
	{"space", "space"},
	{"pgup", "Prior"},
	{"pageup", "Prior"},
	{"page_up", "Prior"},
	{"pgdn", "Next"},
	{"pagedown", "Next"},
	{"page_down", "Next"},
	{"up", "Up"},
	{"down", "Down"},
	{"left", "Left"},
	{"right", "Right"},
	{"home", "Home"},
	{"end", "End"},
	{"capslock", "Caps_Lock"},
	{"caps_lock", "Caps_Lock"},
	{"printscreen", "Print"},
	{"print", "Print"},
	{"menu", "Menu"},
	{"plus", "plus"},
	{"minus", "minus"},
};

int gui_utf8_decode(const char *s, size_t len, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c, min;
	int n;

	if (len == 0)
		return -EILSEQ;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if ((u[0] & 0xe0) == 0xc0) {
		n = 2, c = u[0] & 0x1f, min = 0x80;
	} else if ((u[0] & 0xf0) == 0xe0) {
		n = 3, c = u[0] & 0x0f, min = 0x800;
	} else if ((u[0] & 0xf8) == 0xf0) {
		n = 4, c = u[0] & 0x07, min = 0x10000;
	} else
		return -EILSEQ;
	if ((size_t)n > len)
		return -EILSEQ;
	for (int i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return -EILSEQ;
		c = c << 6 | (u[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return -EILSEQ;
	*cp = c;
	return n;
}

KeySym gui_keysym_from_codepoint(uint32_t cp)
{
	if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff))
		return (KeySym)cp;
	switch (cp) {
	case '\n':
	case '\r':
		return XK_Return;
	case '\t':
		return XK_Tab;
	case '\b':
		return XK_BackSpace;
	case 0x1b:
		return XK_Escape;
	default:
		return (KeySym)(0x01000000u | cp);
	}
}

static KeySym resolve(const char *name, size_t len)
{
	char buf[64];
	KeySym sym;
	uint32_t cp;

	if (len == 0 || len >= sizeof(buf))
		return NoSymbol;
	memcpy(buf, name, len);
	buf[len] = '\0';

	/* One character (possibly multi-byte) stands for itself, case and all. */
	if (gui_utf8_decode(buf, len, &cp) == (int)len)
		return cp >= 0x20 && cp != 0x7f ? gui_keysym_from_codepoint(cp) : NoSymbol;

	for (size_t i = 0; i < SBX_ELEMENTSOF(aliases); i++)
		if (strcasecmp(buf, aliases[i].alias) == 0)
			return XStringToKeysym(aliases[i].keysym);

	sym = XStringToKeysym(buf);
	if (sym != NoSymbol)
		return sym;

	/* "RETURN", "f4", "backspace": try the canonical capitalisation. */
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)(i == 0 ? (buf[i] >= 'a' && buf[i] <= 'z' ? buf[i] - 32 : buf[i])
				       : (buf[i] >= 'A' && buf[i] <= 'Z' ? buf[i] + 32 : buf[i]));
	return XStringToKeysym(buf);
}

static int parse_combo(const char *spec, const char *s, size_t len, gui_keycombo *combo,
		       sbx_error *err)
{
	size_t i = 0;

	combo->n = 0;
	while (i < len) {
		size_t start = i;
		KeySym sym;

		/* A '+' where a name should start is the key '+' itself ("ctrl++"). */
		if (s[i] == '+')
			i++;
		else
			while (i < len && s[i] != '+')
				i++;
		sym = resolve(s + start, i - start);
		if (sym == NoSymbol)
			return sbx_error_set(err, -EINVAL, "Unknown key '%.*s' in '%s'",
					     (int)(i - start), s + start, spec);
		if (combo->n == GUI_KEYSPEC_MAX_COMBO)
			return sbx_error_set(err, -EINVAL,
					     "Too many keys held together in '%s' (at most %d)",
					     spec, GUI_KEYSPEC_MAX_COMBO);
		combo->keys[combo->n++] = sym;
		if (i == len)
			break;
		/* s[i] is the separator; a name must follow it. */
		if (++i == len)
			return sbx_error_set(err, -EINVAL, "Missing key after '+' in '%s'", spec);
	}
	return 0;
}

int gui_keyspec_parse(const char *spec, gui_keyseq *out, sbx_error *err)
{
	_cleanup_free_ gui_keyseq *seq = NULL;
	size_t len, i = 0;
	int r;

	if (!spec)
		return sbx_error_set(err, -EINVAL, "Missing key");
	len = strlen(spec);
	if (len > GUI_KEYSPEC_MAX_LEN)
		return sbx_error_set(err, -EINVAL, "Key spec too long (%zu bytes, at most %d)", len,
				     GUI_KEYSPEC_MAX_LEN);
	seq = calloc(1, sizeof(*seq));
	if (!seq)
		return sbx_error_set(err, -ENOMEM, "out of memory");

	while (i < len) {
		size_t start;

		if (spec[i] == ' ' || spec[i] == '\t') {
			i++;
			continue;
		}
		start = i;
		while (i < len && spec[i] != ' ' && spec[i] != '\t')
			i++;
		if (seq->n == GUI_KEYSPEC_MAX_SEQ)
			return sbx_error_set(err, -EINVAL,
					     "Too many key combos in '%s' (at most %d)", spec,
					     GUI_KEYSPEC_MAX_SEQ);
		r = parse_combo(spec, spec + start, i - start, &seq->combos[seq->n], err);
		if (r < 0)
			return r;
		seq->n++;
	}
	if (seq->n == 0)
		return sbx_error_set(err, -EINVAL, "Missing key: empty key spec");
	*out = *seq;
	return 0;
}
