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

#include "server.h"
#include "sbx/file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static server srv;
static mcp_session session;
static bool ready;
static char ws_path[64];
static char *seed_book;
static size_t seed_book_len;

/* The workbook every call starts from (tasks/banking_reserve's input). */
static void restore_workbook(void)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cash_flows.ods", ws_path);
	f = fopen(path, "wbe");
	if (!f || fwrite(seed_book, 1, seed_book_len, f) != seed_book_len || fclose(f) != 0)
		abort();
}

static void init_once(void)
{
	static char ws[] = "/tmp/sbx-fuzz-ws-XXXXXX";
	sbx_error err = SBX_ERROR_INIT;

	if (!mkdtemp(ws) || server_init(&srv, ws, NULL, 0, NULL, &err) < 0 ||
	    sbx_file_read_capped(AT_FDCWD, SBX_FUZZ_SEED_BOOK, 16 << 20, &seed_book, &seed_book_len,
				 &err) < 0) {
		fprintf(stderr, "fuzz: cannot set up: %s\n", sbx_error_message(&err));
		abort();
	}
	snprintf(ws_path, sizeof(ws_path), "%s", ws);
	restore_workbook();
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
	if (memmem(data, size, "tools/call", 10))
		restore_workbook();
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
