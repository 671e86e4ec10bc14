/* SPDX-License-Identifier: MIT */
#pragma once

/* Test helpers: build zip images around hand-written XML, find test data. */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/sheet.h"
#include "zip.h"
#include "xlsx.h"

#define CONTENT_HEAD                                                                               \
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"                                             \
	"<office:document-content "                                                                \
	"xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" "                       \
	"xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" "                           \
	"xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\">"                         \
	"<office:body><office:spreadsheet>"
#define CONTENT_TAIL "</office:spreadsheet></office:body></office:document-content>"

/* A zip with the given entries (name, data pairs; NULL-terminated). */
static inline void make_zip(sbx_buf *out, const char *const *entries, const size_t *lens)
{
	sheet_zip_writer w;
	sbx_error err = SBX_ERROR_INIT;

	sbx_buf_reset(out);
	sbx_sheet__zipw_init(&w, out);
	for (size_t i = 0; entries[2 * i]; i++) {
		size_t len = lens && lens[i] ? lens[i] : strlen(entries[2 * i + 1]);
		ck_assert_int_eq(sbx_sheet__zipw_add(&w, entries[2 * i], entries[2 * i + 1], len,
						     strcmp(entries[2 * i], "mimetype") != 0, &err),
				 0);
	}
	ck_assert_int_eq(sbx_sheet__zipw_finish(&w, &err), 0);
	sbx_sheet__zipw_free(&w);
}

/* An ODS image whose content.xml is content (len 0: strlen). */
static inline void make_ods(sbx_buf *out, const char *content, size_t len)
{
	const char *e[] = {
		"mimetype",
		"application/vnd.oasis.opendocument.spreadsheet",
		"META-INF/manifest.xml",
		"<manifest:manifest "
		"xmlns:manifest=\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\"/>",
		"content.xml",
		content,
		NULL};
	size_t lens[] = {0, 0, len};
	make_zip(out, e, lens);
}

/* Opens an in-memory image; returns the error code, fills *err. */
static inline int open_image(const sbx_buf *img, const char *name, const sbx_sheet_open_options *o,
			     sbx_book **out, sbx_error *err)
{
	sbx_error_clear(err);
	return sbx_book_open_memory(img->data, img->len, name, o, out, err);
}

/* Path of a file under tests/data/sheet/ (static buffer). */
static inline const char *data_path(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("SBX_SOURCE_ROOT");

	snprintf(buf, sizeof(buf), "%s/tests/data/sheet/%s", root ? root : "..", rel);
	return buf;
}

/* Cell at an A1 reference. */
static inline sbx_cell_kind cell_at(const sbx_sheet *s, const char *a1, sbx_cell *c)
{
	sbx_ref r;
	ck_assert_int_eq(sbx_ref_parse(a1, &r, NULL), 0);
	return sbx_sheet_get(s, r.row, r.col, c);
}

static inline void assert_number(const sbx_sheet *s, const char *a1, sbx_cell_kind kind, double v)
{
	sbx_cell c;
	ck_assert_msg(cell_at(s, a1, &c) == kind, "%s: kind %s, want %s", a1,
		      sbx_cell_kind_name(c.kind), sbx_cell_kind_name(kind));
	ck_assert_msg(c.number == v, "%s: %.17g, want %.17g", a1, c.number, v);
}

static inline void assert_text(const sbx_sheet *s, const char *a1, sbx_cell_kind kind,
			       const char *v)
{
	sbx_cell c;
	ck_assert_msg(cell_at(s, a1, &c) == kind, "%s: kind %s, want %s", a1,
		      sbx_cell_kind_name(c.kind), sbx_cell_kind_name(kind));
	ck_assert_str_eq(c.text, v);
}

static inline void assert_formula(const sbx_sheet *s, const char *a1, const char *f)
{
	sbx_cell c;
	cell_at(s, a1, &c);
	ck_assert_msg(c.formula && strcmp(c.formula, f) == 0, "%s: formula %s, want %s", a1,
		      c.formula ? c.formula : "(none)", f);
}

/* Fills a book with one cell of every kind (shared by the writer tests). */
static inline sbx_book *sample_book(sbx_sheet_format fmt)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;
	sbx_sheet *s, *s2;

	ck_assert_int_eq(sbx_book_new(fmt, &b, &err), 0);
	ck_assert_int_eq(sbx_book_add_sheet(b, "Data", SIZE_MAX, &s, &err), 0);
	ck_assert_int_eq(sbx_book_add_sheet(b, "It's 2nd", SIZE_MAX, &s2, &err), 0);
	sbx_sheet_set_string(s, 0, 0, "Name", &err);
	sbx_sheet_set_string(s, 0, 1, "Value", &err);
	sbx_sheet_set_string(s, 1, 0, " two  spaces\nline2 & <x> \"q\"\ttab", &err);
	sbx_sheet_set_number(s, 1, 1, 0.1, &err);
	sbx_sheet_set_number(s, 2, 1, 1.0 / 3, &err);
	sbx_sheet_set_number(s, 2, 2, -123456789.125, &err);
	sbx_sheet_set_number(s, 2, 3, 1e-7, &err);
	sbx_cell pc = {SBX_CELL_PERCENT, 0.125, NULL, NULL};
	sbx_sheet_set(s, 3, 1, &pc, &err);
	sbx_cell dc = {SBX_CELL_DATE, 45352, NULL, NULL};
	sbx_sheet_set(s, 4, 1, &dc, &err);
	sbx_cell dt = {SBX_CELL_DATE, 45352.5, NULL, NULL};
	sbx_sheet_set(s, 5, 1, &dt, &err);
	sbx_cell tc = {SBX_CELL_TIME, 0.75, NULL, NULL};
	sbx_sheet_set(s, 6, 1, &tc, &err);
	sbx_sheet_set_bool(s, 7, 1, true, &err);
	sbx_sheet_set_bool(s, 7, 2, false, &err);
	sbx_cell cached = {SBX_CELL_NUMBER, 0.1 + 1.0 / 3, NULL, NULL};
	sbx_sheet_set_formula(s, 8, 1, "=B2+B3", &cached, &err);
	sbx_cell cur = {SBX_CELL_CURRENCY, 1234.5, NULL, NULL};
	sbx_sheet_set(s, 9, 1, &cur, &err);
	sbx_sheet_set_string(s, 10, 0, "ünïcødé ✓", &err);
	sbx_sheet_set_number(s, 20, 5, 1e21, &err);
	sbx_cell sc = {SBX_CELL_STRING, 0, "yes", NULL};
	sbx_sheet_set_formula(s, 11, 1, "=IF(B2>0,\"yes\",\"no\")", &sc, &err);
	sbx_cell colsum = {SBX_CELL_NUMBER, -123456789.125, NULL, NULL};
	sbx_sheet_set_formula(s, 0, 3, "=SUM(C:C)", &colsum, &err);
	sbx_cell n2 = {SBX_CELL_NUMBER, 0.2, NULL, NULL};
	sbx_sheet_set_formula(s2, 0, 0, "=Data!B2*2", &n2, &err);
	sbx_sheet_set_number(s2, 2, 2, 3, &err);
	ck_assert_int_eq(err.code, 0);
	return b;
}

/* Checks the values sample_book wrote (after a round trip through any writer). */
static inline void check_sample_values(const sbx_book *b, bool exact_kinds)
{
	const sbx_sheet *s = sbx_book_find(b, "Data"), *s2 = sbx_book_find(b, "It's 2nd");
	sbx_cell c;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(s2);
	assert_text(s, "A1", SBX_CELL_STRING, "Name");
	assert_text(s, "A2", SBX_CELL_STRING, " two  spaces\nline2 & <x> \"q\"\ttab");
	assert_number(s, "B2", SBX_CELL_NUMBER, 0.1);
	assert_number(s, "B3", SBX_CELL_NUMBER, 1.0 / 3);
	assert_number(s, "C3", SBX_CELL_NUMBER, -123456789.125);
	assert_number(s, "D3", SBX_CELL_NUMBER, 1e-7);
	assert_number(s, "B4", SBX_CELL_PERCENT, 0.125);
	assert_number(s, "B5", SBX_CELL_DATE, 45352);
	assert_number(s, "B6", SBX_CELL_DATE, 45352.5);
	assert_number(s, "B7", SBX_CELL_TIME, 0.75);
	assert_number(s, "B8", SBX_CELL_BOOL, 1);
	assert_number(s, "C8", SBX_CELL_BOOL, 0);
	assert_number(s, "B9", SBX_CELL_NUMBER, 0.1 + 1.0 / 3);
	assert_formula(s, "B9", "=B2+B3");
	assert_number(s, "B10", exact_kinds ? SBX_CELL_CURRENCY : SBX_CELL_NUMBER, 1234.5);
	assert_text(s, "A11", SBX_CELL_STRING, "ünïcødé ✓");
	assert_number(s, "F21", SBX_CELL_NUMBER, 1e21);
	assert_text(s, "B12", SBX_CELL_STRING, "yes");
	assert_formula(s, "B12", "=IF(B2>0,\"yes\",\"no\")");
	assert_number(s, "D1", SBX_CELL_NUMBER, -123456789.125);
	assert_formula(s, "D1", "=SUM(C:C)");
	assert_number(s2, "A1", SBX_CELL_NUMBER, 0.2);
	assert_formula(s2, "A1", "=Data!B2*2");
	ck_assert_int_eq(cell_at(s, "A3", &c), SBX_CELL_EMPTY);
	uint32_t rows, cols;
	sbx_sheet_used_range(s, &rows, &cols);
	ck_assert_uint_eq(rows, 21);
	ck_assert_uint_eq(cols, 6);
}

/*
 * Opens tests/data/sheet/name, lo-source.fods as LibreOffice saved it, and
 * checks it holds the values of the source.
 */
static inline void check_lo_saved(const char *name)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;
	sbx_cell c;

	ck_assert_int_eq(sbx_book_open(data_path(name), NULL, &b, &err), 0);
	ck_assert_uint_eq(sbx_book_sheet_count(b), 2);
	const sbx_sheet *s = sbx_book_sheet(b, 0), *s2 = sbx_book_sheet(b, 1);
	ck_assert_str_eq(sbx_sheet_name(s), "Data");
	ck_assert_str_eq(sbx_sheet_name(s2), "Second Sheet");
	/* Merged A1:B1: the covered cell takes B1, so "Third" stays in C1. */
	assert_text(s, "A1", SBX_CELL_STRING, "Merged title");
	ck_assert_int_eq(cell_at(s, "B1", &c), SBX_CELL_EMPTY);
	assert_text(s, "C1", SBX_CELL_STRING, "Third");
	assert_number(s, "B2", SBX_CELL_NUMBER, 7);
	assert_number(s, "C2", SBX_CELL_NUMBER, 7);
	assert_number(s, "D2", SBX_CELL_NUMBER, 0.1);
	for (int r = 3; r <= 5; r++) {
		char a[8];
		snprintf(a, sizeof(a), "A%d", r);
		assert_text(s, a, SBX_CELL_STRING, "rep");
		snprintf(a, sizeof(a), "B%d", r);
		assert_number(s, a, SBX_CELL_NUMBER, 2);
	}
	assert_number(s, "A6", SBX_CELL_DATE, 45352);
	assert_number(s, "B6", SBX_CELL_TIME, (19 * 60 + 3) / 1440.0);
	assert_number(s, "C6", SBX_CELL_PERCENT, 0.125);
	assert_number(s, "D6", SBX_CELL_BOOL, 1);
	assert_number(s, "E6", SBX_CELL_CURRENCY, 1234.5);
	assert_number(s, "A7", SBX_CELL_NUMBER, 10.5);
	assert_formula(s, "A7", "=A2*B2");
	assert_formula(s, "B7", "=SUM(B3:B5)");
	assert_text(s, "C7", SBX_CELL_ERROR, "#DIV/0!");
	assert_number(s, "D7", SBX_CELL_NUMBER, 43);
	assert_formula(s, "D7", "='Second Sheet'!J50+1");
	assert_text(s, "E7", SBX_CELL_STRING, "big");
	assert_formula(s, "E7", "=IF(A2>1,\"big\",\"small\")");
	assert_text(s, "A8", SBX_CELL_STRING, "line one\nline   two");
	assert_text(s, "E8", SBX_CELL_STRING, "after gap");
	assert_number(s2, "J50", SBX_CELL_NUMBER, 42);
	ck_assert_uint_eq(sbx_sheet_cell_count(s2), 1);
	uint32_t rows, cols;
	sbx_sheet_used_range(s, &rows, &cols);
	ck_assert_uint_eq(rows, 8);
	ck_assert_uint_eq(cols, 5);
	sbx_book_free(b);
}
