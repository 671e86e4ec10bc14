/* SPDX-License-Identifier: MIT */
/*
 * The GUI tools on a real Xvfb (1280x720) that the test starts and kills.
 * A window of the test's own records the input the tools send, so key and
 * button events are checked exactly as an application would receive them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>

#include "check_main.h"
#include "gui-test.h"
#include "session.h"
#include "sbx/util.h"
#include "xvfb.h"

static test_xvfb xvfb;

static void xvfb_setup(void)
{
	ck_assert_msg(test_xvfb_start(&xvfb, 1280, 720) == 0, "cannot start Xvfb");
}

static void xvfb_teardown(void)
{
	test_xvfb_stop(&xvfb);
}

static void use_display(void)
{
	test_display = xvfb.display;
}

static tool_result call_ok(const char *tool, const char *args)
{
	tool_result r;

	ck_assert_int_eq(test_call(tool, args, &r), 0);
	ck_assert_msg(r.error_kind == TOOL_OK, "%s %s: %s", tool, args ? args : "",
		      r.error ? r.error : "?");
	ck_assert_ptr_nonnull(r.structured);
	return r;
}

/* call_ok for a tool that acts on the display: its result is not looked at. */
static void act(const char *tool, const char *args)
{
	tool_result r = call_ok(tool, args);

	tool_result_clear(&r);
}

static void decode_screenshot(const char *b64, uint32_t *w, uint32_t *h, uint8_t **rgb)
{
	uint8_t *png;
	size_t len;

	ck_assert_int_eq(test_base64_decode(b64, &png, &len), 0);
	ck_assert_int_eq(test_png_decode(png, len, w, h, rgb), 0);
	free(png);
}

START_TEST(screenshot_is_a_1280x720_png)
{
	uint32_t w, h;
	uint8_t *rgb;

	use_display();
	tool_result r = call_ok("take_screenshot", NULL);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "width", 0), 1280);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "height", 0), 720);
	const char *stamp = sbx_json_get_string(r.structured, "timestamp", "");
	ck_assert_uint_eq(strlen(stamp), 24);
	ck_assert_int_eq(stamp[10], 'T');
	ck_assert_int_eq(stamp[23], 'Z');
	const char *b64 = sbx_json_get_string(r.structured, "image_base64", NULL);
	ck_assert_ptr_nonnull(b64);
	ck_assert_ptr_nonnull(r.image_png_b64);
	ck_assert_str_eq(b64, r.image_png_b64);
	decode_screenshot(b64, &w, &h, &rgb);
	ck_assert_uint_eq(w, 1280);
	ck_assert_uint_eq(h, 720);
	free(rgb);
	tool_result_clear(&r);
}
END_TEST

START_TEST(pointer_moves_where_asked)
{
	use_display();
	tool_result r = call_ok("mouse_move", "{\"x\":100,\"y\":200}");
	ck_assert(sbx_json_get_bool(r.structured, "success", false));
	tool_result_clear(&r);
	r = call_ok("get_cursor_position", NULL);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "x", -1), 100);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "y", -1), 200);
	tool_result_clear(&r);

	/* Actions of the computer tool show the screen afterwards; queries do not. */
	uint32_t w, h;
	uint8_t *rgb;
	r = call_ok("computer", "{\"action\":\"mouse_move\",\"coordinate\":[1279,719]}");
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "x", -1), 1279);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "y", -1), 719);
	ck_assert_ptr_nonnull(r.image_png_b64);
	decode_screenshot(r.image_png_b64, &w, &h, &rgb);
	ck_assert_uint_eq(w, 1280);
	ck_assert_uint_eq(h, 720);
	free(rgb);
	tool_result_clear(&r);
	r = call_ok("computer", "{\"action\":\"cursor_position\"}");
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "x", -1), 1279);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "y", -1), 719);
	ck_assert_ptr_null(r.image_png_b64);
	tool_result_clear(&r);
}
END_TEST

START_TEST(coordinates_off_screen_are_refused)
{
	tool_result r;

	use_display();
	ck_assert_int_eq(test_call("click", "{\"x\":1280,\"y\":10}", &r), 0);
	ck_assert_int_eq(r.error_kind, TOOL_E_ARGUMENT);
	ck_assert_str_eq(r.error, "Coordinates (1280, 10) are outside the screen (1280x720; x "
				  "0..1279, y 0..719)");
	tool_result_clear(&r);
	ck_assert_int_eq(
		test_call("computer", "{\"action\":\"left_click\",\"coordinate\":[5,-1]}", &r), 0);
	ck_assert_int_eq(r.error_kind, TOOL_E_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(r.error, "outside the screen"));
	tool_result_clear(&r);
	ck_assert_int_eq(
		test_call("computer", "{\"action\":\"zoom\",\"region\":[0,0,1281,10]}", &r), 0);
	ck_assert_int_eq(r.error_kind, TOOL_E_ARGUMENT);
	tool_result_clear(&r);
}
END_TEST

/* ---- a window of our own that records what it receives ---- */

typedef struct probe {
	Display *dpy;
	Window win;
} probe;

static probe probe_open(int x, int y, int w, int h, unsigned long pixel)
{
	probe p;
	XEvent ev;

	p.dpy = XOpenDisplay(xvfb.display);
	ck_assert_ptr_nonnull(p.dpy);
	p.win = XCreateSimpleWindow(p.dpy, DefaultRootWindow(p.dpy), x, y, (unsigned)w, (unsigned)h,
				    0, 0, pixel);
	XSelectInput(p.dpy, p.win,
		     KeyPressMask | KeyReleaseMask | ButtonPressMask | ButtonReleaseMask |
			     ExposureMask | StructureNotifyMask);
	XMapRaised(p.dpy, p.win);
	do
		XNextEvent(p.dpy, &ev);
	while (ev.type != Expose);
	XSetInputFocus(p.dpy, p.win, RevertToParent, CurrentTime);
	XSync(p.dpy, False);
	return p;
}

static void probe_close(probe *p)
{
	XDestroyWindow(p->dpy, p->win);
	XCloseDisplay(p->dpy);
}

/* Next event of type (within timeout_ms); keeps the keymap current on MappingNotify. */
static bool probe_next(probe *p, int type, XEvent *ev, int timeout_ms)
{
	double deadline = test_now_ms() + timeout_ms;

	while (test_now_ms() < deadline) {
		if (!XPending(p->dpy)) {
			usleep(2000);
			continue;
		}
		XNextEvent(p->dpy, ev);
		if (ev->type == MappingNotify)
			XRefreshKeyboardMapping(&ev->xmapping);
		else if (ev->type == type)
			return true;
	}
	return false;
}

/* take_screenshot's window argument: window_shown says whether a title contains it. */
START_TEST(screenshot_says_whether_a_window_is_shown)
{
	probe p;
	tool_result r;

	use_display();
	p = probe_open(10, 10, 50, 50, 0x00ff00);
	XStoreName(p.dpy, p.win, "ledger.ods - LibreOffice Calc");
	XSync(p.dpy, False);
	r = call_ok("take_screenshot", "{\"window\":\"ledger.ods\"}");
	ck_assert(sbx_json_get_bool(r.structured, "window_shown", false));
	tool_result_clear(&r);
	r = call_ok("take_screenshot", "{\"window\":\"other.ods\"}");
	ck_assert(!sbx_json_get_bool(r.structured, "window_shown", true));
	tool_result_clear(&r);
	r = call_ok("take_screenshot", NULL);
	ck_assert_ptr_null(sbx_json_get(r.structured, "window_shown"));
	tool_result_clear(&r);
	probe_close(&p);
}
END_TEST

typedef struct call_args {
	const char *tool, *args;
	tool_result result;
} call_args;

static void *call_thread(void *arg)
{
	call_args *c = arg;

	test_call(c->tool, c->args, &c->result);
	return NULL;
}

/*
 * Runs the tool on another thread while the probe reads its key presses
 * (modifier keys only with keep_modifiers), as a
 * live application would: characters typed through borrowed keycodes are
 * only right while the borrowed binding lasts.
 */
static size_t keys_from(probe *p, const char *tool, const char *args, bool keep_modifiers,
			KeySym *syms, unsigned *states, size_t max, size_t expect)
{
	call_args c = {tool, args, {0}};
	pthread_t t;
	size_t n = 0;
	XEvent ev;

	ck_assert_int_eq(pthread_create(&t, NULL, call_thread, &c), 0);
	/* Up to the expected count patiently, then briefly for any extra. */
	while (n < max && probe_next(p, KeyPress, &ev, n < expect ? 5000 : 300)) {
		char buf[16];
		KeySym sym = NoSymbol;

		XLookupString(&ev.xkey, buf, sizeof(buf), &sym, NULL);
		if (IsModifierKey(sym) && !keep_modifiers)
			continue;
		syms[n] = sym;
		states[n++] = ev.xkey.state;
	}
	pthread_join(t, NULL);
	ck_assert_msg(c.result.error_kind == TOOL_OK, "%s: %s", tool,
		      c.result.error ? c.result.error : "?");
	tool_result_clear(&c.result);
	return n;
}

START_TEST(typed_text_arrives_as_keysyms)
{
	KeySym syms[64];
	unsigned states[64];
	size_t n;

	use_display();
	probe p = probe_open(0, 0, 400, 300, 0xffffff);
	/* ASCII with shift, Latin-1 and characters the US keymap lacks. */
	static const KeySym want[] = {XK_H,	 XK_i,	    XK_space,  XK_eacute, 0x10020ac,
				      0x1000416, 0x1004e2d, XK_exclam, XK_Return};
	n = keys_from(&p, "type_text", "{\"text\":\"Hi é€Ж\\u4e2d!\\n\"}", false, syms, states, 64,
		      SBX_ELEMENTSOF(want));
	ck_assert_uint_eq(n, SBX_ELEMENTSOF(want));
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(syms[i] == want[i], "key %zu: got 0x%lx, want 0x%lx", i, syms[i],
			      want[i]);
	ck_assert(states[0] & ShiftMask);
	ck_assert(!(states[1] & ShiftMask));

	/* More distinct missing characters than there are spare keycodes. */
	n = keys_from(&p, "type_text", "{\"text\":\"АБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧ\"}", false, syms,
		      states, 64, 24);
	ck_assert_uint_eq(n, 24);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(syms[i] == 0x1000410 + i, "key %zu: got 0x%lx", i, syms[i]);
	probe_close(&p);
}
END_TEST

START_TEST(key_combos_carry_modifiers)
{
	KeySym syms[16];
	unsigned states[16];
	size_t n;

	use_display();
	probe p = probe_open(0, 0, 400, 300, 0xffffff);
	n = keys_from(&p, "key_press", "{\"key\":\"ctrl+s\"}", true, syms, states, 16, 2);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(syms[0], XK_Control_L);
	ck_assert_uint_eq(syms[1], XK_s);
	ck_assert(states[1] & ControlMask);

	n = keys_from(&p, "computer", "{\"action\":\"key\",\"text\":\"shift+Tab Return\"}", true,
		      syms, states, 16, 3);
	ck_assert_uint_eq(n, 3);
	ck_assert(syms[1] == XK_Tab || syms[1] == XK_ISO_Left_Tab);
	ck_assert(states[1] & ShiftMask);
	ck_assert_uint_eq(syms[2], XK_Return);
	ck_assert(!(states[2] & ShiftMask));

	n = keys_from(&p, "key_press", "{\"key\":\"alt+F4\"}", true, syms, states, 16, 2);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(syms[1], XK_F4);
	ck_assert(states[1] & Mod1Mask);
	probe_close(&p);
}
END_TEST

static int count_buttons(probe *p, unsigned button, int *x, int *y)
{
	XEvent ev;
	int n = 0;

	while (probe_next(p, ButtonPress, &ev, 300)) {
		ck_assert_uint_eq(ev.xbutton.button, button);
		*x = ev.xbutton.x;
		*y = ev.xbutton.y;
		n++;
	}
	return n;
}

/* The next event of type (a button press or release) comes within a second, at (x, y). */
static void expect_button_at(probe *p, int type, int x, int y)
{
	XEvent ev;

	ck_assert(probe_next(p, type, &ev, 1000));
	ck_assert_int_eq(ev.xbutton.x, x);
	ck_assert_int_eq(ev.xbutton.y, y);
}

START_TEST(clicks_and_scrolls_arrive)
{
	int x = -1, y = -1;

	use_display();
	probe p = probe_open(100, 50, 400, 300, 0xffffff);
	act("click", "{\"x\":150,\"y\":80}");
	ck_assert_int_eq(count_buttons(&p, 1, &x, &y), 1);
	ck_assert_int_eq(x, 50);
	ck_assert_int_eq(y, 30);

	act("click", "{\"x\":151,\"y\":81,\"button\":3}");
	ck_assert_int_eq(count_buttons(&p, 3, &x, &y), 1);
	act("double_click", "{\"x\":151,\"y\":81}");
	ck_assert_int_eq(count_buttons(&p, 1, &x, &y), 2);
	act("right_click", "{\"x\":152,\"y\":82}");
	ck_assert_int_eq(count_buttons(&p, 3, &x, &y), 1);
	act("scroll", "{\"x\":200,\"y\":100,\"direction\":\"down\",\"amount\":4}");
	ck_assert_int_eq(count_buttons(&p, 5, &x, &y), 4);
	ck_assert_int_eq(x, 100);
	ck_assert_int_eq(y, 50);

	tool_result r =
		call_ok("computer", "{\"action\":\"triple_click\",\"coordinate\":[160,90]}");
	ck_assert_int_eq(count_buttons(&p, 1, &x, &y), 3);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "x", 0), 160);
	tool_result_clear(&r);
	act("computer", "{\"action\":\"scroll\",\"coordinate\":[160,90],"
			"\"scroll_direction\":\"left\",\"scroll_amount\":2}");
	ck_assert_int_eq(count_buttons(&p, 6, &x, &y), 2);
	act("computer", "{\"action\":\"middle_click\",\"coordinate\":[161,91]}");
	ck_assert_int_eq(count_buttons(&p, 2, &x, &y), 1);

	/* A drag is a press at the start and a release at the end. */
	act("drag", "{\"start_x\":110,\"start_y\":60,\"end_x\":300,\"end_y\":200}");
	expect_button_at(&p, ButtonPress, 10, 10);
	expect_button_at(&p, ButtonRelease, 200, 150);
	probe_close(&p);
}
END_TEST

START_TEST(screenshot_sees_colours_and_zoom_crops)
{
	uint32_t w, h;
	uint8_t *rgb;

	use_display();
	probe p = probe_open(200, 100, 300, 200, 0xff8000); /* orange */
	tool_result r = call_ok("take_screenshot", NULL);
	decode_screenshot(r.image_png_b64, &w, &h, &rgb);
	const uint8_t *px = rgb + ((size_t)150 * w + 250) * 3;
	ck_assert_uint_eq(px[0], 0xff);
	ck_assert_uint_eq(px[1], 0x80);
	ck_assert_uint_eq(px[2], 0x00);
	free(rgb);
	tool_result_clear(&r);

	r = call_ok("computer", "{\"action\":\"zoom\",\"region\":[150,80,350,180]}");
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "width", 0), 200);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "height", 0), 100);
	ck_assert_ptr_null(sbx_json_get(r.structured, "image_base64"));
	decode_screenshot(r.image_png_b64, &w, &h, &rgb);
	ck_assert_uint_eq(w, 200);
	ck_assert_uint_eq(h, 100);
	ck_assert_uint_eq(rgb[0], 0);	       /* (150,80) is the black root window */
	px = rgb + ((size_t)99 * w + 199) * 3; /* (349,179) is inside the window */
	ck_assert_uint_eq(px[0], 0xff);
	ck_assert_uint_eq(px[1], 0x80);
	free(rgb);
	tool_result_clear(&r);

	r = call_ok("computer", "{\"action\":\"screenshot\"}");
	ck_assert_str_eq(sbx_json_get_string(r.structured, "action", ""), "screenshot");
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "width", 0), 1280);
	ck_assert_ptr_nonnull(r.image_png_b64);
	tool_result_clear(&r);
	probe_close(&p);
}
END_TEST

START_TEST(screenshot_latency)
{
	const int rounds = 20;
	double t0, total;

	use_display();
	probe p = probe_open(0, 0, 1280, 720, 0xf0f0f0);
	act("take_screenshot", NULL); /* connect first */
	t0 = test_now_ms();
	for (int i = 0; i < rounds; i++)
		act("take_screenshot", NULL);
	total = test_now_ms() - t0;
	printf("take_screenshot 1280x720: %.1f ms mean over %d calls\n", total / rounds, rounds);
	ck_assert_msg(total / rounds < 1000, "screenshot took %.0f ms", total / rounds);
	probe_close(&p);
}
END_TEST

START_TEST(hold_key_and_mouse_buttons)
{
	KeySym syms[8];
	unsigned states[8];
	XEvent ev;

	use_display();
	probe p = probe_open(0, 0, 400, 300, 0xffffff);
	size_t n = keys_from(&p, "computer",
			     "{\"action\":\"hold_key\",\"text\":\"shift\",\"duration\":0.2}", true,
			     syms, states, 8, 1);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(syms[0], XK_Shift_L);

	act("computer", "{\"action\":\"left_mouse_down\",\"coordinate\":[10,10]}");
	ck_assert(probe_next(&p, ButtonPress, &ev, 1000));
	act("computer", "{\"action\":\"mouse_move\",\"coordinate\":[50,40]}");
	act("computer", "{\"action\":\"left_mouse_up\"}");
	expect_button_at(&p, ButtonRelease, 50, 40);

	act("computer", "{\"action\":\"left_click\",\"coordinate\":[20,20],\"text\":\"ctrl\"}");
	ck_assert(probe_next(&p, ButtonPress, &ev, 1000));
	ck_assert(ev.xbutton.state & ControlMask);

	act("computer", "{\"action\":\"left_click_drag\",\"start_coordinate\":[30,30],"
			"\"coordinate\":[60,70]}");
	ck_assert(probe_next(&p, ButtonPress, &ev, 1000));
	ck_assert_int_eq(ev.xbutton.x, 30);
	expect_button_at(&p, ButtonRelease, 60, 70);
	probe_close(&p);
}
END_TEST

/* Its own server, so killing it disturbs nothing else. */
START_TEST(server_death_is_an_error_not_a_crash)
{
	test_xvfb own;
	tool_result r;

	ck_assert_int_eq(test_xvfb_start(&own, 640, 480), 0);
	test_display = own.display;
	r = call_ok("take_screenshot", NULL);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "width", 0), 640);
	tool_result_clear(&r);

	test_xvfb_stop(&own);
	ck_assert_int_eq(test_call("take_screenshot", NULL, &r), 0);
	ck_assert_int_eq(r.error_kind, TOOL_E_UNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(r.error, "No display available"));
	tool_result_clear(&r);
	ck_assert_int_eq(test_call("mouse_move", "{\"x\":1,\"y\":1}", &r), 0);
	ck_assert_int_eq(r.error_kind, TOOL_E_UNAVAILABLE);
	tool_result_clear(&r);

	/* A new server on the shared display works again with a fresh connection. */
	test_display = xvfb.display;
	r = call_ok("take_screenshot", NULL);
	ck_assert_int_eq((int)sbx_json_get_number(r.structured, "width", 0), 1280);
	tool_result_clear(&r);
	gui_session_close_all();
}
END_TEST

static void add_cases(Suite *s)
{
	TCase *tc =
		SBX_TEST_CASE(s, "xvfb", NULL, NULL, 60, screenshot_is_a_1280x720_png,
			      screenshot_says_whether_a_window_is_shown, pointer_moves_where_asked,
			      coordinates_off_screen_are_refused, typed_text_arrives_as_keysyms,
			      key_combos_carry_modifiers, clicks_and_scrolls_arrive,
			      screenshot_sees_colours_and_zoom_crops, hold_key_and_mouse_buttons,
			      screenshot_latency, server_death_is_an_error_not_a_crash);

	tcase_add_unchecked_fixture(tc, xvfb_setup, xvfb_teardown);
}

SBX_TEST_MAIN("gui-xvfb", add_cases)
