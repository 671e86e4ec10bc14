/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Internals shared by the files of lib/sheet. Not installed, not public.
 * The storage itself (cells, rows, the string pool) is in sbx/sheet_store.h,
 * which lib/formula reads too.
 */

#include <stdint.h>

#include "sbx/sheet.h"
#include "sbx/sheet_store.h"

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

/* Largest file image the writers produce. */
#define SHEET_OUT_MAX ((size_t)4 << 30)
