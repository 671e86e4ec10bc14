/* SPDX-License-Identifier: MIT */
/* Tools over the task session: complete_task and get_task_status. */
#include <errno.h>
#include <string.h>

#include "server.h"
#include "task_session.h"

#define STATUS_SCHEMA                                                                              \
	"{\"type\":\"object\",\"properties\":{"                                                    \
	"\"task_id\":{\"type\":[\"string\",\"null\"]},"                                            \
	"\"status\":{\"type\":\"string\",\"enum\":[\"pending\",\"running\",\"completed\","         \
	"\"timed_out\"]},"                                                                         \
	"\"started_at\":{\"type\":[\"string\",\"null\"]},"                                         \
	"\"elapsed\":{\"type\":\"number\"},"                                                       \
	"\"remaining\":{\"type\":[\"number\",\"null\"]},"                                          \
	"\"timeout_seconds\":{\"type\":[\"number\",\"null\"]},"                                    \
	"\"files_modified\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}"

static int complete_task(tool_context *ctx, const cJSON *args, tool_result *out)
{
	const char *summary = sbx_json_get_string(args, "summary", NULL);
	_cleanup_json_ cJSON *recalculated = cJSON_CreateArray();
	_cleanup_json_ cJSON *recalc = cJSON_CreateObject();
	int r;

	if (!recalculated || !recalc)
		return -ENOMEM;
	if (sbx_json_get_bool(args, "recalculate", true) &&
	    task_session_state(ctx->task) == TASK_RUNNING)
		recalc_pending(ctx, recalculated, recalc);
	if (cJSON_GetArraySize(recalc))
		task_session_set_recalc(ctx->task, recalc);
	r = task_session_complete(ctx->task, summary);
	if (r == -ETIME)
		return tool_fail(out, TOOL_E_TIMEOUT, "Task has timed out");
	out->structured = task_session_status(ctx->task);
	if (!out->structured)
		return -ENOMEM;
	cJSON_AddBoolToObject(out->structured, "success", true);
	cJSON_AddBoolToObject(out->structured, "already_completed", r == -EALREADY);
	cJSON_AddItemToObject(out->structured, "recalculated", TAKE_PTR(recalculated));
	if (cJSON_GetArraySize(recalc))
		cJSON_AddItemToObject(out->structured, "recalc", TAKE_PTR(recalc));
	return 0;
}

static int get_task_status(tool_context *ctx, const cJSON *args, tool_result *out)
{
	out->structured = task_session_status(ctx->task);
	return out->structured ? 0 : -ENOMEM;
}

static const tool_def tools[] = {
	TOOL_DEF(complete_task, .title = "Complete the task",
		 .description =
			 "Declares the task finished: the workspace is handed in for "
			 "grading and the task stops. Call it once, after saving your "
			 "work. Optional summary: a short note of what was done. Modified "
			 "spreadsheets whose formulas have no computed values are "
			 "recalculated first (natively, LibreOffice for the rest where installed) "
			 "unless recalculate is false.",
		 .input_schema =
			 "{\"type\":\"object\",\"properties\":{\"summary\":{\"type\":"
			 "\"string\",\"maxLength\":4096},\"recalculate\":{\"type\":"
			 "\"boolean\",\"description\":\"recalculate formulas without values "
			 "first (default true)\"}},\"additionalProperties\":false}",
		 .output_schema = STATUS_SCHEMA ",\"success\":{\"type\":\"boolean\"},"
						"\"already_completed\":{\"type\":\"boolean\"}},"
						"\"required\":[\"success\",\"status\"]}",
		 .annotations = TOOL_IDEMPOTENT),
	TOOL_DEF(get_task_status, .title = "Task status",
		 .description = "Reports the task state (pending, running, completed, timed_out), "
				"seconds elapsed and remaining, and the files modified so far.",
		 .input_schema = TOOL_NO_ARGS,
		 .output_schema = STATUS_SCHEMA "},\"required\":[\"status\"]}",
		 .annotations = TOOL_READ_ONLY | TOOL_IDEMPOTENT),
};

const tool_def *task_tools(size_t *n_out)
{
	*n_out = SBX_ELEMENTSOF(tools);
	return tools;
}
