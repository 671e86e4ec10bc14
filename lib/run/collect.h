/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Collecting a finished sandbox's outputs through the server itself: one
 * GET /control/file/<path> per declared output over a warm relay stream,
 * raw bytes, a few milliseconds, where an exec'd tar costs a docker exec.
 * Internal to lib/run; the lifecycle falls back to the backend's copy_out
 * when this fails (and uses it at once for an image without /control).
 */

#include "sbx/error.h"
#include "sbx/relay.h"
#include "sbx/task.h"

/*
 * Writes each of task's outputs found in the workspace beneath outdir
 * (confined; at most 16 MiB each, the server's cap). An output the server
 * does not have is skipped (the grader reports it missing). Returns 0, or a
 * negative errno when the server could not be asked.
 */
int sbx_collect__outputs(sbx_relay *relay, const sbx_task *task, const char *outdir,
			 sbx_error *err);
