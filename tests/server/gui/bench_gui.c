/* SPDX-License-Identifier: MIT */
/*
 * Screenshot latency, split into grab (XGetImage + RGB) and encode (PNG +
 * base64), on a flat screen and on a spreadsheet-like grid of text.
 * Not a test: prints figures. Uses $DISPLAY when set, else its own Xvfb.
 *   <build>/tests/server/tools/gui/gui-bench [rounds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <X11/Xlib.h>

#include "gui-test.h"
#include "screen_capture.h"
#include "session.h"
#include "xvfb.h"

static void measure(const char *label, const char *display, int rounds)
{
	double grab = 0, enc = 0, total = 0;
	size_t bytes = 0;

	for (int i = 0; i < rounds; i++) {
		sbx_error err = SBX_ERROR_INIT;
		gui_capture cap;
		gui_session *s;
		double t0 = test_now_ms();

		if (gui_session_acquire(display, &s, &err) < 0 ||
		    gui_capture_region(s, 0, 0, s->width, s->height, &cap, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			exit(1);
		}
		gui_session_release(s);
		total += test_now_ms() - t0;
		grab += cap.grab_ms;
		enc += cap.encode_ms;
		bytes = cap.png_bytes;
		gui_capture_clear(&cap);
	}
	printf("%-10s grab %6.2f ms  png+base64 %6.2f ms  total %6.2f ms  png %zu bytes\n", label,
	       grab / rounds, enc / rounds, total / rounds, bytes);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50;
	const char *display = getenv("DISPLAY");
	test_xvfb xvfb = {-1, ""};

	if (rounds <= 0)
		rounds = 50;
	if (!display || !*display) {
		if (test_xvfb_start(&xvfb, 1280, 720) < 0)
			return 1;
		display = xvfb.display;
	}
	measure("flat", display, rounds);

	/* A grid of numbers, like a sheet. */
	Display *d = XOpenDisplay(display);
	if (!d)
		return 1;
	int w = DisplayWidth(d, 0), h = DisplayHeight(d, 0);
	Window win = XCreateSimpleWindow(d, DefaultRootWindow(d), 0, 0, (unsigned)w, (unsigned)h, 0,
					 0, 0xffffff);
	GC gc = XCreateGC(d, win, 0, NULL);
	XMapRaised(d, win);
	XSync(d, False);
	for (int y = 0; y < h; y += 20) {
		XSetForeground(d, gc, 0xc0c0c0);
		XDrawLine(d, win, gc, 0, y, w, y);
		for (int x = 0; x < w; x += 80) {
			char cell[32];
			int n = snprintf(cell, sizeof(cell), "%d.%02d", (x * 7 + y * 13) % 10007,
					 (x + y) % 100);

			XSetForeground(d, gc, 0xc0c0c0);
			XDrawLine(d, win, gc, x, y, x, y + 20);
			XSetForeground(d, gc, 0x000000);
			XDrawString(d, win, gc, x + 4, y + 15, cell, n);
		}
	}
	XSync(d, False);
	measure("sheet-like", display, rounds);
	XCloseDisplay(d);
	gui_session_close_all();
	test_xvfb_stop(&xvfb);
	return 0;
}
