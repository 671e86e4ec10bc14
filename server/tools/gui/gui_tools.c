/* SPDX-License-Identifier: MIT */
/*
 * The flat computer-use tools of the reference contract: take_screenshot,
 * click, double_click, right_click, type_text, key_press, mouse_move, drag,
 * scroll, get_cursor_position. (The Anthropic-style `computer` tool is in
 * computer.c.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gui.h"
#include "input.h"
#include "screen_capture.h"
#include "sbx/clock.h"
#include "keyspec.h"
#include "reload.h"
#include "shot.h"
#include "tool-util.h"

#define GUI_COORD_MAX	      100000L
#define GUI_SCROLL_MAX	      50L
#define GUI_SHOW_SAVED_MAX_MS 15000 /* for Calc to come back on the saved file */

/* JSON Schema fragments. */
#define P_X                                                                                        \
	"\"x\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Pixels from the left edge\"}"
#define P_Y                                                                                        \
	"\"y\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Pixels from the top edge\"}"
#define OUT_XY                                                                                     \
	"{\"type\":\"object\",\"properties\":{\"success\":{\"type\":\"boolean\"},"                 \
	"\"x\":{\"type\":\"integer\"},\"y\":{\"type\":\"integer\"}},"                              \
	"\"required\":[\"success\",\"x\",\"y\"]}"
#define IN_XY                                                                                      \
	"{\"type\":\"object\",\"properties\":{" P_X "," P_Y "},\"required\":[\"x\",\"y\"],"        \
	"\"additionalProperties\":false}"

static const char *const keys_none[] = {NULL};
static const char *const keys_xy[] = {"x", "y", NULL};

/* Reads required x, y (checked against the screen later, once it is open). */
static int arg_point(const cJSON *args, long *x, long *y, tool_result *out)
{
	if (gui__arg_int(args, "x", true, 0, -GUI_COORD_MAX, GUI_COORD_MAX, x, out) < 0 ||
	    gui__arg_int(args, "y", true, 0, -GUI_COORD_MAX, GUI_COORD_MAX, y, out) < 0)
		return -EINVAL;
	return 0;
}

static int result_xy(tool_result *out, long x, long y)
{
	cJSON *res = gui__result(out);

	if (res && gui__put_bool(out, res, "success", true) &&
	    gui__put_num(out, res, "x", (double)x))
		gui__put_num(out, res, "y", (double)y);
	return 0;
}

/*
 * show_saved: Calc is started again on the saved file first when the file
 * changed after Calc opened it (the host asks this for the final shot, so
 * the picture is the result even when the agent edited through the tools).
 */
static int tool_take_screenshot(tool_context *ctx, const cJSON *args, tool_result *out)
{
	static const char *const keys[] = {"show_saved", "window", NULL};
	const cJSON *show = cJSON_GetObjectItemCaseSensitive(args, "show_saved");
	const cJSON *window = cJSON_GetObjectItemCaseSensitive(args, "window");
	const char *open = getenv("SANDBOX_OPEN");
	sbx_error err = SBX_ERROR_INIT;
	bool reloaded = false;
	gui_session *s;

	if (gui__args_check(args, keys, out) < 0)
		return 0;
	if (show && !cJSON_IsBool(show))
		return tool_fail(out, TOOL_E_ARGUMENT, "show_saved must be a boolean");
	if (window && (!cJSON_IsString(window) || !*window->valuestring))
		return tool_fail(out, TOOL_E_ARGUMENT, "window must be a non-empty string");
	if (cJSON_IsTrue(show) && open && gui_office_reload(open, &reloaded, &err) < 0)
		sbx_log_warning("take_screenshot: show_saved: %s", sbx_error_message(&err));
	if (gui__begin(ctx, &s, out) < 0)
		return 0;
	if (reloaded) {
		const char *base = strrchr(open, '/') ? strrchr(open, '/') + 1 : open;
		double until = sbx_now_msf() + GUI_SHOW_SAVED_MAX_MS;
		gui_capture cap = {0};

		while (!gui_window_named(s, base) && sbx_now_msf() < until)
			sbx_sleep_ms(100);
		/* The window is titled before it is drawn: wait for the screen to settle. */
		if (gui_capture_settled(s, 700, 5000, &cap, &err) < 0)
			sbx_error_clear(&err);
		gui_capture_clear(&cap);
	}
	gui__screenshot(s, 0, 0, s->width, s->height, true, out);
	if (out->structured)
		gui__put_bool(out, out->structured, "reloaded", reloaded);
	if (out->structured && window)
		gui__put_bool(out, out->structured, "window_shown",
			      gui_window_named(s, window->valuestring));
	gui__end(s);
	return 0;
}

static int click(tool_context *ctx, const cJSON *args, tool_result *out, long button, int count,
		 bool button_arg)
{
	static const char *const keys_click[] = {"x", "y", "button", NULL};
	sbx_error err = SBX_ERROR_INIT;
	gui_session *s;
	long x, y;
	int r;

	if (gui__args_check(args, button_arg ? keys_click : keys_xy, out) < 0 ||
	    arg_point(args, &x, &y, out) < 0 ||
	    (button_arg && gui__arg_int(args, "button", false, 1, 1, 3, &button, out) < 0))
		return 0;
	if (gui__begin(ctx, &s, out) < 0)
		return 0;
	if (gui__check_point(s, x, y, out) < 0)
		goto done;
	r = gui_input_move(s, (int)x, (int)y, &err);
	if (r >= 0)
		r = gui_input_click(s, (unsigned)button, count, NULL, &err);
	if (r < 0)
		gui__fail(out, r, &err);
	else
		result_xy(out, x, y);
done:
	gui__end(s);
	return 0;
}

static int tool_click(tool_context *ctx, const cJSON *args, tool_result *out)
{
	return click(ctx, args, out, 1, 1, true);
}

static int tool_double_click(tool_context *ctx, const cJSON *args, tool_result *out)
{
	return click(ctx, args, out, 1, 2, false);
}

static int tool_right_click(tool_context *ctx, const cJSON *args, tool_result *out)
{
	return click(ctx, args, out, 3, 1, false);
}

static int tool_mouse_move(tool_context *ctx, const cJSON *args, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	gui_session *s;
	long x, y;
	int r;

	if (gui__args_check(args, keys_xy, out) < 0 || arg_point(args, &x, &y, out) < 0 ||
	    gui__begin(ctx, &s, out) < 0)
		return 0;
	if (gui__check_point(s, x, y, out) >= 0) {
		r = gui_input_move(s, (int)x, (int)y, &err);
		if (r < 0)
			gui__fail(out, r, &err);
		else
			result_xy(out, x, y);
	}
	gui__end(s);
	return 0;
}

static int tool_get_cursor_position(tool_context *ctx, const cJSON *args, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	gui_session *s;
	int x, y, r;

	if (gui__args_check(args, keys_none, out) < 0 || gui__begin(ctx, &s, out) < 0)
		return 0;
	r = gui_input_pointer(s, &x, &y, &err);
	cJSON *res = gui__end_result(s, r, &err, out);
	if (res && gui__put_num(out, res, "x", x))
		gui__put_num(out, res, "y", y);
	return 0;
}

static int tool_type_text(tool_context *ctx, const cJSON *args, tool_result *out)
{
	static const char *const keys[] = {"text", NULL};
	sbx_error err = SBX_ERROR_INIT;
	const char *text;
	gui_session *s;
	int r;

	if (gui__args_check(args, keys, out) < 0 ||
	    gui__arg_string(args, "text", true, GUI_TYPE_MAX_CHARS * 4, &text, out) < 0 ||
	    gui__begin(ctx, &s, out) < 0)
		return 0;
	r = gui_input_type(s, text, &err);
	cJSON *res = gui__end_result(s, r, &err, out);
	if (res && gui__put_bool(out, res, "success", true))
		gui__put_str(out, res, "text_typed", text);
	return 0;
}

static int tool_key_press(tool_context *ctx, const cJSON *args, tool_result *out)
{
	static const char *const keys[] = {"key", NULL};
	sbx_error err = SBX_ERROR_INIT;
	gui_keyseq seq;
	const char *key;
	gui_session *s;
	int r;

	if (gui__args_check(args, keys, out) < 0 ||
	    gui__arg_string(args, "key", true, GUI_KEYSPEC_MAX_LEN, &key, out) < 0)
		return 0;
	r = gui_keyspec_parse(key, &seq, &err);
	if (r < 0)
		return gui__fail(out, r, &err), 0;
	if (gui__begin(ctx, &s, out) < 0)
		return 0;
	r = gui_input_keys(s, &seq, &err);
	cJSON *res = gui__end_result(s, r, &err, out);
	if (res && gui__put_bool(out, res, "success", true))
		gui__put_str(out, res, "key", key);
	return 0;
}

static int tool_drag(tool_context *ctx, const cJSON *args, tool_result *out)
{
	static const char *const keys[] = {"start_x", "start_y", "end_x", "end_y", NULL};
	sbx_error err = SBX_ERROR_INIT;
	long v[4];
	gui_session *s;
	int r;

	if (gui__args_check(args, keys, out) < 0)
		return 0;
	for (int i = 0; i < 4; i++)
		if (gui__arg_int(args, keys[i], true, 0, -GUI_COORD_MAX, GUI_COORD_MAX, &v[i],
				 out) < 0)
			return 0;
	if (gui__begin(ctx, &s, out) < 0)
		return 0;
	if (gui__check_point(s, v[0], v[1], out) < 0 || gui__check_point(s, v[2], v[3], out) < 0) {
		gui__end(s);
		return 0;
	}
	r = gui_input_drag(s, (int)v[0], (int)v[1], (int)v[2], (int)v[3], &err);
	cJSON *res = gui__end_result(s, r, &err, out);
	if (!res || !gui__put_bool(out, res, "success", true))
		return 0;
	for (int i = 0; i < 4; i++)
		if (!gui__put_num(out, res, keys[i], (double)v[i]))
			return 0;
	return 0;
}

int gui__scroll_button(const char *direction)
{
	static const char *const dirs[] = {"up", "down", "left", "right"};

	for (int i = 0; i < 4; i++)
		if (direction && strcmp(direction, dirs[i]) == 0)
			return 4 + i;
	return -1;
}

static int tool_scroll(tool_context *ctx, const cJSON *args, tool_result *out)
{
	static const char *const keys[] = {"x", "y", "direction", "amount", NULL};
	sbx_error err = SBX_ERROR_INIT;
	const char *direction;
	gui_session *s;
	long x, y, amount;
	int button, r;

	if (gui__args_check(args, keys, out) < 0 || arg_point(args, &x, &y, out) < 0 ||
	    gui__arg_string(args, "direction", true, 16, &direction, out) < 0 ||
	    gui__arg_int(args, "amount", false, 3, 1, GUI_SCROLL_MAX, &amount, out) < 0)
		return 0;
	button = gui__scroll_button(direction);
	if (button < 0)
		return tool_fail(out, TOOL_E_ARGUMENT,
				 "Argument 'direction' must be up, down, left or right, got '%s'",
				 direction);
	if (gui__begin(ctx, &s, out) < 0)
		return 0;
	if (gui__check_point(s, x, y, out) < 0) {
		gui__end(s);
		return 0;
	}
	r = gui_input_move(s, (int)x, (int)y, &err);
	if (r >= 0)
		r = gui_input_click(s, (unsigned)button, (int)amount, NULL, &err);
	cJSON *res = gui__end_result(s, r, &err, out);
	if (res && gui__put_bool(out, res, "success", true) && gui__put_num(out, res, "x", x) &&
	    gui__put_num(out, res, "y", y) && gui__put_str(out, res, "direction", direction))
		gui__put_num(out, res, "amount", amount);
	return 0;
}

static const tool_def gui_tool_table[] = {
	{
		"take_screenshot",
		"Take screenshot",
		"Capture the whole screen as a PNG image (also returned as image_base64).",
		"{\"type\":\"object\",\"properties\":{\"show_saved\":{\"type\":\"boolean\","
		"\"description\":\"first reopen the document from disk when it changed since "
		"LibreOffice opened it\"},\"window\":{\"type\":\"string\",\"minLength\":1,"
		"\"description\":\"also say (window_shown) whether a window's title contains "
		"this text, e.g. the document's file name\"}},\"additionalProperties\":false}",
		"{\"type\":\"object\",\"properties\":{\"image_base64\":{\"type\":\"string\"},"
		"\"width\":{\"type\":\"integer\"},\"height\":{\"type\":\"integer\"},"
		"\"timestamp\":{\"type\":\"string\"},\"window_shown\":{\"type\":\"boolean\"}},"
		"\"required\":[\"image_base64\",\"width\",\"height\",\"timestamp\"]}",
		TOOL_READ_ONLY,
		tool_take_screenshot,
	},
	{
		"click",
		"Click",
		"Move the mouse to (x, y) and click a button: 1 left (default), 2 middle, 3 right.",
		"{\"type\":\"object\",\"properties\":{" P_X "," P_Y ",\"button\":{\"type\":"
		"\"integer\",\"enum\":[1,2,3],\"default\":1,\"description\":\"1 left, 2 middle, "
		"3 right\"}},\"required\":[\"x\",\"y\"],\"additionalProperties\":false}",
		OUT_XY,
		TOOL_DESTRUCTIVE,
		tool_click,
	},
	{
		"double_click",
		"Double-click",
		"Move the mouse to (x, y) and double-click the left button.",
		IN_XY,
		OUT_XY,
		TOOL_DESTRUCTIVE,
		tool_double_click,
	},
	{
		"right_click",
		"Right-click",
		"Move the mouse to (x, y) and click the right button (context menus).",
		IN_XY,
		OUT_XY,
		TOOL_DESTRUCTIVE,
		tool_right_click,
	},
	{
		"type_text",
		"Type text",
		"Type text on the keyboard at the focus. Any Unicode text; newline is Return, tab "
		"is Tab.",
		"{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"maxLength\":"
		"20000}},\"required\":[\"text\"],\"additionalProperties\":false}",
		"{\"type\":\"object\",\"properties\":{\"success\":{\"type\":\"boolean\"},"
		"\"text_typed\":{\"type\":\"string\"}},\"required\":[\"success\",\"text_typed\"]}",
		TOOL_DESTRUCTIVE,
		tool_type_text,
	},
	{
		"key_press",
		"Press keys",
		"Press a key or key combination in xdotool syntax: \"Return\", \"Tab\", "
		"\"ctrl+s\", "
		"\"alt+F4\", \"shift+Tab\", \"ctrl+shift+t\"; several combos separated by spaces.",
		"{\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\",\"minLength\":1,"
		"\"maxLength\":256}},\"required\":[\"key\"],\"additionalProperties\":false}",
		"{\"type\":\"object\",\"properties\":{\"success\":{\"type\":\"boolean\"},"
		"\"key\":{\"type\":\"string\"}},\"required\":[\"success\",\"key\"]}",
		TOOL_DESTRUCTIVE,
		tool_key_press,
	},
	{
		"mouse_move",
		"Move mouse",
		"Move the mouse pointer to (x, y).",
		IN_XY,
		OUT_XY,
		TOOL_IDEMPOTENT,
		tool_mouse_move,
	},
	{
		"drag",
		"Drag",
		"Drag with the left button held from (start_x, start_y) to (end_x, end_y).",
		"{\"type\":\"object\",\"properties\":{\"start_x\":{\"type\":\"integer\","
		"\"minimum\":0},"
		"\"start_y\":{\"type\":\"integer\",\"minimum\":0},\"end_x\":{\"type\":\"integer\","
		"\"minimum\":0},\"end_y\":{\"type\":\"integer\",\"minimum\":0}},\"required\":"
		"[\"start_x\",\"start_y\",\"end_x\",\"end_y\"],\"additionalProperties\":false}",
		"{\"type\":\"object\",\"properties\":{\"success\":{\"type\":\"boolean\"},"
		"\"start_x\":{\"type\":\"integer\"},\"start_y\":{\"type\":\"integer\"},"
		"\"end_x\":{\"type\":\"integer\"},\"end_y\":{\"type\":\"integer\"}},"
		"\"required\":[\"success\",\"start_x\",\"start_y\",\"end_x\",\"end_y\"]}",
		TOOL_DESTRUCTIVE,
		tool_drag,
	},
	{
		"scroll",
		"Scroll",
		"Scroll the mouse wheel at (x, y): direction up, down, left or right, amount "
		"clicks "
		"(default 3).",
		"{\"type\":\"object\",\"properties\":{" P_X "," P_Y ",\"direction\":{\"type\":"
		"\"string\",\"enum\":[\"up\",\"down\",\"left\",\"right\"]},\"amount\":{\"type\":"
		"\"integer\",\"minimum\":1,\"maximum\":50,\"default\":3}},\"required\":[\"x\","
		"\"y\","
		"\"direction\"],\"additionalProperties\":false}",
		"{\"type\":\"object\",\"properties\":{\"success\":{\"type\":\"boolean\"},"
		"\"x\":{\"type\":\"integer\"},\"y\":{\"type\":\"integer\"},\"direction\":{\"type\":"
		"\"string\"},\"amount\":{\"type\":\"integer\"}},\"required\":[\"success\",\"x\","
		"\"y\",\"direction\",\"amount\"]}",
		0,
		tool_scroll,
	},
	{
		"get_cursor_position",
		"Cursor position",
		"Where the mouse pointer is, in screen pixels.",
		TOOL_NO_ARGS,
		"{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"},\"y\":{\"type\":"
		"\"integer\"}},\"required\":[\"x\",\"y\"]}",
		TOOL_READ_ONLY | TOOL_IDEMPOTENT,
		tool_get_cursor_position,
	},
	{
		"computer",
		"Computer",
		"Use the mouse and keyboard and take screenshots, with the actions and parameters "
		"of Anthropic's computer-use tool (screenshot, left_click, type, key, scroll, "
		"zoom, "
		"...). The screen is the sandbox's X display; coordinates are pixels.",
		gui__computer_input_schema,
		gui__computer_output_schema,
		TOOL_DESTRUCTIVE,
		gui__computer,
	},
};

const tool_def *gui_tools(size_t *n_out)
{
	*n_out = SBX_ELEMENTSOF(gui_tool_table);
	return gui_tool_table;
}
