/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * How lib/sheet stores a book, for lib/sheet's own files and lib/formula,
 * whose evaluator and recalculation read cells in place and write computed
 * values back (a copy per cell through sbx_sheet_get would cost more than
 * the evaluation). Not an API for anyone else: use sbx/sheet.h. Not
 * installed.
 *
 * Storage: a sheet is a dense array of rows (up to the last used row); a row
 * is an array of 16-byte cells sorted by column. Strings (text values and
 * formulas) are interned once per book in an append-only arena and referred
 * to by a 32-bit id, so a million cells cost ~16 MB plus their distinct text.
 */

#include <stddef.h>
#include <stdint.h>

#include "sbx/sheet.h"

/* ---- string pool (pool.c) ---- */

typedef struct sheet_pool {
	char **chunks; /* arena chunks; strings never move */
	size_t nchunks, chunks_cap;
	size_t chunk_used, chunk_size;
	const char **strs; /* id -> string; id 0 is "" / none */
	uint32_t *lens;
	uint32_t nstrs, strs_cap;
	uint32_t *table; /* open addressing: ids, 0 = free */
	uint32_t table_cap;
	uint64_t bytes; /* total text bytes interned */
} sheet_pool;

/*
 * A new chunk of size bytes, appended to chunks[0..*n) (which grows as it
 * must): the step both the pool and the formula arena take. NULL when out of memory.
 */
char *sbx_sheet__chunk_push(char ***chunks, size_t *n, size_t *cap, size_t size);
void sbx_sheet__pool_init(sheet_pool *p);
void sbx_sheet__pool_free(sheet_pool *p);
/* Interns s[0..len) and returns its id (>= 1) in *id; -ENOMEM. */
int sbx_sheet__pool_intern(sheet_pool *p, const char *s, size_t len, uint32_t *id);
static inline const char *sbx_sheet__pool_str(const sheet_pool *p, uint32_t id)
{
	return p->strs[id];
}

/* ---- cells ---- */

typedef struct scell {
	uint16_t col;
	uint8_t kind; /* sbx_cell_kind */
	uint8_t pad;
	uint32_t formula; /* pool id, 0 none */
	union {
		double num;
		uint32_t str; /* pool id for STRING and ERROR */
	} v;
} scell;

typedef struct srow {
	scell *cells;
	uint32_t n, cap;
} srow;

struct sbx_sheet {
	sbx_book *book;
	char *name;
	size_t index;
	srow *rows;
	uint32_t nrows; /* rows allocated and valid in rows[] */
	uint32_t rows_cap;
	uint64_t ncells;
};

struct sbx_book {
	sbx_sheet_format format;
	sbx_sheet **sheets;
	size_t nsheets, sheets_cap;
	sheet_pool pool;
	sbx_sheet_limits limits;
	uint64_t ncells;
};

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian, and back (value.c). */
int64_t sbx_sheet__days_from_civil(int64_t y, unsigned m, unsigned d);
void sbx_sheet__civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);
