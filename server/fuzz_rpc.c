/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the JSON-RPC message handler: every input is one
 * message as a transport would hand it over. Tools that start processes
 * (execute_*, recalculate) are skipped so the fuzzer cannot run commands.
 *
 * The workspace holds a real task workbook, put back before every tools/call,
 * so the tools get past "file not found" into the sheet code, and every
 * input starts from the same state. Run it with scripts/fuzz.sh; its corpus
 * (a call of every tool, batches, notifications) is in
 * tests/data/fuzz/fuzz-mcp-message/.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_workspace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static server srv;
static mcp_session session;
static mcp_session modern; /* a stream connection opened at 2026-07-28 */
static bool ready;

/* Every answer must itself be valid JSON, with a status the HTTP transport can send. */
static void check_answer(char *out)
{
	cJSON *r = out ? cJSON_Parse(out) : NULL;

	if (out && (!r || mcp_modern_http_status(out) < 200))
		abort();
	cJSON_Delete(r);
	free(out);
}

/* JSON escapes could spell a tool name: refuse any escaped tool call. */
static bool runs_processes(const uint8_t *data, size_t size)
{
	static const char *const escapes[] = {"\\u"};

	return fuzz_input_runs_processes(data, size, NULL, 0) ||
	       (memmem(data, size, "tools/call", 10) &&
		fuzz_input_runs_processes(data, size, escapes, SBX_ELEMENTSOF(escapes)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const mcp_route_headers headers = {"2026-07-28", "tools/call", "read_cell", NULL};
	mcp_session one;
	cJSON *msg = NULL;
	char *out = NULL;

	if (!ready) {
		fuzz_workspace_init(&srv);
		mcp_session_init(&session);
		mcp_session_init(&modern);
		atomic_store(&modern.era, MCP_ERA_MODERN);
		ready = true;
	}
	if (runs_processes(data, size))
		return 0;
	if (memmem(data, size, "tools/call", 10))
		fuzz_workspace_restore();
	if (mcp_handle_text(&srv, &session, (const char *)data, size, NULL, &out) == 0)
		check_answer(out);
	/* The same message at 2026-07-28: over stdio, and as HTTP would check its headers. */
	if (sbx_json_parse((const char *)data, size, &msg, NULL) < 0)
		return 0;
	if (memmem(data, size, "tools/call", 10))
		fuzz_workspace_restore();
	out = NULL;
	if (mcp_handle_stream(&srv, &modern, msg, NULL, &out) == 0)
		check_answer(out);
	mcp_session_init(&one);
	out = NULL;
	if (mcp_is_request(msg) && mcp_modern_accept(msg, &headers, &one, &out) != 0)
		check_answer(out);
	else
		free(out);
	cJSON_Delete(msg);
	return 0;
}
