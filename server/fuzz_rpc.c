/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the JSON-RPC message handler: every input is one
 * message as a transport would hand it over. Tools that start processes
 * (execute_*, recalculate) are skipped so the fuzzer cannot run commands.
 *
 *   CC=clang meson setup build-fuzz -Dfuzz=true -Dcli=false -Dtests=false
 *   mkdir -p /tmp/mcp-corpus && build-fuzz/server/fuzz-mcp-message -max_len=65536 \
 *     /tmp/mcp-corpus tests/server/fuzz/   (new inputs go to the first dir)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static server srv;
static mcp_session session;
static bool ready;

static void init_once(void)
{
	static char ws[] = "/tmp/sbx-fuzz-ws-XXXXXX";
	sbx_error err = SBX_ERROR_INIT;

	if (!mkdtemp(ws) || server_init(&srv, ws, NULL, 0, NULL, &err) < 0) {
		fprintf(stderr, "fuzz: cannot set up: %s\n", sbx_error_message(&err));
		abort();
	}
	mcp_session_init(&session);
	ready = true;
}

static bool runs_processes(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"execute_python", "execute_shell", "recalculate"};

	for (size_t i = 0; i < SBX_ELEMENTSOF(names); i++)
		if (memmem(data, size, names[i], strlen(names[i])))
			return true;
	/* JSON escapes could spell a name too: refuse any escaped tool call. */
	return memmem(data, size, "tools/call", 10) && memmem(data, size, "\\u", 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = NULL;

	if (!ready)
		init_once();
	if (runs_processes(data, size))
		return 0;
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
