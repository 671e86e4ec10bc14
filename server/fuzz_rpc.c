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
static bool ready;

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
	char *out = NULL;

	if (!ready) {
		fuzz_workspace_init(&srv);
		mcp_session_init(&session);
		ready = true;
	}
	if (runs_processes(data, size))
		return 0;
	if (memmem(data, size, "tools/call", 10))
		fuzz_workspace_restore();
	if (mcp_handle_text(&srv, &session, (const char *)data, size, NULL, &out) == 0 && out) {
		cJSON *r = cJSON_Parse(out);
		/* Every answer must itself be valid JSON. */
		if (!r)
			abort();
		cJSON_Delete(r);
	}
	free(out);
	return 0;
}
