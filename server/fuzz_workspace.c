/* SPDX-License-Identifier: MIT */
#include "fuzz_workspace.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/file.h"

static char ws[] = "/tmp/sbx-fuzz-ws-XXXXXX";
static char book_path[96];
static char *seed_book;
static size_t seed_book_len;

const char *fuzz_workspace_init(server *srv)
{
	sbx_error err = SBX_ERROR_INIT;

	if (!mkdtemp(ws) || server_init(srv, ws, NULL, 0, NULL, &err) < 0 ||
	    sbx_file_read_capped(AT_FDCWD, SBX_FUZZ_SEED_BOOK, 16 << 20, &seed_book, &seed_book_len,
				 &err) < 0) {
		fprintf(stderr, "fuzz: cannot set up: %s\n", sbx_error_message(&err));
		abort();
	}
	snprintf(book_path, sizeof(book_path), "%s/cash_flows.ods", ws);
	fuzz_workspace_restore();
	return ws;
}

void fuzz_workspace_restore(void)
{
	FILE *f = fopen(book_path, "wbe");

	if (!f || fwrite(seed_book, 1, seed_book_len, f) != seed_book_len || fclose(f) != 0)
		abort();
}

bool fuzz_input_runs_processes(const void *data, size_t size, const char *const *escapes,
			       size_t n_escapes)
{
	static const char *const names[] = {"execute_python", "execute_shell", "recalculate"};

	for (size_t i = 0; i < SBX_ELEMENTSOF(names); i++)
		if (memmem(data, size, names[i], strlen(names[i])))
			return true;
	for (size_t i = 0; i < n_escapes; i++)
		if (memmem(data, size, escapes[i], strlen(escapes[i])))
			return true;
	return false;
}
