/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A1-style cell references and ranges, and formula text conversion between
 * the A1 style kept in memory ("=SUM(A1:B3)") and ODF's OpenFormula style
 * ("of:=SUM([.A1:.B3])").
 *
 * All row and column numbers in this API are 0-based: "A1" is row 0, col 0;
 * "XFD1048576" is row 1048575, col 16383.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/error.h"

#define SBX_SHEET_MAX_ROWS 1048576u /* rows in a sheet (Excel and LibreOffice) */
#define SBX_SHEET_MAX_COLS 16384u   /* columns, A..XFD */

/* Longest sheet name accepted in a reference (bytes, after unquoting). */
#define SBX_SHEET_NAME_MAX 255

/* One cell reference. `$` markers are kept so formulas can be shifted. */
typedef struct sbx_ref {
	uint32_t row; /* 0-based */
	uint32_t col; /* 0-based */
	bool row_abs; /* "$1" */
	bool col_abs; /* "$A" */
} sbx_ref;

/*
 * A range: first and last cell inclusive, normalised so first <= last.
 * A single cell parses as a range whose first and last are equal.
 * sheet is the sheet name without quotes ("" when the text named none).
 * Whole columns ("A:C") and whole rows ("2:5") are accepted and expand to
 * the full sheet extent.
 */
typedef struct sbx_range {
	char sheet[SBX_SHEET_NAME_MAX + 1];
	sbx_ref first;
	sbx_ref last;
} sbx_range;

/*
 * Parses one cell reference like "A1", "$B$2", "xfd1048576" (case-insensitive).
 * No sheet part, no surrounding spaces. On failure returns -EINVAL and sets
 * err to "Invalid cell reference: ZZZ".
 */
int sbx_ref_parse(const char *text, sbx_ref *out, sbx_error *err);

/*
 * Parses a range with an optional sheet: "A1", "A1:D101", "Sheet1!A1:D101",
 * "'My Sheet'!C3", "'It''s'!A1", "$A$1:$B$2", "A:C", "2:5", "Sheet1!B:B".
 * Returns -EINVAL with "Invalid range: ..." or "Invalid cell reference: ...".
 */
int sbx_range_parse(const char *text, sbx_range *out, sbx_error *err);

/*
 * Writes the column letters of col (0 -> "A", 16383 -> "XFD") into buf,
 * which must hold at least 4 bytes. Returns buf. col must be < SBX_SHEET_MAX_COLS.
 */
char *sbx_ref_col_name(uint32_t col, char buf[static 4]);

/* Parses column letters ("A", "xfd") into a 0-based index; -EINVAL when invalid. */
int sbx_ref_col_parse(const char *letters, uint32_t *out);

/*
 * Formats a cell as "B7" (or "$B$7" when absolute flags are set) into buf,
 * which must hold at least 16 bytes. Returns buf.
 */
char *sbx_ref_format(const sbx_ref *ref, char buf[static 16]);

/*
 * Formats "Sheet!A1" / "'My Sheet'!A1:B2" (quoting the sheet when needed,
 * doubling quotes). sheet may be NULL or "" for no sheet part. Returns a
 * malloc'd string (free() it) or NULL on OOM.
 */
char *sbx_range_format(const char *sheet, const sbx_ref *first, const sbx_ref *last);

/* True when the sheet name must be quoted in a reference ('My Sheet', '2020'). */
bool sbx_ref_sheet_needs_quotes(const char *sheet);

/*
 * Reference words inside formula text, for the scanners of lib/sheet's
 * formula.c and lib/formula's parser. A character of a name or reference
 * word (any byte of a UTF-8 sequence):
 */
static inline bool sbx_ref_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '$' || (c & 0x80);
}
/* w[0..len) is exactly a cell reference ("[$]A[$]1"); 0-based row and column. */
bool sbx_ref_parse_cell_word(const char *w, size_t len, uint32_t *row, uint32_t *col);
/* w[0..len) is exactly a whole-column end "[$]A" (cols) or a whole-row end "[$]12"; 0-based. */
bool sbx_ref_parse_col_row_word(const char *w, size_t len, bool cols, uint32_t *out);

/*
 * Formula text conversion. In memory (and in the API) formulas are A1 style
 * with a leading '=' and ',' between arguments: "=SUM(A1:B3)*'Other'!C2".
 *
 * sbx_formula_from_ods converts ODF text ("of:=SUM([.A1:.B3])*[$Other.C2]",
 * also without the "of:" namespace prefix) into that style. Anything it does
 * not understand is copied unchanged, so the result is always usable for
 * display. On success *out is malloc'd (free() it).
 *
 * sbx_formula_to_ods converts the A1 style back to "of:=..." for writing ODS.
 * String literals are never touched. On success *out is malloc'd.
 *
 * Both return 0, -ENOMEM, or -E2BIG when the text is longer than max_len.
 */
int sbx_formula_from_ods(const char *ods, size_t max_len, char **out, sbx_error *err);
int sbx_formula_to_ods(const char *a1, size_t max_len, char **out, sbx_error *err);

/*
 * Shifts every relative reference in an A1-style formula by (drow, dcol), as
 * spreadsheet applications do when a formula is copied; used to expand XLSX
 * shared formulas. Absolute parts ($) do not move; a reference that would
 * leave the sheet becomes "#REF!". On success *out is malloc'd.
 */
int sbx_formula_shift(const char *a1, int64_t drow, int64_t dcol, size_t max_len, char **out,
		      sbx_error *err);

/*
 * Normalises an A1 formula for comparison: leading '=' ensured, letters
 * outside strings upper-cased, '$' markers and spaces outside strings
 * removed. On success *out is malloc'd.
 */
int sbx_formula_normalize(const char *a1, size_t max_len, char **out, sbx_error *err);
