/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A small YAML tree with positions, built from libyaml events. It refuses
 * what a task file never needs and an attacker would use: anchors and
 * aliases (no billion laughs), tags, several documents, duplicate keys,
 * deep nesting, huge scalars and too many nodes.
 */

#include <stdbool.h>
#include <stddef.h>

#include "sbx/cleanup.h"
#include "sbx/error.h"

#define SBX_YTREE_MAX_DEPTH  32
#define SBX_YTREE_MAX_NODES  20000
#define SBX_YTREE_MAX_SCALAR (64 * 1024)
#define SBX_YTREE_MAX_INPUT  (1024 * 1024)

typedef enum sbx_ynode_kind {
	SBX_YNODE_SCALAR,
	SBX_YNODE_MAP,
	SBX_YNODE_SEQ,
} sbx_ynode_kind;

typedef struct sbx_ynode sbx_ynode;

struct sbx_ynode {
	sbx_ynode_kind kind;
	unsigned line, col; /* 1-based */
	/* SCALAR */
	char *value;
	size_t len;
	bool plain; /* unquoted: may be a number, boolean or null */
	/* MAP: keys[i] -> items[i]; SEQ: items[i] */
	sbx_ynode **keys;
	sbx_ynode **items;
	size_t n;
};

/*
 * Parses len bytes of YAML (one document). name is used in error messages
 * ("name:line:col: ..."). On success *out owns the root (sbx_ynode_free).
 */
int sbx_ytree__parse(const char *name, const char *text, size_t len, sbx_ynode **out,
		     sbx_error *err);

/* Frees a tree. Accepts NULL. */
void sbx_ytree__free(sbx_ynode *node);

/* The value of key in a MAP, or NULL. */
sbx_ynode *sbx_ytree__get(const sbx_ynode *map, const char *key);

/* True for a plain null scalar (`~`, `null`, empty). */
bool sbx_ytree__is_null(const sbx_ynode *node);

SBX_DEFINE_CLEANUP(sbx_ynode, sbx_ytree__free)
