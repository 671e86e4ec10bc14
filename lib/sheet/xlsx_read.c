/* SPDX-License-Identifier: MIT */
/*
 * XLSX worksheets: <sheetData><row r><c r s t><f/><v/><is/></c></row>.
 * Shared formulas are expanded by shifting the master's relative
 * references; numbers take their kind (date, time, percentage, currency)
 * from the cell's number format; date1904 serials are moved to the 1900
 * system.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xlsx.h"

/* Days between the 1900 and 1904 date systems. */
#define DATE1904_OFFSET 1462.0

#define SHARED_MAX 100000

typedef struct shared_f {
	uint32_t row, col;
	uint32_t formula; /* pool id of the master's A1 text (with '=') */
} shared_f;

typedef struct ws_reader {
	xlsx_pkg *p;
	sheet_xml x;
	sbx_sheet *s;
	sbx_buf text, ftext;
	shared_f *shared;
	size_t nshared;
	uint32_t row, col; /* next positions when r attributes are missing */
} ws_reader;

static bool is(const xmlChar *name, const char *want)
{
	return name && strcmp((const char *)name, want) == 0;
}

/* "B12" -> row 11, col 1; or column letters only with want_row false. */
static int parse_cell_ref(const char *v, uint32_t *row, uint32_t *col)
{
	sbx_ref r;
	if (sbx_ref_parse(v, &r, NULL) < 0)
		return -EINVAL;
	*row = r.row;
	*col = r.col;
	return 0;
}

typedef struct c_attrs {
	char r[24], t[16];
	long style;
} c_attrs;

typedef struct f_attrs {
	char t[16], si[16];
	bool present;
} f_attrs;

static void read_c_attrs(ws_reader *w, c_attrs *a)
{
	xmlTextReaderPtr r = w->x.r;

	a->r[0] = a->t[0] = '\0';
	a->style = 0;
	while (xmlTextReaderMoveToNextAttribute(r) == 1) {
		const xmlChar *ln = xmlTextReaderConstLocalName(r);
		const char *v = (const char *)xmlTextReaderConstValue(r);
		if (is(ln, "r"))
			snprintf(a->r, sizeof(a->r), "%s", v);
		else if (is(ln, "t"))
			snprintf(a->t, sizeof(a->t), "%s", v);
		else if (is(ln, "s"))
			a->style = strtol(v, NULL, 10);
	}
	xmlTextReaderMoveToElement(r);
}

static int store_formula(ws_reader *w, uint32_t row, uint32_t col, const f_attrs *fa, uint32_t *out)
{
	sbx_error e = SBX_ERROR_INIT;
	const char *body = sbx_buf_str(&w->ftext);
	_cleanup_free_ char *text = NULL;
	long si = fa->si[0] ? strtol(fa->si, NULL, 10) : -1;
	int r;

	*out = 0;
	if (strcmp(fa->t, "shared") == 0 && si >= 0 && w->ftext.len == 0) {
		/* A follower: the master's formula moved by our offset from it. */
		for (size_t i = 0; i < w->nshared; i++) {
			if ((long)i != si || !w->shared[i].formula)
				continue;
			const char *master =
				sbx_sheet__pool_str(&w->p->b->pool, w->shared[i].formula);
			r = sbx_formula_shift(master, (int64_t)row - w->shared[i].row,
					      (int64_t)col - w->shared[i].col,
					      w->p->b->limits.max_string, &text, &e);
			if (r < 0)
				return sbx_sheet__xml_fail(&w->x, r, "formula: %s", e.msg);
			return sbx_sheet__xlsx_intern(w->p, &w->x, text, strlen(text), out);
		}
		return 0;
	}
	if (w->ftext.len == 0)
		return 0;
	if (asprintf(&text, "=%s", body) < 0) {
		text = NULL;
		return sbx_sheet__xml_fail(&w->x, -ENOMEM, "out of memory");
	}
	r = sbx_sheet__xlsx_intern(w->p, &w->x, text, strlen(text), out);
	if (r < 0)
		return r;
	if (strcmp(fa->t, "shared") == 0 && si >= 0) {
		if (si >= SHARED_MAX)
			return sbx_sheet__xml_fail(
				&w->x, -E2BIG, "shared formula index %ld too large (limit)", si);
		if ((size_t)si >= w->nshared) {
			shared_f *n = realloc(w->shared, ((size_t)si + 1) * sizeof(*n));
			if (!n)
				return sbx_sheet__xml_fail(&w->x, -ENOMEM, "out of memory");
			memset(n + w->nshared, 0, ((size_t)si + 1 - w->nshared) * sizeof(*n));
			w->shared = n;
			w->nshared = (size_t)si + 1;
		}
		w->shared[si] = (shared_f){row, col, *out};
	}
	return 0;
}

static int read_c(ws_reader *w)
{
	xmlTextReaderPtr r = w->x.r;
	xlsx_pkg *p = w->p;
	int depth = xmlTextReaderDepth(r), rc;
	c_attrs a;
	f_attrs fa = {{0}, {0}, false};
	bool have_v = false, have_is = false;
	uint32_t row = w->row, col = w->col;
	scell c = {0};

	read_c_attrs(w, &a);
	if (a.r[0] && parse_cell_ref(a.r, &row, &col) < 0)
		return sbx_sheet__xml_fail(&w->x, -EINVAL, "Invalid cell reference: %s", a.r);
	if (row >= p->b->limits.max_rows || col >= p->b->limits.max_cols)
		return sbx_sheet__xml_fail(&w->x, -E2BIG, "cell %s beyond the sheet (limit)", a.r);
	w->col = col + 1;
	if (!a.r[0]) {
		char cn[4];
		snprintf(a.r, sizeof(a.r), "%s%u", sbx_ref_col_name(col, cn), row + 1);
	}
	sbx_buf_reset(&w->text);
	sbx_buf_reset(&w->ftext);
	if (!xmlTextReaderIsEmptyElement(r)) {
		rc = sbx_sheet__xml_next(&w->x);
		while (rc == 1) {
			int type = xmlTextReaderNodeType(r);
			const xmlChar *ln = xmlTextReaderConstLocalName(r);
			if (type == XML_READER_TYPE_END_ELEMENT && xmlTextReaderDepth(r) == depth)
				break;
			if (type == XML_READER_TYPE_ELEMENT && is(ln, "v")) {
				rc = sbx_sheet__xlsx_text(&w->x, &w->text, false);
				have_v = true;
			} else if (type == XML_READER_TYPE_ELEMENT && is(ln, "is")) {
				rc = sbx_sheet__xlsx_text(&w->x, &w->text, true);
				have_is = true;
			} else if (type == XML_READER_TYPE_ELEMENT && is(ln, "f")) {
				fa.present = true;
				while (xmlTextReaderMoveToNextAttribute(r) == 1) {
					const xmlChar *an = xmlTextReaderConstLocalName(r);
					const char *v = (const char *)xmlTextReaderConstValue(r);
					if (is(an, "t"))
						snprintf(fa.t, sizeof(fa.t), "%s", v);
					else if (is(an, "si"))
						snprintf(fa.si, sizeof(fa.si), "%s", v);
				}
				xmlTextReaderMoveToElement(r);
				rc = sbx_sheet__xlsx_text(&w->x, &w->ftext, false);
			} else if (type == XML_READER_TYPE_ELEMENT &&
				   !xmlTextReaderIsEmptyElement(r)) {
				rc = sbx_sheet__xml_skip(&w->x);
				continue;
			}
			if (rc < 0)
				return rc;
			rc = sbx_sheet__xml_next(&w->x);
		}
		if (rc < 0)
			return rc;
		if (rc == 0)
			return sbx_sheet__xml_fail(&w->x, -EINVAL, "unexpected end of document");
	}
	if (fa.present) {
		rc = store_formula(w, row, col, &fa, &c.formula);
		if (rc < 0)
			return rc;
	}

	const char *t = a.t, *v = sbx_buf_str(&w->text);
	char *end;
	if (have_is || strcmp(t, "inlineStr") == 0) {
		if (have_is) {
			c.kind = SBX_CELL_STRING;
			rc = sbx_sheet__xlsx_intern(p, &w->x, v, w->text.len, &c.v.str);
			if (rc < 0)
				return rc;
		}
	} else if (!have_v || (w->text.len == 0 && strcmp(t, "str") != 0)) {
		/* styled but empty, or a formula without a cached value */
	} else if (strcmp(t, "s") == 0) {
		unsigned long idx = strtoul(v, &end, 10);
		if (end == v || *end || idx >= p->nsst)
			return sbx_sheet__xml_fail(&w->x, -EINVAL,
						   "cell %s: shared string %.20s does not exist",
						   a.r, v);
		c.kind = SBX_CELL_STRING;
		c.v.str = p->sst[idx];
	} else if (strcmp(t, "str") == 0 || strcmp(t, "e") == 0) {
		c.kind = t[0] == 'e' ? SBX_CELL_ERROR : SBX_CELL_STRING;
		rc = sbx_sheet__xlsx_intern(p, &w->x, v, w->text.len, &c.v.str);
		if (rc < 0)
			return rc;
	} else if (strcmp(t, "b") == 0) {
		c.kind = SBX_CELL_BOOL;
		c.v.num = strcmp(v, "1") == 0 || strcmp(v, "true") == 0;
	} else if (strcmp(t, "d") == 0) {
		c.kind = SBX_CELL_DATE;
		if (sbx_sheet_parse_date(v, &c.v.num) < 0)
			return sbx_sheet__xml_fail(&w->x, -EINVAL, "cell %s: invalid date '%.40s'",
						   a.r, v);
	} else {
		c.v.num = strtod(v, &end);
		if (end == v || *end || !isfinite(c.v.num))
			return sbx_sheet__xml_fail(&w->x, -EINVAL,
						   "cell %s: invalid number '%.40s'", a.r, v);
		c.kind = SBX_CELL_NUMBER;
		if (a.style > 0 && (size_t)a.style < p->nxf)
			c.kind = p->xf_kind[a.style];
		if (c.kind == SBX_CELL_DATE && p->date1904)
			c.v.num += DATE1904_OFFSET;
	}
	sbx_error e = SBX_ERROR_INIT;
	rc = sbx_sheet__put(w->s, row, col, &c, &e);
	if (rc < 0)
		return sbx_sheet__xml_fail(&w->x, rc, "%s", e.msg);
	return 0;
}

int sbx_sheet__xlsx_sheet(xlsx_pkg *p, sbx_sheet *s, const char *part, sbx_error *err)
{
	ws_reader w = {.p = p, .s = s};
	int r;

	r = sbx_sheet__xml_open(&w.x, p->data, p->len, &p->budget, part, err);
	if (r == -ENOENT)
		return sbx_error_set(err, -EINVAL, "'%s': sheet '%s': part %s is missing", p->file,
				     s->name, part);
	if (r < 0)
		return r;
	sbx_buf_init(&w.text, (size_t)p->b->limits.max_string + 1);
	sbx_buf_init(&w.ftext, (size_t)p->b->limits.max_string + 1);
	r = sbx_sheet__xml_next(&w.x);
	while (r == 1) {
		int type = xmlTextReaderNodeType(w.x.r);
		const xmlChar *ln = xmlTextReaderConstLocalName(w.x.r);
		if (type == XML_READER_TYPE_END_ELEMENT && is(ln, "row")) {
			w.row++;
		} else if (type != XML_READER_TYPE_ELEMENT) {
		} else if (is(ln, "row")) {
			xmlChar *rv = xmlTextReaderGetAttribute(w.x.r, (const xmlChar *)"r");
			if (rv) {
				char *end;
				unsigned long n = strtoul((const char *)rv, &end, 10);
				bool ok = end != (char *)rv && !*end && n >= 1 &&
					  n <= p->b->limits.max_rows;
				xmlFree(rv);
				if (!ok) {
					r = sbx_sheet__xml_fail(&w.x, -E2BIG,
								"row number beyond %u rows (limit)",
								p->b->limits.max_rows);
					break;
				}
				w.row = (uint32_t)n - 1;
			}
			w.col = 0;
			if (xmlTextReaderIsEmptyElement(w.x.r))
				w.row++;
		} else if (is(ln, "c")) {
			r = read_c(&w);
			if (r < 0)
				break;
		} else if (!is(ln, "worksheet") && !is(ln, "sheetData") &&
			   !xmlTextReaderIsEmptyElement(w.x.r)) {
			/* columns, merges, drawings, extLst: not cell data */
			r = sbx_sheet__xml_skip(&w.x);
			continue;
		}
		r = sbx_sheet__xml_next(&w.x);
	}
	sbx_sheet__xml_close(&w.x);
	sbx_buf_free(&w.text);
	sbx_buf_free(&w.ftext);
	free(w.shared);
	return r < 0 ? r : 0;
}

int sbx_sheet__read_xlsx(sbx_book *b, const void *data, size_t len, const char *name,
			 const sbx_sheet_open_options *o, sbx_error *err)
{
	xlsx_pkg p = {.b = b, .data = data, .len = len, .file = name};
	int r;

	p.budget = (sheet_zip_budget){.lim = &b->limits, .file = name, .packed = len};
	r = sbx_sheet__xlsx_workbook(&p, err);
	for (size_t i = 0; r >= 0 && i < p.nsheets; i++) {
		sbx_sheet *s;
		r = sbx_sheet__add_read(b, p.sheets[i].name, &s, err);
		if (r < 0) {
			sbx_error_prefix(err, r, "'%s'", name);
			break;
		}
		r = sbx_sheet__xlsx_sheet(&p, s, p.sheets[i].part, err);
	}
	if (r >= 0 && b->nsheets == 0)
		r = sbx_error_set(err, -EINVAL, "'%s': workbook has no sheets", name);
	for (size_t i = 0; i < p.nsheets; i++) {
		free(p.sheets[i].name);
		free(p.sheets[i].part);
	}
	free(p.sheets);
	free(p.workbook);
	free(p.xf_kind);
	free(p.sst);
	return r < 0 ? r : 0;
}
