/* SPDX-License-Identifier: MIT */
/*
 * fuzz-init-env: sandbox-init's reading of its environment (the deadline,
 * timeout and grace, the uids), which fails closed on anything it cannot
 * parse. The input is NUL-separated values for SANDBOX_DEADLINE,
 * SANDBOX_TIMEOUT, SANDBOX_GRACE, SANDBOX_UID and SANDBOX_AGENT_UID.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sandbox_init_main(int argc, char **argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define main sandbox_init_main
#include "sandbox-init.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"SANDBOX_DEADLINE", "SANDBOX_TIMEOUT", "SANDBOX_GRACE",
					    "SANDBOX_UID", "SANDBOX_AGENT_UID"};
	/* putenv with our own buffers: setenv keeps every old value (glibc never frees
	 * them), which grew this harness by a gigabyte over a campaign. */
	static char entries[5][4200];
	char *copy = malloc(size + 1), *p;
	size_t i = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = 0;
	p = copy;
	for (; i < sizeof(names) / sizeof(names[0]); i++) {
		if (p <= copy + size) {
			snprintf(entries[i], sizeof(entries[i]), "%s=%.4096s", names[i], p);
			putenv(entries[i]);
			p += strlen(p) + 1;
		} else {
			unsetenv(names[i]);
		}
	}
	memset(&st, 0, sizeof(st));
	if (read_deadline() == 0 && st.deadline_ms < 0)
		abort(); /* accepted values give a deadline in the future or none */
	(void)uid_from_env("SANDBOX_UID", "1000");
	(void)uid_from_env("SANDBOX_AGENT_UID", "1001");
	free(copy);
	return 0;
}
