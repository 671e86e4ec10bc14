/* SPDX-License-Identifier: MIT */
/*
 * One `computer` tool whose actions and parameters are those of Anthropic's
 * computer-use tool, so agents written for it work unchanged. Parameters an
 * action does not take are refused, as the reference implementation does,
 * so a confused agent learns at once.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "input.h"
#include "keyspec.h"
#include "sbx/clock.h"
#include "shot.h"
#include "tool-util.h"

#define MAX_DURATION 100.0 /* seconds, hold_key and wait (as the reference) */
#define MAX_SCROLL   50L

enum {
	P_COORD = 1u << 0,
	P_START = 1u << 1,
	P_TEXT = 1u << 2,
	P_SCROLL = 1u << 3, /* scroll_direction, scroll_amount */
	P_DURATION = 1u << 4,
	P_REGION = 1u << 5,
};

typedef enum action {
	A_SCREENSHOT,
	A_LEFT_CLICK,
	A_RIGHT_CLICK,
	A_MIDDLE_CLICK,
	A_DOUBLE_CLICK,
	A_TRIPLE_CLICK,
	A_MOUSE_MOVE,
	A_DRAG,
	A_MOUSE_DOWN,
	A_MOUSE_UP,
	A_KEY,
	A_TYPE,
	A_SCROLL,
	A_HOLD_KEY,
	A_WAIT,
	A_CURSOR,
	A_ZOOM,
} action;

static const struct {
	const char *name;
	action act;
	unsigned params;
} actions[] = {
	{"screenshot", A_SCREENSHOT, 0},
	{"left_click", A_LEFT_CLICK, P_COORD | P_TEXT},
	{"right_click", A_RIGHT_CLICK, P_COORD | P_TEXT},
	{"middle_click", A_MIDDLE_CLICK, P_COORD | P_TEXT},
	{"double_click", A_DOUBLE_CLICK, P_COORD | P_TEXT},
	{"triple_click", A_TRIPLE_CLICK, P_COORD | P_TEXT},
	{"mouse_move", A_MOUSE_MOVE, P_COORD},
	{"left_click_drag", A_DRAG, P_START | P_COORD},
	{"left_mouse_down", A_MOUSE_DOWN, P_COORD},
	{"left_mouse_up", A_MOUSE_UP, P_COORD},
	{"key", A_KEY, P_TEXT},
	{"type", A_TYPE, P_TEXT},
	{"scroll", A_SCROLL, P_COORD | P_SCROLL | P_TEXT},
	{"hold_key", A_HOLD_KEY, P_TEXT | P_DURATION},
	{"wait", A_WAIT, P_DURATION},
	{"cursor_position", A_CURSOR, 0},
	{"zoom", A_ZOOM, P_REGION},
};

static const struct {
	const char *key;
	unsigned bit;
} param_names[] = {
	{"coordinate", P_COORD},	{"start_coordinate", P_START}, {"text", P_TEXT},
	{"scroll_direction", P_SCROLL}, {"scroll_amount", P_SCROLL},   {"duration", P_DURATION},
	{"region", P_REGION},
};

#define COORD_SCHEMA                                                                               \
	"{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":0},\"minItems\":2,"       \
	"\"maxItems\":2"

const char gui__computer_input_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"action\":{\"type\":\"string\",\"enum\":[\"screenshot\",\"left_click\",\"right_click\","
	"\"middle_click\",\"double_click\",\"triple_click\",\"mouse_move\",\"left_click_drag\","
	"\"left_mouse_down\",\"left_mouse_up\",\"key\",\"type\",\"scroll\",\"hold_key\",\"wait\","
	"\"cursor_position\",\"zoom\"]},"
	"\"coordinate\":" COORD_SCHEMA ",\"description\":\"[x, y] in screen pixels: where to "
	"click, move, scroll, or where a drag ends\"},"
	"\"start_coordinate\":" COORD_SCHEMA ",\"description\":\"[x, y] where left_click_drag "
	"starts\"},"
	"\"text\":{\"type\":\"string\",\"maxLength\":80000,\"description\":\"type: the text; key, "
	"hold_key: keys in xdotool syntax (ctrl+s, Return); clicks and scroll: modifier keys to "
	"hold\"},"
	"\"scroll_direction\":{\"type\":\"string\",\"enum\":[\"up\",\"down\",\"left\",\"right\"]},"
	"\"scroll_amount\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":50},"
	"\"duration\":{\"type\":\"number\",\"minimum\":0,\"maximum\":100,\"description\":\"seconds "
	"(hold_key, wait)\"},"
	"\"region\":{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":0},"
	"\"minItems\":4,\"maxItems\":4,\"description\":\"zoom: [x1, y1, x2, y2], top-left and "
	"bottom-right corners\"}"
	"},\"required\":[\"action\"],\"additionalProperties\":false}";

const char gui__computer_output_schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"action\":{\"type\":\"string\"},\"success\":{\"type\":\"boolean\"},"
	"\"x\":{\"type\":\"integer\"},\"y\":{\"type\":\"integer\"},"
	"\"width\":{\"type\":\"integer\"},\"height\":{\"type\":\"integer\"},"
	"\"timestamp\":{\"type\":\"string\"},\"text\":{\"type\":\"string\"}"
	"},\"required\":[\"action\",\"success\"]}";

/* Sleeps in short slices so a cancelled call stops waiting. */
static void sleep_seconds(tool_context *ctx, double s)
{
	double end = sbx_now_msf() + s * 1e3;

	for (;;) {
		double left = end - sbx_now_msf();

		if (left <= 0 || gui__cancelled(ctx))
			return;
		sbx_sleep_ms(left < 50 ? left : 50);
	}
}

typedef struct params {
	long coord[2], start[2], region[4];
	bool has_coord, has_start, has_region;
	const char *text;
	const char *direction;
	long amount;
	double duration;
} params;

static int check_params(const cJSON *args, unsigned allowed, const char *name, tool_result *out)
{
	for (size_t i = 0; i < SBX_ELEMENTSOF(param_names); i++)
		if (!(allowed & param_names[i].bit) &&
		    !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(args, param_names[i].key)) &&
		    cJSON_GetObjectItemCaseSensitive(args, param_names[i].key)) {
			tool_fail(out, TOOL_E_ARGUMENT, "%s is not accepted for action '%s'",
				  param_names[i].key, name);
			return -EINVAL;
		}
	return 0;
}

static int read_params(const cJSON *args, action act, params *p, tool_result *out)
{
	bool needs_text = act == A_KEY || act == A_TYPE || act == A_HOLD_KEY;
	bool needs_coord = act == A_MOUSE_MOVE || act == A_DRAG;

	if (gui__arg_ints(args, "coordinate", needs_coord, p->coord, 2, &p->has_coord, out) < 0 ||
	    gui__arg_ints(args, "start_coordinate", false, p->start, 2, &p->has_start, out) < 0 ||
	    gui__arg_ints(args, "region", act == A_ZOOM, p->region, 4, &p->has_region, out) < 0 ||
	    gui__arg_string(args, "text", needs_text,
			    act == A_TYPE ? GUI_TYPE_MAX_CHARS * 4u : GUI_KEYSPEC_MAX_LEN, &p->text,
			    out) < 0 ||
	    gui__arg_string(args, "scroll_direction", act == A_SCROLL, 16, &p->direction, out) <
		    0 ||
	    gui__arg_int(args, "scroll_amount", false, 3, 0, MAX_SCROLL, &p->amount, out) < 0 ||
	    gui__arg_double(args, "duration", act == A_HOLD_KEY || act == A_WAIT, 0, 0,
			    MAX_DURATION, &p->duration, out) < 0)
		return -EINVAL;
	if (needs_text && act != A_TYPE && !*p->text) {
		tool_fail(out, TOOL_E_ARGUMENT, "text must name a key for action '%s'",
			  act == A_KEY ? "key" : "hold_key");
		return -EINVAL;
	}
	return 0;
}

static bool finish(tool_result *out, const char *name, cJSON **res)
{
	*res = out->structured ? out->structured : gui__result(out);
	return *res && gui__put_str(out, *res, "action", name) &&
	       gui__put_bool(out, *res, "success", true);
}

/* Clicks and scrolls: optional coordinate, optional modifier keys held in text. */
static int do_click(gui_session *s, const params *p, unsigned button, int count, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	gui_keyseq mods;
	int r;

	if (p->text && *p->text) {
		r = gui_keyspec_parse(p->text, &mods, &err);
		if (r >= 0 && mods.n != 1)
			r = sbx_error_set(&err, -EINVAL, "text must be one key combination here");
		if (r < 0)
			return gui__fail(out, r, &err);
	} else
		mods.n = 0;
	if (p->has_coord) {
		if (gui__check_point(s, p->coord[0], p->coord[1], out) < 0)
			return -ERANGE;
		r = gui_input_move(s, (int)p->coord[0], (int)p->coord[1], &err);
		if (r < 0)
			return gui__fail(out, r, &err);
	}
	if (count > 0) {
		r = gui_input_click(s, button, count, mods.n ? &mods.combos[0] : NULL, &err);
		if (r < 0)
			return gui__fail(out, r, &err);
	}
	return 0;
}

static int put_pointer(gui_session *s, cJSON *res, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	int x, y, r = gui_input_pointer(s, &x, &y, &err);

	if (r < 0)
		return gui__fail(out, r, &err);
	if (!gui__put_num(out, res, "x", x) || !gui__put_num(out, res, "y", y))
		return -ENOMEM;
	return 0;
}

/* The X button and click count of each pointer action (mouse_move: a move, no click). */
static const struct {
	unsigned button;
	int count;
} clicks[] = {
	[A_LEFT_CLICK] = {1, 1},   [A_RIGHT_CLICK] = {3, 1},  [A_MIDDLE_CLICK] = {2, 1},
	[A_DOUBLE_CLICK] = {1, 2}, [A_TRIPLE_CLICK] = {1, 3}, [A_MOUSE_MOVE] = {1, 0},
};

static int run_action(tool_context *ctx, gui_session *s, action act, const char *name,
		      const params *p, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	gui_keyseq seq;
	cJSON *res;
	int r = 0;

	switch (act) {
	case A_SCREENSHOT:
		r = gui__screenshot(s, 0, 0, s->width, s->height, false, out);
		break;
	case A_ZOOM: {
		const long *g = p->region;

		if (g[0] >= g[2] || g[1] >= g[3] || g[0] < 0 || g[1] < 0 || g[2] > s->width ||
		    g[3] > s->height)
			return tool_fail(out, TOOL_E_ARGUMENT,
					 "region [%ld, %ld, %ld, %ld] must satisfy 0 <= x1 < x2 <= "
					 "%d and 0 <= y1 < y2 <= %d",
					 g[0], g[1], g[2], g[3], s->width, s->height);
		r = gui__screenshot(s, (int)g[0], (int)g[1], (int)(g[2] - g[0]), (int)(g[3] - g[1]),
				    false, out);
		break;
	}
	case A_LEFT_CLICK:
	case A_RIGHT_CLICK:
	case A_MIDDLE_CLICK:
	case A_DOUBLE_CLICK:
	case A_TRIPLE_CLICK:
	case A_MOUSE_MOVE:
		r = do_click(s, p, clicks[act].button, clicks[act].count, out);
		break;
	case A_SCROLL:
		r = do_click(s, p, (unsigned)gui__scroll_button(p->direction), (int)p->amount, out);
		break;
	case A_MOUSE_DOWN:
	case A_MOUSE_UP:
		r = do_click(s, p, 1, 0, out);
		if (r >= 0) {
			r = gui_input_button(s, 1, act == A_MOUSE_DOWN, &err);
			if (r < 0)
				return gui__fail(out, r, &err);
		}
		break;
	case A_DRAG: {
		long x0 = p->start[0], y0 = p->start[1];

		if (!p->has_start) {
			int cx, cy;

			r = gui_input_pointer(s, &cx, &cy, &err);
			if (r < 0)
				return gui__fail(out, r, &err);
			x0 = cx, y0 = cy;
		}
		if (gui__check_point(s, x0, y0, out) < 0 ||
		    gui__check_point(s, p->coord[0], p->coord[1], out) < 0)
			return -ERANGE;
		r = gui_input_drag(s, (int)x0, (int)y0, (int)p->coord[0], (int)p->coord[1], &err);
		if (r < 0)
			return gui__fail(out, r, &err);
		break;
	}
	case A_KEY:
	case A_HOLD_KEY:
		r = gui_keyspec_parse(p->text, &seq, &err);
		if (r < 0)
			return gui__fail(out, r, &err);
		if (act == A_KEY)
			r = gui_input_keys(s, &seq, &err);
		else {
			/* Every combo of the spec goes down together, then all come up. */
			for (size_t i = 0; i < seq.n && r >= 0; i++)
				r = gui_input_combo(s, &seq.combos[i], true, &err);
			if (r >= 0)
				sleep_seconds(ctx, p->duration);
			for (size_t i = seq.n; i-- > 0;) {
				int q = gui_input_combo(s, &seq.combos[i], false, &err);

				if (r >= 0)
					r = q;
			}
		}
		if (r < 0)
			return gui__fail(out, r, &err);
		break;
	case A_TYPE:
		r = gui_input_type(s, p->text, &err);
		if (r < 0)
			return gui__fail(out, r, &err);
		break;
	case A_CURSOR:
	case A_WAIT: /* waited before taking the lock */
		break;
	}
	if (r < 0)
		return r;
	if (!finish(out, name, &res))
		return -ENOMEM;
	if (act == A_TYPE && !gui__put_str(out, res, "text", p->text))
		return -ENOMEM;
	if (act != A_SCREENSHOT && act != A_ZOOM && act != A_KEY && act != A_TYPE &&
	    act != A_HOLD_KEY) {
		r = put_pointer(s, res, out);
		if (r < 0)
			return r;
	}
	/* Like the reference tool: show the screen after every action but a query. */
	if (act != A_SCREENSHOT && act != A_ZOOM && act != A_CURSOR)
		return gui__screenshot_after_action(s, out);
	return 0;
}

int gui__computer(tool_context *ctx, const cJSON *args, tool_result *out)
{
	static const char *const keys[] = {"action",   "coordinate",	   "start_coordinate",
					   "text",     "scroll_direction", "scroll_amount",
					   "duration", "region",	   NULL};
	const char *name;
	gui_session *s;
	params p = {0};
	size_t i;

	if (gui__args_check(args, keys, out) < 0 ||
	    gui__arg_string(args, "action", true, 32, &name, out) < 0)
		return 0;
	for (i = 0; i < SBX_ELEMENTSOF(actions); i++)
		if (strcmp(actions[i].name, name) == 0)
			break;
	if (i == SBX_ELEMENTSOF(actions))
		return tool_fail(out, TOOL_E_ARGUMENT, "Unknown action '%s'", name);
	if (check_params(args, actions[i].params, name, out) < 0 ||
	    read_params(args, actions[i].act, &p, out) < 0)
		return 0;
	if (actions[i].act == A_SCROLL && gui__scroll_button(p.direction) < 0)
		return tool_fail(out, TOOL_E_ARGUMENT,
				 "scroll_direction must be up, down, left or right, got '%s'",
				 p.direction);
	if (actions[i].act == A_WAIT) {
		sbx_error err = SBX_ERROR_INIT;
		cJSON *res;

		/* The wait holds no lock. Without a display it still waits, just shows nothing. */
		sleep_seconds(ctx, p.duration);
		if (gui_session_acquire(gui__display(ctx), &s, &err) < 0) {
			finish(out, name, &res);
			return 0;
		}
	} else if (gui__begin(ctx, &s, out) < 0)
		return 0;
	run_action(ctx, s, actions[i].act, name, &p, out);
	gui__end(s);
	return 0;
}
