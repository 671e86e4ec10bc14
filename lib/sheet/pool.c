/* SPDX-License-Identifier: MIT */
/*
 * The string pool of a book: every text value and formula is stored once,
 * in chunks that never move, and named by a 32-bit id. Strings handed out
 * through sbx_cell therefore stay valid until the book is freed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sheet-internal.h"

#define CHUNK_MIN ((size_t)64 << 10)

static uint32_t hash_bytes(const char *s, size_t len)
{
	/* FNV-1a: fast, good enough for an open-addressing table. */
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

void sbx_sheet__pool_init(sheet_pool *p)
{
	memset(p, 0, sizeof(*p));
}

void sbx_sheet__pool_free(sheet_pool *p)
{
	if (!p)
		return;
	sbx_strv_free_n(p->chunks, p->nchunks);
	sbx_free_all(p->strs, p->lens, p->table);
	memset(p, 0, sizeof(*p));
}

char *sbx_sheet__chunk_push(char ***chunks, size_t *n, size_t *cap, size_t size)
{
	char *c;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		char **nc = realloc(*chunks, ncap * sizeof(*nc));

		if (!nc)
			return NULL;
		*chunks = nc;
		*cap = ncap;
	}
	c = malloc(size);
	if (c)
		(*chunks)[(*n)++] = c;
	return c;
}

static char *arena_alloc(sheet_pool *p, size_t n)
{
	if (p->nchunks == 0 || p->chunk_size - p->chunk_used < n) {
		size_t size = n > CHUNK_MIN ? n : CHUNK_MIN;
		char *c;

		if (p->nchunks > 0 && p->chunk_size * 2 > size && p->chunk_size < ((size_t)8 << 20))
			size = p->chunk_size * 2 > n ? p->chunk_size * 2 : n;
		c = sbx_sheet__chunk_push(&p->chunks, &p->nchunks, &p->chunks_cap, size);
		if (!c)
			return NULL;
		p->chunk_size = size;
		p->chunk_used = 0;
	}
	char *r = p->chunks[p->nchunks - 1] + p->chunk_used;
	p->chunk_used += n;
	return r;
}

static int table_grow(sheet_pool *p)
{
	uint32_t cap = p->table_cap ? p->table_cap * 2 : 1024;
	uint32_t *t;

	if (cap < p->table_cap)
		return -ENOMEM;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (uint32_t id = 1; id < p->nstrs; id++) {
		uint32_t h = hash_bytes(p->strs[id], p->lens[id]) & (cap - 1);
		while (t[h])
			h = (h + 1) & (cap - 1);
		t[h] = id;
	}
	free(p->table);
	p->table = t;
	p->table_cap = cap;
	return 0;
}

int sbx_sheet__pool_intern(sheet_pool *p, const char *s, size_t len, uint32_t *id)
{
	uint32_t h, slot;
	char *copy;

	if (len > UINT32_MAX - 1)
		return -E2BIG;
	if (p->nstrs == 0) {
		/* id 0 is reserved for "none". */
		p->strs_cap = 1024;
		p->strs = malloc(p->strs_cap * sizeof(*p->strs));
		p->lens = malloc(p->strs_cap * sizeof(*p->lens));
		if (!p->strs || !p->lens)
			return -ENOMEM;
		p->strs[0] = "";
		p->lens[0] = 0;
		p->nstrs = 1;
	}
	if ((uint64_t)(p->nstrs + 1) * 2 > p->table_cap) {
		int r = table_grow(p);
		if (r < 0)
			return r;
	}
	h = hash_bytes(s, len);
	slot = h & (p->table_cap - 1);
	while (p->table[slot]) {
		uint32_t cand = p->table[slot];
		if (p->lens[cand] == len && memcmp(p->strs[cand], s, len) == 0) {
			*id = cand;
			return 0;
		}
		slot = (slot + 1) & (p->table_cap - 1);
	}
	if (p->nstrs == UINT32_MAX)
		return -E2BIG;
	if (p->nstrs == p->strs_cap) {
		uint32_t cap = p->strs_cap * 2;
		const char **ns = realloc(p->strs, (size_t)cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		p->strs = ns;
		uint32_t *nl = realloc(p->lens, (size_t)cap * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		p->lens = nl;
		p->strs_cap = cap;
	}
	copy = arena_alloc(p, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = '\0';
	p->strs[p->nstrs] = copy;
	p->lens[p->nstrs] = (uint32_t)len;
	p->table[slot] = p->nstrs;
	p->bytes += len + 1;
	*id = p->nstrs++;
	return 0;
}
