/* SPDX-License-Identifier: MIT */
/*
 * fuzz-spawn-request: sandbox-spawner's request check (parse_request), the one
 * place it reads what another process sent. The spawner is built from its one
 * file, so the harness includes it with its main renamed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sandbox_spawner_main(int argc, char **argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define main sandbox_spawner_main
#include "sandbox-spawner.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *argv[SBX_SPAWN_MAX_STRINGS + 2];
	struct sbx_spawn_request rq;
	char *msg;

	/* The first byte picks how many descriptors came with it. */
	if (size < 1 || size > SBX_SPAWN_MAX_MESSAGE)
		return 0;
	msg = malloc(size - 1 ? size - 1 : 1);
	if (!msg)
		return 0;
	memcpy(msg, data + 1, size - 1);
	if (!parse_request(msg, size - 1, data[0] % 8, &rq, argv)) {
		/* Accepted: every string lies in the message and argv[0] is absolute. */
		for (uint32_t i = 0; i < rq.argc + rq.envc + 1; i++) {
			char *p = argv[i];

			if (i == rq.argc) {
				if (p)
					abort();
				continue;
			}
			if (p < msg || p >= msg + size - 1 ||
			    !memchr(p, 0, (size_t)(msg + size - 1 - p)))
				abort();
		}
		if (argv[0][0] != '/' || argv[rq.argc + rq.envc + 1])
			abort();
	}
	free(msg);
	return 0;
}
