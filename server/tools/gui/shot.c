/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "screen_capture.h"
#include "shot.h"
#include "tool-util.h"

int gui__screenshot(gui_session *s, int x, int y, int w, int h, bool with_base64, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	gui_capture cap = {0};
	char stamp[32];
	cJSON *res;
	int r;

	r = gui_capture_region(s, x, y, w, h, &cap, &err);
	if (r < 0)
		return gui__fail(out, r, &err);
	res = out->structured ? out->structured : gui__result(out);
	if (!res) {
		gui_capture_clear(&cap);
		return -ENOMEM;
	}
	gui__timestamp(stamp);
	if ((with_base64 && !gui__put_str(out, res, "image_base64", cap.png_b64)) ||
	    !gui__put_num(out, res, "width", cap.width) ||
	    !gui__put_num(out, res, "height", cap.height) ||
	    !gui__put_str(out, res, "timestamp", stamp)) {
		gui_capture_clear(&cap);
		return -ENOMEM;
	}
	free(out->image_png_b64);
	out->image_png_b64 = cap.png_b64;
	return 0;
}

int gui__screenshot_after_action(gui_session *s, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	gui_capture cap = {0};
	int r;

	r = gui_capture_settled(s, 100, 1500, &cap, &err);
	if (r < 0)
		return gui__fail(out, r, &err);
	free(out->image_png_b64);
	out->image_png_b64 = cap.png_b64;
	return 0;
}
