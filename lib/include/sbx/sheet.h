/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The spreadsheet engine: a workbook of named, ordered sheets of cells, read
 * from and written to ODS, XLSX and CSV. Shared by the in-container MCP
 * server, the grader and the task generators; needs only libarchive and
 * libxml2, never Docker or the network.
 *
 * Model
 *   sbx_book   owns its sheets and all their strings.
 *   sbx_sheet  a borrowed handle (sbx_book_sheet / sbx_book_find); valid
 *              until that sheet is removed or the book is freed.
 *   sbx_cell   a value plus an optional formula, filled by sbx_sheet_get.
 *
 * Rows and columns are 0-based everywhere ("A1" is row 0, col 0); use
 * sbx/sheet_ref.h to convert to and from A1 text.
 *
 * Every file is hostile: readers enforce sbx_sheet_limits and fail with a
 * one-line error naming the limit ("'x.ods': content.xml: more than 10000000
 * cells (limit)"), never crash or run out of memory.
 *
 * Not thread-safe per book; distinct books may be used from distinct threads.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/error.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/sheet_ref.h"

typedef struct sbx_book sbx_book;
typedef struct sbx_sheet sbx_sheet;

typedef enum sbx_sheet_format {
	SBX_FORMAT_AUTO = 0, /* open: detect; save: the book's format, else from the extension */
	SBX_FORMAT_ODS,
	SBX_FORMAT_XLSX,
	SBX_FORMAT_CSV,
} sbx_sheet_format;

/* "ods", "xlsx", "csv", "auto". */
const char *sbx_sheet_format_name(sbx_sheet_format f);

/*
 * Value kinds. The number field's meaning per kind:
 *   NUMBER, CURRENCY  the value
 *   PERCENT           the ratio (0.05 shows as 5%)
 *   BOOL              0 or 1
 *   DATE              serial days since 1899-12-30 (the 1900 date system as
 *                     LibreOffice and Excel count it); a fraction is the time
 *                     of day. XLSX date1904 files are converted on read.
 *   TIME              fraction of a day; may exceed 1 for durations
 * STRING and ERROR use text ("#DIV/0!", "#N/A" for errors).
 */
typedef enum sbx_cell_kind {
	SBX_CELL_EMPTY = 0,
	SBX_CELL_NUMBER,
	SBX_CELL_STRING,
	SBX_CELL_BOOL,
	SBX_CELL_DATE,
	SBX_CELL_TIME,
	SBX_CELL_PERCENT,
	SBX_CELL_CURRENCY,
	SBX_CELL_ERROR,
} sbx_cell_kind;

/* "empty", "number", "string", "boolean", "date", "time", "percentage", "currency", "error". */
const char *sbx_cell_kind_name(sbx_cell_kind k);

/* True for the kinds whose value is the number field (NUMBER, BOOL, DATE, TIME, PERCENT, CURRENCY).
 */
bool sbx_cell_kind_is_numeric(sbx_cell_kind k);

/*
 * One cell. A formula cell carries its formula text (A1 style, leading '=')
 * and its cached value in kind/number/text; a formula without a cached value
 * has kind EMPTY. Strings filled in by sbx_sheet_get are borrowed from the
 * book and stay valid until the book is freed (the string store only grows).
 */
typedef struct sbx_cell {
	sbx_cell_kind kind;
	double number;	     /* see sbx_cell_kind */
	const char *text;    /* STRING, ERROR: UTF-8, NUL-terminated; NULL otherwise */
	const char *formula; /* "=A2*B2", or NULL */
} sbx_cell;

#define SBX_CELL_INIT                                                                              \
	{                                                                                          \
		SBX_CELL_EMPTY, 0.0, NULL, NULL                                                    \
	}

/* True when the cell has neither a value nor a formula. */
bool sbx_cell_is_empty(const sbx_cell *c);

/*
 * Limits on everything a file controls. Zero in a field means "use the
 * default". Initialise with SBX_SHEET_LIMITS_INIT or sbx_sheet_limits_default.
 */
typedef struct sbx_sheet_limits {
	unsigned version;
	uint64_t max_file_size; /* bytes of the file itself; default 256 MiB */
	uint64_t max_unpacked;	/* total bytes decompressed from a zip; default 2 GiB */
	uint32_t max_ratio;	/* unpacked / packed, checked past 16 MiB; default 200 */
	uint32_t max_entries;	/* zip entries; default 10000 */
	uint32_t max_depth;	/* XML element nesting; default 128 */
	uint64_t max_cells;	/* non-empty cells in the book; default 10,000,000 */
	uint32_t max_string;	/* bytes in one string, formula or attribute; default 1 MiB */
	uint64_t max_text;	/* total bytes of distinct strings; default 1 GiB */
	uint32_t max_rows;	/* sheet rows; default and maximum 1,048,576 */
	uint32_t max_cols;	/* sheet columns; default and maximum 16,384 */
	uint32_t max_sheets;	/* sheets in a book; default 1024 */
} sbx_sheet_limits;

#define SBX_SHEET_LIMITS_VERSION 1
#define SBX_SHEET_LIMITS_INIT                                                                      \
	{                                                                                          \
		.version = SBX_SHEET_LIMITS_VERSION                                                \
	}

/* Fills every field with its default. */
void sbx_sheet_limits_default(sbx_sheet_limits *l);

/* Options for opening a file. NULL options mean all defaults. */
typedef struct sbx_sheet_open_options {
	unsigned version;
	sbx_sheet_format format; /* AUTO: by content (zip magic, ODS mimetype), then extension */
	sbx_sheet_limits limits;
	char csv_delimiter; /* 0: ',' */
	bool csv_all_text; /* CSV: keep every field as a string (default: numbers become numbers) */
} sbx_sheet_open_options;

#define SBX_SHEET_OPEN_OPTIONS_VERSION 1
#define SBX_SHEET_OPEN_OPTIONS_INIT                                                                \
	{                                                                                          \
		.version = SBX_SHEET_OPEN_OPTIONS_VERSION, .limits = SBX_SHEET_LIMITS_INIT         \
	}

/* ---- Workbook ---------------------------------------------------------- */

/* Creates an empty book (no sheets) whose save format is fmt (may be AUTO). */
int sbx_book_new(sbx_sheet_format fmt, sbx_book **out, sbx_error *err);

/*
 * Opens path. On success *out owns the book (sbx_book_free it). Errors name
 * the file: "'x.ods': content.xml: line 3: ...", "'x.ods': not a spreadsheet".
 */
int sbx_book_open(const char *path, const sbx_sheet_open_options *opts, sbx_book **out,
		  sbx_error *err);

/*
 * Opens a file image held in memory (not copied; need not outlive the call).
 * name is used in error messages only (may be NULL: "<memory>").
 */
int sbx_book_open_memory(const void *data, size_t len, const char *name,
			 const sbx_sheet_open_options *opts, sbx_book **out, sbx_error *err);

/* Frees the book and every sheet handle into it. Accepts NULL; returns NULL. */
sbx_book *sbx_book_free(sbx_book *b);
SBX_DEFINE_CLEANUP(sbx_book, sbx_book_free)
#define _cleanup_book_ _cleanup_(sbx_book_freep)

/* The format the book was opened from (or created with). */
sbx_sheet_format sbx_book_format(const sbx_book *b);

/*
 * Writes the book to path atomically (temp file in the same directory, fsync,
 * rename), so a reader never sees half a file. fmt AUTO: the book's format,
 * else from path's extension (.ods/.xlsx/.csv). CSV writes the first sheet
 * only (sbx_sheet_write_csv writes any one). Formula cells are written with
 * their cached values.
 */
int sbx_book_save(sbx_book *b, const char *path, sbx_sheet_format fmt, sbx_error *err);

/* Like sbx_book_save into memory: out receives the file bytes (it is reset first). */
int sbx_book_save_memory(sbx_book *b, sbx_sheet_format fmt, sbx_buf *out, sbx_error *err);

/*
 * Guesses the format from the first bytes of a file (at least 64 are best:
 * a zip whose first entry is the ODF mimetype is ODS, another zip XLSX
 * unless the name says .ods) and otherwise from the name's extension
 * (.ods, .xlsx/.xlsm, .csv/.txt). Returns AUTO when unknown.
 */
sbx_sheet_format sbx_sheet_detect_format(const char *name, const void *head, size_t len);

/* ---- Sheets ------------------------------------------------------------ */

size_t sbx_book_sheet_count(const sbx_book *b);

/* The sheet at index (0-based, in book order), or NULL when out of range. */
sbx_sheet *sbx_book_sheet(const sbx_book *b, size_t index);

/* The sheet named name (exact match first, then ASCII case-insensitive), or NULL. */
sbx_sheet *sbx_book_find(const sbx_book *b, const char *name);

/*
 * Adds a sheet at position index (SIZE_MAX or past the end: append).
 * Names must be 1..255 bytes of valid UTF-8, unique (case-insensitive), and
 * free of []*?:/\ characters. On success *out (may be NULL) receives the handle.
 */
int sbx_book_add_sheet(sbx_book *b, const char *name, size_t index, sbx_sheet **out,
		       sbx_error *err);

/* Renames a sheet (same rules as adding). Formulas are not rewritten. */
int sbx_sheet_rename(sbx_sheet *s, const char *name, sbx_error *err);

/* Removes a sheet and invalidates its handle. */
int sbx_book_remove_sheet(sbx_book *b, sbx_sheet *s, sbx_error *err);

/* Moves a sheet to index (clamped to the end). */
int sbx_book_move_sheet(sbx_book *b, sbx_sheet *s, size_t index, sbx_error *err);

const char *sbx_sheet_name(const sbx_sheet *s);
size_t sbx_sheet_index(const sbx_sheet *s);
sbx_book *sbx_sheet_book(const sbx_sheet *s);

/*
 * The used range: *rows = 1 + the last row holding a value or formula,
 * *cols = 1 + the last such column; both 0 for an empty sheet.
 */
void sbx_sheet_used_range(const sbx_sheet *s, uint32_t *rows, uint32_t *cols);

/* Number of non-empty cells (values or formulas) in the sheet. */
uint64_t sbx_sheet_cell_count(const sbx_sheet *s);

/* ---- Cells ------------------------------------------------------------- */

/*
 * Reads a cell into *out (always filled; EMPTY outside the used range).
 * Returns the kind. Strings point into the book (see sbx_cell).
 */
sbx_cell_kind sbx_sheet_get(const sbx_sheet *s, uint32_t row, uint32_t col, sbx_cell *out);

/*
 * Writes a cell: kind/number/text as in sbx_cell, formula optional. The book
 * copies the strings. An EMPTY kind with a NULL formula clears the cell.
 * A formula is stored as given after trimming and adding a leading '=' if
 * missing; its cached value is the rest of the cell (EMPTY for "none").
 * Errors: -ERANGE for a cell beyond the limits, -EINVAL for a bad value
 * (NaN/inf numbers, NULL text for STRING/ERROR, text over max_string).
 */
int sbx_sheet_set(sbx_sheet *s, uint32_t row, uint32_t col, const sbx_cell *value, sbx_error *err);

/* Shorthands for sbx_sheet_set. */
int sbx_sheet_set_number(sbx_sheet *s, uint32_t row, uint32_t col, double v, sbx_error *err);
int sbx_sheet_set_string(sbx_sheet *s, uint32_t row, uint32_t col, const char *v, sbx_error *err);
int sbx_sheet_set_bool(sbx_sheet *s, uint32_t row, uint32_t col, bool v, sbx_error *err);
/* cached may be NULL (no cached value); its formula field is ignored. */
int sbx_sheet_set_formula(sbx_sheet *s, uint32_t row, uint32_t col, const char *formula,
			  const sbx_cell *cached, sbx_error *err);
int sbx_sheet_clear(sbx_sheet *s, uint32_t row, uint32_t col);

/*
 * Inserts count empty rows before row (cells at and below move down), or
 * deletes count rows starting at row (cells below move up). Fails with
 * -ERANGE when content would be pushed past the last row. Formulas are not
 * rewritten.
 */
int sbx_sheet_insert_rows(sbx_sheet *s, uint32_t row, uint32_t count, sbx_error *err);
int sbx_sheet_delete_rows(sbx_sheet *s, uint32_t row, uint32_t count, sbx_error *err);

/* The same for columns. */
int sbx_sheet_insert_cols(sbx_sheet *s, uint32_t col, uint32_t count, sbx_error *err);
int sbx_sheet_delete_cols(sbx_sheet *s, uint32_t col, uint32_t count, sbx_error *err);

/*
 * Walks the non-empty cells in row-major order:
 *
 *   sbx_sheet_iter it = SBX_SHEET_ITER_INIT;
 *   uint32_t r, c; sbx_cell cell;
 *   while (sbx_sheet_next(s, &it, &r, &c, &cell)) ...
 *
 * Modifying the sheet during a walk is not allowed.
 */
typedef struct sbx_sheet_iter {
	uint32_t row;
	uint32_t idx;
} sbx_sheet_iter;

#define SBX_SHEET_ITER_INIT                                                                        \
	{                                                                                          \
		0, 0                                                                               \
	}

bool sbx_sheet_next(const sbx_sheet *s, sbx_sheet_iter *it, uint32_t *row, uint32_t *col,
		    sbx_cell *out);

/* ---- Values ------------------------------------------------------------ */

/*
 * Appends the display text of a cell's value to out: numbers in the
 * shortest form that reads back to the same double ("0.1", "26561.04",
 * "1e+21"), booleans "TRUE"/"FALSE", dates "2024-03-01" or
 * "2024-03-01T12:30:00", times "12:30:00", percentages as the ratio
 * ("0.05"), strings and errors as they are, EMPTY as "". Returns 0 or the
 * sbx_buf error.
 */
int sbx_cell_to_text(const sbx_cell *c, sbx_buf *out);

/* Formats a double in the shortest round-trip form into buf (>= 32 bytes). Returns buf. */
char *sbx_sheet_format_number(double v, char buf[static 32]);

/*
 * Parses an ISO-8601 date or date-time ("2024-03-01", "2024-03-01T12:30:00",
 * fractional seconds and a trailing 'Z' allowed) into a serial day number.
 * Returns 0 or -EINVAL.
 */
int sbx_sheet_parse_date(const char *iso, double *serial);

/* Parses an ISO-8601 duration "PT19H03M00S" / "PT1H2M3.5S" into a fraction of a day. */
int sbx_sheet_parse_time(const char *iso, double *days);

/* Formats a serial as "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SS" (with a time part); buf >= 40 bytes. */
char *sbx_sheet_format_date(double serial, char buf[static 40]);

/* Formats a day fraction as "HH:MM:SS" (hours may exceed 23); buf >= 40 bytes. */
char *sbx_sheet_format_time(double days, char buf[static 40]);

/* ---- CSV --------------------------------------------------------------- */

/*
 * Writes one sheet as RFC 4180 CSV (CRLF line ends, fields quoted when they
 * hold the delimiter, a quote, CR or LF) into out, which is reset first.
 * The rectangle written is the used range. delimiter 0 means ','.
 */
int sbx_sheet_write_csv(const sbx_sheet *s, char delimiter, sbx_buf *out, sbx_error *err);
