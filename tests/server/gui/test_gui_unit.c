/* SPDX-License-Identifier: MIT */
/* GUI tools without a display: key specs, encoders, the tool table, argument errors. */
#include <stdlib.h>
#include <string.h>
#include <X11/Xlib.h>
#include <X11/keysym.h>

#include "check_main.h"
#include "gui-test.h"
#include "encode.h"
#include "keyspec.h"
#include "sbx/util.h"

static gui_keyseq parse_ok(const char *spec)
{
	sbx_error err = SBX_ERROR_INIT;
	gui_keyseq seq;
	int r = gui_keyspec_parse(spec, &seq, &err);

	ck_assert_msg(r == 0, "'%s': %s", spec, err.msg);
	return seq;
}

static const char *parse_err(const char *spec)
{
	static sbx_error err;
	gui_keyseq seq;

	sbx_error_clear(&err);
	ck_assert_int_eq(gui_keyspec_parse(spec, &seq, &err), -EINVAL);
	return err.msg;
}

START_TEST(keyspec_combos)
{
	gui_keyseq s;

	s = parse_ok("ctrl+s");
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.combos[0].n, 2);
	ck_assert_uint_eq(s.combos[0].keys[0], XK_Control_L);
	ck_assert_uint_eq(s.combos[0].keys[1], XK_s);

	s = parse_ok("Return");
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.combos[0].n, 1);
	ck_assert_uint_eq(s.combos[0].keys[0], XK_Return);

	s = parse_ok("alt+F4");
	ck_assert_uint_eq(s.combos[0].keys[0], XK_Alt_L);
	ck_assert_uint_eq(s.combos[0].keys[1], XK_F4);

	s = parse_ok("shift+Tab");
	ck_assert_uint_eq(s.combos[0].keys[0], XK_Shift_L);
	ck_assert_uint_eq(s.combos[0].keys[1], XK_Tab);

	s = parse_ok("super");
	ck_assert_uint_eq(s.combos[0].n, 1);
	ck_assert_uint_eq(s.combos[0].keys[0], XK_Super_L);

	s = parse_ok("ctrl+shift+t");
	ck_assert_uint_eq(s.combos[0].n, 3);
	ck_assert_uint_eq(s.combos[0].keys[2], XK_t);

	s = parse_ok("ctrl+S");
	ck_assert_uint_eq(s.combos[0].keys[1], XK_S);
}
END_TEST

START_TEST(keyspec_function_keys)
{
	for (int i = 1; i <= 12; i++) {
		char spec[8], lower[8];
		gui_keyseq s;

		snprintf(spec, sizeof(spec), "F%d", i);
		snprintf(lower, sizeof(lower), "f%d", i);
		s = parse_ok(spec);
		ck_assert_uint_eq(s.combos[0].keys[0], XK_F1 + (KeySym)(i - 1));
		s = parse_ok(lower);
		ck_assert_uint_eq(s.combos[0].keys[0], XK_F1 + (KeySym)(i - 1));
	}
}
END_TEST

START_TEST(keyspec_aliases_and_chars)
{
	gui_keyseq s;

	ck_assert_uint_eq(parse_ok("Enter").combos[0].keys[0], XK_Return);
	ck_assert_uint_eq(parse_ok("esc").combos[0].keys[0], XK_Escape);
	ck_assert_uint_eq(parse_ok("BACKSPACE").combos[0].keys[0], XK_BackSpace);
	ck_assert_uint_eq(parse_ok("Page_Down").combos[0].keys[0], XK_Next);
	ck_assert_uint_eq(parse_ok("pagedown").combos[0].keys[0], XK_Next);
	ck_assert_uint_eq(parse_ok("KP_0").combos[0].keys[0], XK_KP_0);
	ck_assert_uint_eq(parse_ok("return").combos[0].keys[0], XK_Return);
	ck_assert_uint_eq(parse_ok("%").combos[0].keys[0], XK_percent);
	ck_assert_uint_eq(parse_ok("é").combos[0].keys[0], XK_eacute);
	ck_assert_uint_eq(parse_ok("€").combos[0].keys[0], 0x010020acUL);

	s = parse_ok("ctrl++");
	ck_assert_uint_eq(s.combos[0].n, 2);
	ck_assert_uint_eq(s.combos[0].keys[1], XK_plus);
	ck_assert_uint_eq(parse_ok("+").combos[0].keys[0], XK_plus);

	s = parse_ok("  ctrl+a   Delete ");
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.combos[0].keys[1], XK_a);
	ck_assert_uint_eq(s.combos[1].keys[0], XK_Delete);
}
END_TEST

START_TEST(keyspec_errors)
{
	ck_assert_str_eq(parse_err("ctrl+Foo"), "Unknown key 'Foo' in 'ctrl+Foo'");
	ck_assert_str_eq(parse_err("NoSuchKey"), "Unknown key 'NoSuchKey' in 'NoSuchKey'");
	ck_assert_str_eq(parse_err("ctrl+"), "Missing key after '+' in 'ctrl+'");
	ck_assert_ptr_nonnull(strstr(parse_err(""), "empty key spec"));
	ck_assert_ptr_nonnull(strstr(parse_err("   "), "empty key spec"));
	ck_assert_ptr_nonnull(strstr(parse_err("a+b+c+d+e+f+g+h+i"), "Too many keys"));

	char big[GUI_KEYSPEC_MAX_LEN + 2];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_ptr_nonnull(strstr(parse_err(big), "too long"));
}
END_TEST

START_TEST(utf8_decoding)
{
	uint32_t cp;

	ck_assert_int_eq(gui_utf8_decode("A", 1, &cp), 1);
	ck_assert_uint_eq(cp, 'A');
	ck_assert_int_eq(gui_utf8_decode("\xc3\xa9", 2, &cp), 2);
	ck_assert_uint_eq(cp, 0xe9);
	ck_assert_int_eq(gui_utf8_decode("\xe2\x82\xac", 3, &cp), 3);
	ck_assert_uint_eq(cp, 0x20ac);
	ck_assert_int_eq(gui_utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
	ck_assert_uint_eq(cp, 0x1f600);
	ck_assert_int_eq(gui_utf8_decode("\xc0\x80", 2, &cp), -EILSEQ);	    /* overlong */
	ck_assert_int_eq(gui_utf8_decode("\xed\xa0\x80", 3, &cp), -EILSEQ); /* surrogate */
	ck_assert_int_eq(gui_utf8_decode("\xe2\x82", 2, &cp), -EILSEQ);	    /* truncated */
	ck_assert_int_eq(gui_utf8_decode("\xff", 1, &cp), -EILSEQ);
	ck_assert_uint_eq(gui_keysym_from_codepoint('a'), XK_a);
	ck_assert_uint_eq(gui_keysym_from_codepoint('\n'), XK_Return);
	ck_assert_uint_eq(gui_keysym_from_codepoint(0x4e2d), 0x01004e2dUL);
}
END_TEST

START_TEST(png_roundtrip)
{
	const uint32_t w = 97, h = 33;
	size_t stride = w * 3 + 5; /* padded rows must be honoured */
	uint8_t *rgb = calloc(stride * h, 1), *back = NULL;
	sbx_buf png = SBX_BUF_INIT(GUI_PNG_MAX);
	sbx_error err = SBX_ERROR_INIT;
	uint32_t bw, bh;

	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint8_t *p = rgb + y * stride + x * 3;
			p[0] = (uint8_t)(x * 7 + y);
			p[1] = (uint8_t)(y * 5);
			p[2] = (uint8_t)(x ^ y);
		}
	ck_assert_int_eq(gui_png_encode_rgb(rgb, w, h, stride, &png, &err), 0);
	ck_assert_mem_eq(png.data, "\x89PNG\r\n\x1a\n", 8);
	ck_assert_int_eq(test_png_decode(png.data, png.len, &bw, &bh, &back), 0);
	ck_assert_uint_eq(bw, w);
	ck_assert_uint_eq(bh, h);
	for (uint32_t y = 0; y < h; y++)
		ck_assert_mem_eq(back + y * w * 3, rgb + y * stride, w * 3);
	free(back);
	sbx_buf_free(&png);

	/* An output limit too small is an error, not a truncated image. */
	sbx_buf tiny = SBX_BUF_INIT(100);
	sbx_error_clear(&err);
	ck_assert_int_eq(gui_png_encode_rgb(rgb, w, h, stride, &tiny, &err), -ENOBUFS);
	ck_assert_ptr_nonnull(strstr(err.msg, "limit"));
	sbx_buf_free(&tiny);

	sbx_error_clear(&err);
	ck_assert_int_eq(gui_png_encode_rgb(rgb, 0, h, stride, &png, &err), -EINVAL);
	free(rgb);
}
END_TEST

START_TEST(tool_table_is_well_formed)
{
	static const char *const expected[] = {
		"take_screenshot",     "click",	    "double_click", "right_click",
		"type_text",	       "key_press", "mouse_move",   "drag",
		"get_cursor_position", "scroll",    "computer",
	};
	size_t n;
	const tool_def *t = gui_tools(&n);

	ck_assert_uint_eq(n, SBX_ELEMENTSOF(expected));
	for (size_t i = 0; i < SBX_ELEMENTSOF(expected); i++)
		ck_assert_msg(test_tool(expected[i]), "missing tool %s", expected[i]);
	for (size_t i = 0; i < n; i++) {
		cJSON *in = cJSON_Parse(t[i].input_schema), *out = cJSON_Parse(t[i].output_schema);

		ck_assert_msg(in, "%s: input schema is not JSON", t[i].name);
		ck_assert_msg(out, "%s: output schema is not JSON", t[i].name);
		ck_assert_str_eq(sbx_json_get_string(in, "type", ""), "object");
		ck_assert_str_eq(sbx_json_get_string(out, "type", ""), "object");
		ck_assert_msg(cJSON_IsFalse(sbx_json_get(in, "additionalProperties")),
			      "%s: additionalProperties must be false", t[i].name);
		ck_assert(cJSON_IsObject(sbx_json_get(in, "properties")));
		ck_assert_ptr_nonnull(t[i].title);
		ck_assert_ptr_nonnull(t[i].description);
		ck_assert(t[i].fn != NULL);
		cJSON_Delete(in);
		cJSON_Delete(out);
	}
	ck_assert(test_tool("take_screenshot")->annotations & TOOL_READ_ONLY);
	ck_assert(test_tool("get_cursor_position")->annotations & TOOL_READ_ONLY);
	ck_assert(!(test_tool("click")->annotations & TOOL_READ_ONLY));
}
END_TEST

static void expect_error(const char *tool, const char *args, tool_error_kind kind,
			 const char *needle)
{
	tool_result r;

	ck_assert_int_eq(test_call(tool, args, &r), 0);
	ck_assert_msg(r.error_kind == kind, "%s %s: kind %d, error '%s'", tool, args ? args : "",
		      r.error_kind, r.error ? r.error : "(none)");
	ck_assert_msg(r.error && strstr(r.error, needle), "%s %s: error '%s' lacks '%s'", tool,
		      args ? args : "", r.error ? r.error : "(none)", needle);
	ck_assert_ptr_null(r.structured);
	ck_assert_ptr_null(r.image_png_b64);
	tool_result_clear(&r);
}

START_TEST(no_display_is_a_clear_error)
{
	static const struct {
		const char *tool, *args;
	} calls[] = {
		{"take_screenshot", NULL},
		{"take_screenshot", "{}"},
		{"click", "{\"x\":1,\"y\":2}"},
		{"double_click", "{\"x\":1,\"y\":2}"},
		{"right_click", "{\"x\":1,\"y\":2}"},
		{"type_text", "{\"text\":\"hi\"}"},
		{"key_press", "{\"key\":\"ctrl+s\"}"},
		{"mouse_move", "{\"x\":1,\"y\":2}"},
		{"drag", "{\"start_x\":1,\"start_y\":2,\"end_x\":3,\"end_y\":4}"},
		{"get_cursor_position", NULL},
		{"scroll", "{\"x\":1,\"y\":2,\"direction\":\"down\"}"},
		{"computer", "{\"action\":\"screenshot\"}"},
		{"computer", "{\"action\":\"left_click\",\"coordinate\":[5,5]}"},
	};

	test_display = NULL;
	for (size_t i = 0; i < SBX_ELEMENTSOF(calls); i++)
		expect_error(calls[i].tool, calls[i].args, TOOL_E_UNAVAILABLE,
			     "No display available: ");
	/* A display that cannot be opened says which. */
	test_display = ":4711";
	expect_error("take_screenshot", NULL, TOOL_E_UNAVAILABLE,
		     "No display available: cannot open X display ':4711'");
	test_display = NULL;
}
END_TEST

START_TEST(argument_errors)
{
	test_display = NULL;
	expect_error("click", "{\"x\":1}", TOOL_E_ARGUMENT, "Missing required argument 'y'");
	expect_error("click", "{\"x\":1,\"y\":2,\"z\":3}", TOOL_E_ARGUMENT, "Unknown argument 'z'");
	expect_error("click", "{\"x\":1.5,\"y\":2}", TOOL_E_ARGUMENT, "'x' must be an integer");
	expect_error("click", "{\"x\":\"1\",\"y\":2}", TOOL_E_ARGUMENT, "'x' must be an integer");
	expect_error("click", "{\"x\":1,\"y\":2,\"button\":4}", TOOL_E_ARGUMENT,
		     "'button' must be between 1 and 3");
	expect_error("click", "[1,2]", TOOL_E_ARGUMENT, "must be a JSON object");
	expect_error("key_press", "{\"key\":\"ctrl+Foo\"}", TOOL_E_ARGUMENT,
		     "Unknown key 'Foo' in 'ctrl+Foo'");
	expect_error("key_press", "{}", TOOL_E_ARGUMENT, "Missing required argument 'key'");
	expect_error("type_text", "{\"text\":5}", TOOL_E_ARGUMENT, "'text' must be a string");
	expect_error("scroll", "{\"x\":1,\"y\":1,\"direction\":\"sideways\"}", TOOL_E_ARGUMENT,
		     "'direction' must be up, down, left or right");
	expect_error("scroll", "{\"x\":1,\"y\":1,\"direction\":\"up\",\"amount\":0}",
		     TOOL_E_ARGUMENT, "'amount' must be between 1 and 50");
	expect_error("computer", "{}", TOOL_E_ARGUMENT, "Missing required argument 'action'");
	expect_error("computer", "{\"action\":\"fly\"}", TOOL_E_ARGUMENT, "Unknown action 'fly'");
	expect_error("computer", "{\"action\":\"screenshot\",\"text\":\"x\"}", TOOL_E_ARGUMENT,
		     "text is not accepted for action 'screenshot'");
	expect_error("computer", "{\"action\":\"type\",\"coordinate\":[1,2],\"text\":\"x\"}",
		     TOOL_E_ARGUMENT, "coordinate is not accepted for action 'type'");
	expect_error("computer", "{\"action\":\"mouse_move\"}", TOOL_E_ARGUMENT,
		     "Missing required argument 'coordinate'");
	expect_error("computer", "{\"action\":\"mouse_move\",\"coordinate\":[1]}", TOOL_E_ARGUMENT,
		     "'coordinate' must be an array of 2 integers");
	expect_error("computer", "{\"action\":\"key\"}", TOOL_E_ARGUMENT,
		     "Missing required argument 'text'");
	expect_error("computer", "{\"action\":\"wait\",\"duration\":1000}", TOOL_E_ARGUMENT,
		     "'duration' must be between 0 and 100");
	expect_error("computer", "{\"action\":\"zoom\"}", TOOL_E_ARGUMENT,
		     "Missing required argument 'region'");
	expect_error("computer", "{\"action\":\"scroll\",\"scroll_direction\":\"in\"}",
		     TOOL_E_ARGUMENT, "scroll_direction must be up, down, left or right");
}
END_TEST

START_TEST(computer_wait_needs_no_display)
{
	tool_result r;

	test_display = NULL;
	ck_assert_int_eq(test_call("computer", "{\"action\":\"wait\",\"duration\":0.05}", &r), 0);
	ck_assert_int_eq(r.error_kind, TOOL_OK);
	ck_assert_str_eq(sbx_json_get_string(r.structured, "action", ""), "wait");
	ck_assert(sbx_json_get_bool(r.structured, "success", false));
	tool_result_clear(&r);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "core", NULL, NULL, 0, keyspec_combos, keyspec_function_keys,
		      keyspec_aliases_and_chars, keyspec_errors, utf8_decoding, png_roundtrip,
		      tool_table_is_well_formed, no_display_is_a_clear_error, argument_errors,
		      computer_wait_needs_no_display);
}

SBX_TEST_MAIN("gui-unit", add_cases)
