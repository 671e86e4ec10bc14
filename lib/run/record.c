/* SPDX-License-Identifier: MIT */
/*
 * The filmstrip of a GUI run (`run --record SECONDS`): every few seconds of
 * the agent phase, a screenshot through the server's GET /control/screenshot, saved
 * as runs/<id>/frames/<n>-<unix ms>.png, so the viewer can play the screen
 * with the tool calls that happened between frames. Capped in count and
 * bytes: a long run cannot fill the disk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/log.h"
#include "sbx/path.h"

#define FRAME_TIMEOUT_MS 5000

static int64_t wall_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

bool sbx_run__recording(const sbx_run *run)
{
	return run->task->gui && run->o.record_s >= 0 && run->res.frames < SBX_RUN_FRAMES_MAX &&
	       run->frame_bytes < SBX_RUN_FRAMES_BYTES;
}

void sbx_run__record_frame(sbx_run *run)
{
	double every_s = run->o.record_s > 0 ? run->o.record_s : SBX_RUN_RECORD_DEFAULT_S;
	sbx_relay_response resp = {0};
	char name[64];

	if (!sbx_run__recording(run) || sbx_now_ms() < run->next_frame_ms)
		return;
	run->next_frame_ms = sbx_now_ms() + (int64_t)(every_s * 1000);
	/* Not recorded in the transcript: the agent did not ask for it. */
	if (sbx_relay_request(run->relay, "GET", "/control/screenshot", NULL, NULL, 0, false,
			      FRAME_TIMEOUT_MS, &resp, NULL) < 0)
		return;
	if (resp.status == 200 && resp.len > 0 &&
	    run->frame_bytes + (uint64_t)resp.len <= SBX_RUN_FRAMES_BYTES) {
		snprintf(name, sizeof(name), "frames/%04u-%lld.png", run->res.frames + 1,
			 (long long)wall_ms());
		if (sbx_path_write_beneath(run->res.run_dir, name, resp.body, resp.len, NULL) ==
		    0) {
			run->res.frames++;
			run->frame_bytes += (uint64_t)resp.len;
		}
	}
	sbx_relay_response_free(&resp);
}
