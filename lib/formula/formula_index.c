/* SPDX-License-Identifier: MIT */
/*
 * Exact-match lookups (VLOOKUP(...,FALSE), MATCH(...,0), XLOOKUP) into a
 * range that many formulas search: from the second search of the same
 * line of cells on, a hash of each value to the first position holding it
 * answers in one probe. Equal values (numbers, or text up to case as
 * strcasecmp sees it) hash alike, so an absent hash is a miss; a present
 * one is a candidate the caller compares, scanning as before if it was a
 * collision. The values cannot change under the index: a context reads a
 * book that does not change, and in a recalculation a formula cell is read
 * only once computed (anything else is "unsupported", and then the line is
 * never indexed).
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formula-internal.h"

#define MAX_LINES   4096
#define MAX_INDEXED ((uint64_t)16 << 20) /* cells over all indexes */
#define EMPTY	    UINT32_MAX

typedef struct line {
	uint32_t sheet, r0, c0, dr, n; /* dr 1: down a column, 0: along a row */
	uint32_t searches;
	bool used, ready, failed;
	uint64_t *hashes;
	uint32_t *pos; /* EMPTY: free slot */
	uint32_t mask;
} line;

struct fx_indexes {
	line *lines; /* open addressing on the line's position */
	uint32_t mask, n;
	uint64_t cells;
};

void sbx_fx__indexes_free(fx_indexes *x)
{
	if (!x)
		return;
	for (uint32_t i = 0; x->lines && i <= x->mask; i++) {
		free(x->lines[i].hashes);
		free(x->lines[i].pos);
	}
	free(x->lines);
	free(x);
}

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

/* The value's hash, false when it is never an exact match (or not hashable). */
static bool value_hash(const fx_val *v, uint64_t *h)
{
	if (v->type == FX_NUM || v->type == FX_BOOL) {
		/* -0 equals 0; the union reads the double's bits (gcc's analyser
		 * took a memcpy of them for a read of uninitialised memory). */
		union {
			double d;
			uint64_t bits;
		} u = {.d = v->num == 0 ? 0.0 : v->num};

		if (isnan(u.d))
			return false;
		*h = mix(u.bits) | 1; /* numbers odd, text even */
		return true;
	}
	if (v->type != FX_STR)
		return false;
	/* As strcasecmp compares: up to a NUL, tolower of each byte. */
	uint64_t k = 1469598103934665603ULL;
	for (uint32_t i = 0; i < v->len && v->str[i]; i++)
		k = (k ^ (unsigned char)tolower((unsigned char)v->str[i])) * 1099511628211ULL;
	*h = mix(k) & ~(uint64_t)1;
	return true;
}

static uint32_t hash_line(uint32_t sheet, uint32_t r0, uint32_t c0, uint32_t dr, uint32_t n)
{
	return (uint32_t)mix(((uint64_t)sheet << 40) ^ ((uint64_t)r0 << 20) ^ c0 ^
			     ((uint64_t)n << 32) ^ ((uint64_t)dr << 63));
}

/* The line's entry, a free one to claim, or NULL when the table is full. */
static line *find_line(fx_ctx *c, uint32_t sheet, uint32_t r0, uint32_t c0, uint32_t dr, uint32_t n)
{
	fx_indexes *x = c->indexes;

	if (!x) {
		if (!(x = c->indexes = calloc(1, sizeof(*x))) ||
		    !(x->lines = calloc(MAX_LINES, sizeof(*x->lines))))
			return NULL;
		x->mask = MAX_LINES - 1;
	}
	for (uint32_t i = hash_line(sheet, r0, c0, dr, n) & x->mask, k = 0; k <= x->mask;
	     i = (i + 1) & x->mask, k++) {
		line *l = &x->lines[i];
		if (!l->used) {
			if (x->n * 4 >= MAX_LINES * 3)
				return NULL;
			*l = (line){sheet, r0, c0, dr, n, .used = true};
			x->n++;
			return l;
		}
		if (l->sheet == sheet && l->r0 == r0 && l->c0 == c0 && l->dr == dr && l->n == n)
			return l;
	}
	return NULL;
}

static void insert(line *l, uint64_t h, uint32_t pos)
{
	uint32_t i = (uint32_t)(h >> 32) & l->mask;

	while (l->pos[i] != EMPTY) {
		if (l->hashes[i] == h)
			return; /* the first position stays */
		i = (i + 1) & l->mask;
	}
	l->hashes[i] = h;
	l->pos[i] = pos;
}

/* Reads the whole line; false (nothing kept) when a cell was not readable. */
static bool build(fx_ctx *c, line *l)
{
	bool was_unsupported = c->unsupported;
	uint32_t cap = 16;

	while (cap < 2 * l->n)
		cap *= 2;
	l->hashes = malloc(cap * sizeof(*l->hashes));
	l->pos = malloc(cap * sizeof(*l->pos));
	if (!l->hashes || !l->pos)
		return false;
	memset(l->pos, 0xff, cap * sizeof(*l->pos));
	l->mask = cap - 1;
	for (uint32_t i = 0; i < l->n; i++) {
		fx_val v = {0};
		uint64_t h;

		sbx_fx__cell(c, l->sheet, l->r0 + l->dr * i, l->c0 + (1 - l->dr) * i, &v);
		if (c->over || (c->unsupported && !was_unsupported)) {
			/* A scan would stop at its match: it must not see these cells. */
			c->unsupported = was_unsupported;
			return false;
		}
		if (value_hash(&v, &h))
			insert(l, h, i);
		else if (v.type == FX_NUM || v.type == FX_BOOL)
			return false; /* NaN */
	}
	return true;
}

int64_t sbx_fx__index_find(fx_ctx *c, uint32_t sheet, uint32_t r0, uint32_t c0, uint32_t dr,
			   uint64_t n, const fx_val *key)
{
	line *l;
	uint64_t h;
	char why[sizeof(c->why)];

	if (n < 8 || n > UINT32_MAX / 4 || !value_hash(key, &h))
		return FX_INDEX_SCAN;
	l = find_line(c, sheet, r0, c0, dr, (uint32_t)n);
	if (!l || l->failed || (!l->ready && ++l->searches < 2))
		return FX_INDEX_SCAN;
	if (!l->ready) {
		/* Building reads every cell: never where a scan might have stayed in the cap. */
		if (c->indexes->cells + n > MAX_INDEXED || c->steps + n > c->max_steps) {
			l->failed = true;
			return FX_INDEX_SCAN;
		}
		memcpy(why, c->why, sizeof(why));
		l->ready = build(c, l);
		memcpy(c->why, why, sizeof(why));
		if (!l->ready) {
			l->failed = true;
			return FX_INDEX_SCAN;
		}
		c->indexes->cells += n;
	}
	for (uint32_t i = (uint32_t)(h >> 32) & l->mask; l->pos[i] != EMPTY; i = (i + 1) & l->mask)
		if (l->hashes[i] == h)
			return l->pos[i];
	return FX_INDEX_ABSENT;
}
