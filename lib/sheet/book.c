/* SPDX-License-Identifier: MIT */
/* The workbook: its sheets, their names and order, and its limits. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sheet-internal.h"

void sbx_sheet_limits_default(sbx_sheet_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->version = SBX_SHEET_LIMITS_VERSION;
	sbx_sheet__limits_fill(l);
}

void sbx_sheet__limits_fill(sbx_sheet_limits *l)
{
	if (!l->max_file_size)
		l->max_file_size = (uint64_t)256 << 20;
	if (!l->max_unpacked)
		l->max_unpacked = (uint64_t)2 << 30;
	if (!l->max_ratio)
		l->max_ratio = 200;
	if (!l->max_entries)
		l->max_entries = 10000;
	if (!l->max_depth)
		l->max_depth = 128;
	if (!l->max_cells)
		l->max_cells = 10000000;
	if (!l->max_string)
		l->max_string = 1u << 20;
	if (!l->max_text)
		l->max_text = (uint64_t)1 << 30;
	if (!l->max_rows || l->max_rows > SBX_SHEET_MAX_ROWS)
		l->max_rows = SBX_SHEET_MAX_ROWS;
	if (!l->max_cols || l->max_cols > SBX_SHEET_MAX_COLS)
		l->max_cols = SBX_SHEET_MAX_COLS;
	if (!l->max_sheets)
		l->max_sheets = 1024;
}

const char *sbx_sheet_format_name(sbx_sheet_format f)
{
	switch (f) {
	case SBX_FORMAT_ODS:
		return "ods";
	case SBX_FORMAT_XLSX:
		return "xlsx";
	case SBX_FORMAT_CSV:
		return "csv";
	default:
		return "auto";
	}
}

int sbx_book_new(sbx_sheet_format fmt, sbx_book **out, sbx_error *err)
{
	sbx_book *b = calloc(1, sizeof(*b));

	if (!b)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	b->format = fmt;
	sbx_sheet__pool_init(&b->pool);
	sbx_sheet_limits_default(&b->limits);
	*out = b;
	return 0;
}

static void sheet_free(sbx_sheet *s)
{
	if (!s)
		return;
	for (uint32_t r = 0; r < s->nrows; r++)
		free(s->rows[r].cells);
	free(s->rows);
	free(s->name);
	free(s);
}

sbx_book *sbx_book_free(sbx_book *b)
{
	if (!b)
		return NULL;
	for (size_t i = 0; i < b->nsheets; i++)
		sheet_free(b->sheets[i]);
	free(b->sheets);
	sbx_sheet__pool_free(&b->pool);
	free(b);
	return NULL;
}

sbx_sheet_format sbx_book_format(const sbx_book *b)
{
	return b->format;
}

size_t sbx_book_sheet_count(const sbx_book *b)
{
	return b->nsheets;
}

sbx_sheet *sbx_book_sheet(const sbx_book *b, size_t index)
{
	return index < b->nsheets ? b->sheets[index] : NULL;
}

sbx_sheet *sbx_book_find(const sbx_book *b, const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < b->nsheets; i++)
		if (strcmp(b->sheets[i]->name, name) == 0)
			return b->sheets[i];
	for (size_t i = 0; i < b->nsheets; i++)
		if (strcasecmp(b->sheets[i]->name, name) == 0)
			return b->sheets[i];
	return NULL;
}

static bool valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		int n;
		if (*p < 0x80) {
			p++;
			continue;
		} else if ((*p & 0xe0) == 0xc0 && *p >= 0xc2)
			n = 1;
		else if ((*p & 0xf0) == 0xe0)
			n = 2;
		else if ((*p & 0xf8) == 0xf0 && *p <= 0xf4)
			n = 3;
		else
			return false;
		p++;
		for (int i = 0; i < n; i++, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

int sbx_sheet__check_name(const sbx_book *b, const sbx_sheet *self, const char *name,
			  sbx_error *err)
{
	size_t len = name ? strlen(name) : 0;

	if (len == 0)
		return sbx_error_set(err, -EINVAL, "sheet name is empty");
	if (len > SBX_SHEET_NAME_MAX)
		return sbx_error_set(err, -EINVAL, "sheet name is longer than %d bytes",
				     SBX_SHEET_NAME_MAX);
	if (strpbrk(name, "[]*?:/\\") || !valid_utf8(name))
		return sbx_error_set(err, -EINVAL,
				     "sheet name '%s' is invalid (no []*?:/\\ characters)", name);
	if (name[0] == '\'' || name[len - 1] == '\'')
		return sbx_error_set(err, -EINVAL,
				     "sheet name '%s' is invalid (cannot start or end with ')",
				     name);
	for (size_t i = 0; i < b->nsheets; i++)
		if (b->sheets[i] != self && strcasecmp(b->sheets[i]->name, name) == 0)
			return sbx_error_set(err, -EEXIST, "sheet '%s' already exists", name);
	return 0;
}

static int add_sheet(sbx_book *b, const char *name, size_t index, sbx_sheet **out, sbx_error *err)
{
	sbx_sheet *s;

	if (b->nsheets >= b->limits.max_sheets)
		return sbx_error_set(err, -E2BIG, "more than %u sheets (limit)",
				     b->limits.max_sheets);
	if (b->nsheets == b->sheets_cap) {
		size_t cap = b->sheets_cap ? b->sheets_cap * 2 : 4;
		sbx_sheet **ns = realloc(b->sheets, cap * sizeof(*ns));
		if (!ns)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		b->sheets = ns;
		b->sheets_cap = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->name = strdup(name))) {
		free(s);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	s->book = b;
	if (index > b->nsheets)
		index = b->nsheets;
	memmove(b->sheets + index + 1, b->sheets + index,
		(b->nsheets - index) * sizeof(*b->sheets));
	b->sheets[index] = s;
	b->nsheets++;
	for (size_t i = index; i < b->nsheets; i++)
		b->sheets[i]->index = i;
	if (out)
		*out = s;
	return 0;
}

int sbx_book_add_sheet(sbx_book *b, const char *name, size_t index, sbx_sheet **out, sbx_error *err)
{
	int r = sbx_sheet__check_name(b, NULL, name, err);

	return r < 0 ? r : add_sheet(b, name, index, out, err);
}

static bool name_taken(const sbx_book *b, const char *name)
{
	for (size_t i = 0; i < b->nsheets; i++)
		if (strcasecmp(b->sheets[i]->name, name) == 0)
			return true;
	return false;
}

int sbx_sheet__add_read(sbx_book *b, const char *name, sbx_sheet **out, sbx_error *err)
{
	char base[SBX_SHEET_NAME_MAX + 1], buf[SBX_SHEET_NAME_MAX + 16];
	size_t len = name ? strlen(name) : 0;

	/*
	 * Files are read as they are: other writers allow names our editors
	 * refuse (':' and friends). Only what would break lookups is fixed: an
	 * empty name gets one, a duplicate gets a suffix.
	 */
	if (len > SBX_SHEET_NAME_MAX || !valid_utf8(name ? name : ""))
		return sbx_error_set(err, -EINVAL,
				     "sheet name is longer than %d bytes or not UTF-8",
				     SBX_SHEET_NAME_MAX);
	if (len == 0)
		snprintf(base, sizeof(base), "Sheet%zu", b->nsheets + 1);
	else
		snprintf(base, sizeof(base), "%s", name);
	snprintf(buf, sizeof(buf), "%s", base);
	for (unsigned n = 2; name_taken(b, buf); n++) {
		if (n > b->limits.max_sheets + 1)
			return sbx_error_set(err, -EEXIST, "sheet '%s' already exists", base);
		snprintf(buf, sizeof(buf), "%s (%u)", base, n);
	}
	return add_sheet(b, buf, SIZE_MAX, out, err);
}

int sbx_sheet_rename(sbx_sheet *s, const char *name, sbx_error *err)
{
	char *n;
	int r = sbx_sheet__check_name(s->book, s, name, err);

	if (r < 0)
		return r;
	n = strdup(name);
	if (!n)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	free(s->name);
	s->name = n;
	return 0;
}

int sbx_book_remove_sheet(sbx_book *b, sbx_sheet *s, sbx_error *err)
{
	size_t i = s->index;

	if (i >= b->nsheets || b->sheets[i] != s)
		return sbx_error_set(err, -ENOENT, "sheet is not in this book");
	b->ncells -= s->ncells;
	sheet_free(s);
	memmove(b->sheets + i, b->sheets + i + 1, (b->nsheets - i - 1) * sizeof(*b->sheets));
	b->nsheets--;
	for (; i < b->nsheets; i++)
		b->sheets[i]->index = i;
	return 0;
}

int sbx_book_move_sheet(sbx_book *b, sbx_sheet *s, size_t index, sbx_error *err)
{
	size_t from = s->index;

	if (from >= b->nsheets || b->sheets[from] != s)
		return sbx_error_set(err, -ENOENT, "sheet is not in this book");
	if (index >= b->nsheets)
		index = b->nsheets - 1;
	if (index < from)
		memmove(b->sheets + index + 1, b->sheets + index,
			(from - index) * sizeof(*b->sheets));
	else
		memmove(b->sheets + from, b->sheets + from + 1,
			(index - from) * sizeof(*b->sheets));
	b->sheets[index] = s;
	for (size_t i = 0; i < b->nsheets; i++)
		b->sheets[i]->index = i;
	return 0;
}

const char *sbx_sheet_name(const sbx_sheet *s)
{
	return s->name;
}

size_t sbx_sheet_index(const sbx_sheet *s)
{
	return s->index;
}

sbx_book *sbx_sheet_book(const sbx_sheet *s)
{
	return s->book;
}
