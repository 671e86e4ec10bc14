/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Internals shared by the files of lib/sheet. Not installed, not public.
 *
 * Storage: a sheet is a dense array of rows (up to the last used row); a row
 * is an array of 16-byte cells sorted by column. Strings (text values and
 * formulas) are interned once per book in an append-only arena and referred
 * to by a 32-bit id, so a million cells cost ~16 MB plus their distinct text.
 */

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

/* Fills zero fields of l with defaults, clamps rows/cols to the format maximum. */
void sbx_sheet__limits_fill(sbx_sheet_limits *l);

/*
 * Adds a sheet named by a file: any UTF-8 name up to 255 bytes; an empty
 * one becomes "SheetN", a duplicate gets " (2)", " (3)"...
 */
int sbx_sheet__add_read(sbx_book *b, const char *name, sbx_sheet **out, sbx_error *err);
/*
 * Interns s[0..len) in b's text pool within b's limits (max_string, max_text):
 * -E2BIG with "text longer than ..." or "more than ... bytes of text", or -ENOMEM.
 */
int sbx_sheet__book_intern(sbx_book *b, const char *s, size_t len, uint32_t *id, sbx_error *err);

/* Validates a sheet name (see sbx_book_add_sheet). */
int sbx_sheet__check_name(const sbx_book *b, const sbx_sheet *self, const char *name,
			  sbx_error *err);

/*
 * Reader fast path: appends a cell at (row, col) where col is greater than
 * any column already in that row. Interning is done by the caller. Fails
 * with -E2BIG when a cell/row/column limit is hit (err says which).
 */
int sbx_sheet__append(sbx_sheet *s, uint32_t row, uint32_t col, const scell *c, sbx_error *err);

/* Stores a cell (overwrite or insert) given pool ids; kind EMPTY + no formula clears. */
int sbx_sheet__put(sbx_sheet *s, uint32_t row, uint32_t col, const scell *c, sbx_error *err);

/* Fills a public cell from a stored one. */
void sbx_sheet__export(const sbx_book *b, const scell *c, sbx_cell *out);

/* ---- readers and writers ---- */

int sbx_sheet__read_ods(sbx_book *b, const void *data, size_t len, const char *name,
			const sbx_sheet_open_options *o, sbx_error *err);
int sbx_sheet__read_xlsx(sbx_book *b, const void *data, size_t len, const char *name,
			 const sbx_sheet_open_options *o, sbx_error *err);
int sbx_sheet__read_csv(sbx_book *b, const void *data, size_t len, const char *name,
			const sbx_sheet_open_options *o, sbx_error *err);
int sbx_sheet__write_ods(sbx_book *b, sbx_buf *out, sbx_error *err);
int sbx_sheet__write_xlsx(sbx_book *b, sbx_buf *out, sbx_error *err);

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian, and back (value.c). */
int64_t sbx_sheet__days_from_civil(int64_t y, unsigned m, unsigned d);
void sbx_sheet__civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

/* Largest file image the writers produce. */
#define SHEET_OUT_MAX ((size_t)4 << 30)
