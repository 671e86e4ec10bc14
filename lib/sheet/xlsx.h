/* SPDX-License-Identifier: MIT */
#pragma once

/* XLSX reading internals: package parts (xlsx_parts.c) and worksheets (xlsx_read.c). */

#include "sheet-internal.h"
#include "xml.h"

typedef struct xlsx_rel {
	char *id, *type, *target; /* target resolved to a full part name */
} xlsx_rel;

typedef struct xlsx_sheet_ref {
	char *name;
	char *part; /* resolved through the workbook's relationships */
} xlsx_sheet_ref;

typedef struct xlsx_pkg {
	sbx_book *b;
	const void *data;
	size_t len;
	sheet_zip_budget budget;
	const char *file;
	char *workbook; /* part name of the workbook */
	xlsx_sheet_ref *sheets;
	size_t nsheets;
	bool date1904;
	uint8_t *xf_kind; /* cellXfs index -> sbx_cell_kind for numbers */
	size_t nxf;
	uint32_t *sst; /* shared string index -> pool id */
	size_t nsst;
} xlsx_pkg;

/* Resolves target relative to the part source ("xl/workbook.xml"); malloc'd. */
char *sbx_sheet__xlsx_resolve(const char *source, const char *target);

/* Reads a .rels part; -ENOENT when absent. */
int sbx_sheet__xlsx_rels(xlsx_pkg *p, const char *part, xlsx_rel **out, size_t *n, sbx_error *err);
void sbx_sheet__xlsx_rels_free(xlsx_rel *r, size_t n);

/* Workbook (sheets, date1904), styles (number kinds), shared strings. */
int sbx_sheet__xlsx_workbook(xlsx_pkg *p, sbx_error *err);
int sbx_sheet__xlsx_styles(xlsx_pkg *p, const char *part, sbx_error *err);
int sbx_sheet__xlsx_strings(xlsx_pkg *p, const char *part, sbx_error *err);

/* The kind a number format gives a numeric cell: NUMBER, DATE, TIME, PERCENT or CURRENCY. */
sbx_cell_kind sbx_sheet__xlsx_format_kind(unsigned id, const char *code);

/* Interns text with the book's limits; err gets file/part context from x. */
int sbx_sheet__xlsx_intern(xlsx_pkg *p, sheet_xml *x, const char *s, size_t len, uint32_t *id);

/* Reads the text of the current element's subtree (t, r/t; skipping rPh) into out. */
int sbx_sheet__xlsx_text(sheet_xml *x, sbx_buf *out, bool rich);

/* Reads one worksheet part into s. */
int sbx_sheet__xlsx_sheet(xlsx_pkg *p, sbx_sheet *s, const char *part, sbx_error *err);
