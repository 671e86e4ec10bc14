/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>

#include "keymap.h"
#include "session.h"

static pthread_mutex_t gui_lock = PTHREAD_MUTEX_INITIALIZER;
static gui_session *cached;
/* The session Xlib's process-wide error handler reports into (under gui_lock). */
static gui_session *current;

static int on_x_error(Display *dpy, XErrorEvent *ev)
{
	(void)dpy;
	if (current && current->x_error == 0) {
		current->x_error = ev->error_code;
		current->x_error_request = ev->request_code;
		current->x_error_minor = ev->minor_code;
	}
	return 0;
}

/*
 * Xlib's default handlers print and exit(). With libX11 >= 1.7 an IO error
 * handler may return when an exit handler is installed: the Display is then
 * marked dead and later calls on it fail quietly.
 */
static int on_io_error(Display *dpy)
{
	(void)dpy;
	return 0;
}

static void on_io_error_exit(Display *dpy, void *userdata)
{
	gui_session *s = userdata;

	(void)dpy;
	s->io_failed = true;
}

static void session_free(gui_session *s)
{
	if (!s)
		return;
	if (s->dpy) {
		/* A dead connection is only freed; talking to it again is pointless. */
		if (!s->io_failed) {
			gui_keymap_restore(s);
			XCloseDisplay(s->dpy);
		}
	}
	if (s->keymap)
		XFree(s->keymap);
	free(s->name);
	free(s);
}

int gui_session_reload_keymap(gui_session *s, sbx_error *err)
{
	int count = s->max_keycode - s->min_keycode + 1;
	KeySym *map;
	int per = 0;

	map = XGetKeyboardMapping(s->dpy, (KeyCode)s->min_keycode, count, &per);
	if (!map || per <= 0) {
		if (map)
			XFree(map);
		return sbx_error_set(err, -EIO, "X server '%s': cannot read the keyboard map",
				     s->name);
	}
	if (s->keymap)
		XFree(s->keymap);
	s->keymap = map;
	s->keysyms_per_keycode = per;
	return 0;
}

static int session_open(const char *name, gui_session **out, sbx_error *err)
{
	gui_session *s;
	int ev, evb, major, minor, r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	s->name = strdup(name);
	if (!s->name) {
		free(s);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	s->dpy = XOpenDisplay(name);
	if (!s->dpy) {
		session_free(s);
		return sbx_error_set(err, -ENXIO,
				     "No display available: cannot open X display '%s'", name);
	}
	XSetIOErrorExitHandler(s->dpy, on_io_error_exit, s);
	if (!XTestQueryExtension(s->dpy, &ev, &evb, &major, &minor)) {
		session_free(s);
		return sbx_error_set(
			err, -ENXIO,
			"No display available: X display '%s' lacks the XTEST extension", name);
	}
	/* Our own fake input must not be held up by another client's grab. */
	XTestGrabControl(s->dpy, True);
	s->root = DefaultRootWindow(s->dpy);
	s->width = DisplayWidth(s->dpy, DefaultScreen(s->dpy));
	s->height = DisplayHeight(s->dpy, DefaultScreen(s->dpy));
	XDisplayKeycodes(s->dpy, &s->min_keycode, &s->max_keycode);
	r = gui_session_reload_keymap(s, err);
	if (r < 0) {
		session_free(s);
		return r;
	}
	gui_keymap_init(s);
	*out = s;
	return 0;
}

int gui_session_acquire(const char *display, gui_session **out, sbx_error *err)
{
	static bool handlers_set;
	int r;

	if (!display || !*display)
		return sbx_error_set(err, -ENXIO, "No display available: no X display configured");
	if (strlen(display) > 255)
		return sbx_error_set(err, -ENXIO, "No display available: display name too long");

	pthread_mutex_lock(&gui_lock);
	if (!handlers_set) {
		XSetErrorHandler(on_x_error);
		XSetIOErrorHandler(on_io_error);
		handlers_set = true;
	}
	if (cached && (cached->io_failed || strcmp(cached->name, display) != 0)) {
		session_free(cached);
		cached = NULL;
	}
	if (!cached) {
		r = session_open(display, &cached, err);
		if (r < 0) {
			pthread_mutex_unlock(&gui_lock);
			return r;
		}
	}
	current = cached;
	cached->x_error = 0;
	*out = cached;
	return 0;
}

void gui_session_release(gui_session *s)
{
	(void)s;
	current = NULL;
	pthread_mutex_unlock(&gui_lock);
}

static const char *x_error_name(int code)
{
	static const char *const names[] = {
		"Success",   "BadRequest", "BadValue",		"BadWindow", "BadPixmap",
		"BadAtom",   "BadCursor",  "BadFont",		"BadMatch",  "BadDrawable",
		"BadAccess", "BadAlloc",   "BadColor",		"BadGC",     "BadIDChoice",
		"BadName",   "BadLength",  "BadImplementation",
	};
	return code >= 0 && (size_t)code < sizeof(names) / sizeof(names[0]) ? names[code]
									    : "extension error";
}

int gui_session_check_errors(gui_session *s, const char *what, sbx_error *err)
{
	int code;

	if (!s->io_failed)
		XSync(s->dpy, False);
	if (s->io_failed)
		return sbx_error_set(err, -EPIPE, "No display available: X server '%s' went away",
				     s->name);
	code = s->x_error;
	if (code == 0)
		return 0;
	s->x_error = 0;
	return sbx_error_set(err, -EIO, "%s: X error %s (%d, request %u.%u)", what,
			     x_error_name(code), code, s->x_error_request, s->x_error_minor);
}

void gui_session_close_all(void)
{
	pthread_mutex_lock(&gui_lock);
	session_free(cached);
	cached = NULL;
	current = NULL;
	pthread_mutex_unlock(&gui_lock);
}
