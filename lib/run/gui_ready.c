/* SPDX-License-Identifier: MIT */
/*
 * GUI readiness: a GUI task's agent starts once LibreOffice Calc shows the
 * starting file, not merely once the server answers, or its first
 * screenshot would be an empty screen: first its window must exist, then be
 * drawn (the screenshot's PNG grows). Both come from the server's
 * GET /control/screenshot (its window argument names the title to look
 * for), on a warm relay stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

#define GUI_POLL_MS	  100
#define GUI_PAINT_MAX_MS  10000
#define GUI_NO_DISPLAY_MS 45000 /* a loaded host starts Xvfb slowly */

/* GUI_OLD_SERVER: the image's sandbox-mcp predates the control API (/control/screenshot). */
enum { GUI_WAITING, GUI_SHOWN, GUI_NO_DISPLAY, GUI_OLD_SERVER };

/*
 * GUI_SHOWN when a window title names the file ("name.ods - LibreOffice Calc"),
 * from GET /control/screenshot's X-Window-Shown (the take_screenshot tool's
 * window argument, which every GUI tool set keeps).
 */
static int shows_file(sbx_run *run, const char *base)
{
	_cleanup_free_ char *path = sbx_run__url_with("/control/screenshot?window=", base);
	_cleanup_json_ cJSON *resp = NULL;
	sbx_relay_response out = {0};
	int found = GUI_WAITING;

	if (!path ||
	    sbx_relay_request(run->relay, "GET", path, NULL, NULL, 0, false, 30000, &out, NULL) < 0)
		return GUI_WAITING;
	if (out.status == 200)
		found = out.window_shown ? GUI_SHOWN : GUI_WAITING;
	else if (out.status == 404 && sbx_json_parse(out.body, out.len, &resp, NULL) == 0)
		/* Our 404 says why; any other is a server without /control. */
		found = strstr(sbx_json_get_string(resp, "error", ""), "No display available")
				? GUI_NO_DISPLAY
				: GUI_OLD_SERVER;
	sbx_relay_response_free(&out);
	return found;
}

/* The size of a screenshot's PNG, 0 when none: a painted screen compresses far worse. */
static size_t screenshot_size(sbx_run *run)
{
	sbx_relay_response out = {0};
	size_t n = 0;

	if (sbx_relay_request(run->relay, "GET", "/control/screenshot", NULL, NULL, 0, false, 30000,
			      &out, NULL) < 0)
		return 0;
	if (out.status == 200)
		n = out.len;
	sbx_relay_response_free(&out);
	return n;
}

static int wait_shown(sbx_run *run, uint32_t limit_s, sbx_error *err)
{
	int64_t until = sbx_now_ms() + (int64_t)limit_s * 1000, paint_until = 0;
	int64_t no_display_since = 0;
	size_t blank;
	const char *base;

	if (run->task->n_files == 0)
		return 0; /* nothing to open: the display alone is the GUI */
	base = sbx_run__base_name(run->task->files[0]);
	/* The screen before Calc: what "not painted yet" looks like. */
	blank = screenshot_size(run);
	for (;;) {
		struct timespec ts = {0, GUI_POLL_MS * 1000000L};

		if (!paint_until) {
			/* First the window (its title names the file) ... */
			int st = shows_file(run, base);

			if (st == GUI_SHOWN)
				paint_until = sbx_now_ms() + GUI_PAINT_MAX_MS;
			if (st == GUI_OLD_SERVER)
				return sbx_error_set(err, -EPROTO,
						     "the image's sandbox-mcp is older than this "
						     "sandboxctl (no /control/screenshot): "
						     "rebuild it with 'sandboxctl build'");
			/* No X server for long: Xvfb died; say so instead of waiting it out. */
			if (st != GUI_NO_DISPLAY)
				no_display_since = 0;
			else if (!no_display_since)
				no_display_since = sbx_now_ms();
			else if (sbx_now_ms() - no_display_since > GUI_NO_DISPLAY_MS)
				return sbx_error_set(err, -EHOSTDOWN,
						     "the sandbox's display is not up after %d s "
						     "(see container.log)",
						     GUI_NO_DISPLAY_MS / 1000);
		} else {
			/* ... then its contents: the window appears some time before it is drawn.
			 */
			size_t now = screenshot_size(run);

			if (!blank || now >= 2 * blank)
				return 0;
			if (sbx_now_ms() >= paint_until) {
				sbx_log_warning(
					"GUI: the window for '%s' is not drawn after %d ms; "
					"going on",
					base, GUI_PAINT_MAX_MS);
				return 0;
			}
		}

		if (run->o.interrupted && *run->o.interrupted)
			return sbx_error_set(err, -EINTR, "interrupted while waiting for the GUI");
		if (sbx_now_ms() >= until)
			return sbx_error_set(err, -ETIMEDOUT,
					     "LibreOffice did not show '%s' within %u s", base,
					     limit_s);
		nanosleep(&ts, NULL);
	}
}

int sbx_run__wait_gui(sbx_run *run, sbx_error *err)
{
	return wait_shown(run, run->o.ready_timeout_s ? run->o.ready_timeout_s : 120, err);
}
