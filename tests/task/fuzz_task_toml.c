/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the task.toml parser (lib/task/toml.c): any bytes
 * give a tree whose every map key is a string, or a one-line error naming
 * the file; never a crash, leak or hang.
 *   scripts/fuzz.sh 60 fuzz-task-toml    (seeds: tests/data/fuzz/fuzz-task-toml/)
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const sbx_ynode *n, unsigned depth)
{
	if (depth > SBX_YTREE_MAX_DEPTH + 4)
		__builtin_trap();
	if (n->kind == SBX_YNODE_SCALAR && (!n->value || strlen(n->value) != n->len))
		__builtin_trap();
	for (size_t i = 0; i < n->n; i++) {
		if (n->kind == SBX_YNODE_MAP && (!n->keys[i] || !n->keys[i]->value))
			__builtin_trap();
		walk(n->items[i], depth + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_ynode *root = NULL;

	if (sbx_toml__parse("fuzz.toml", (const char *)data, size, &root, &err) == 0) {
		if (!root || root->kind != SBX_YNODE_MAP)
			__builtin_trap();
		walk(root, 0);
		sbx_ytree__free(root);
	} else if (strncmp(err.msg, "fuzz.toml:", 10) != 0 || strchr(err.msg, '\n')) {
		__builtin_trap(); /* every failure says where, on one line */
	}
	return 0;
}
