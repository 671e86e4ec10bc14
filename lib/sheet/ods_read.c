/* SPDX-License-Identifier: MIT */
/*
 * ODS reader: streams content.xml out of the zip through the hardened XML
 * reader, expanding repeated rows and columns as it goes (empty repeats cost
 * nothing, so LibreOffice's trailing 1,048,000-row repeats are free).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sheet-internal.h"
#include "xml.h"

#define NS_TABLE  "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
#define NS_OFFICE "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
#define NS_TEXT	  "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
#define NS_CALC	  "urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0"
#define ODS_MIME  "application/vnd.oasis.opendocument.spreadsheet"

/* Interned names: compared by pointer. */
typedef struct names {
	const xmlChar *ns_table, *ns_office, *ns_text, *ns_calc;
	const xmlChar *table, *table_row, *table_cell, *covered, *name, *rows_rep, *cols_rep;
	const xmlChar *value_type, *value, *date_value, *time_value, *boolean_value, *string_value,
		*formula;
	const xmlChar *p, *h, *s, *c, *tab, *line_break, *annotation;
} names;

/* One cell of the row being read, before it is stored (rows may repeat). */
typedef struct pending {
	uint32_t col;
	scell cell;
} pending;

typedef struct ods_reader {
	sbx_book *b;
	sheet_xml x;
	names n;
	const sbx_sheet_limits *lim;
	sbx_sheet *sheet;
	uint32_t row, col;
	pending *cells;
	size_t ncells, cap;
	sbx_buf text;
	bool text_any; /* text:p seen in this cell */
	const char *fname;
} ods_reader;

static void names_init(ods_reader *o)
{
	sheet_xml *x = &o->x;
	names *n = &o->n;

	n->ns_table = sbx_sheet__xml_name(x, NS_TABLE);
	n->ns_office = sbx_sheet__xml_name(x, NS_OFFICE);
	n->ns_text = sbx_sheet__xml_name(x, NS_TEXT);
	n->ns_calc = sbx_sheet__xml_name(x, NS_CALC);
	n->table = sbx_sheet__xml_name(x, "table");
	n->table_row = sbx_sheet__xml_name(x, "table-row");
	n->table_cell = sbx_sheet__xml_name(x, "table-cell");
	n->covered = sbx_sheet__xml_name(x, "covered-table-cell");
	n->name = sbx_sheet__xml_name(x, "name");
	n->rows_rep = sbx_sheet__xml_name(x, "number-rows-repeated");
	n->cols_rep = sbx_sheet__xml_name(x, "number-columns-repeated");
	n->value_type = sbx_sheet__xml_name(x, "value-type");
	n->value = sbx_sheet__xml_name(x, "value");
	n->date_value = sbx_sheet__xml_name(x, "date-value");
	n->time_value = sbx_sheet__xml_name(x, "time-value");
	n->boolean_value = sbx_sheet__xml_name(x, "boolean-value");
	n->string_value = sbx_sheet__xml_name(x, "string-value");
	n->formula = sbx_sheet__xml_name(x, "formula");
	n->p = sbx_sheet__xml_name(x, "p");
	n->h = sbx_sheet__xml_name(x, "h");
	n->s = sbx_sheet__xml_name(x, "s");
	n->c = sbx_sheet__xml_name(x, "c");
	n->tab = sbx_sheet__xml_name(x, "tab");
	n->line_break = sbx_sheet__xml_name(x, "line-break");
	n->annotation = sbx_sheet__xml_name(x, "annotation");
}

static int parse_repeat(ods_reader *o, const char *v, uint32_t max, const char *what, uint32_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || *end || n == 0 || v[0] == '-')
		return sbx_sheet__xml_fail(&o->x, -EINVAL, "invalid %s '%.32s'", what, v);
	/* Larger than the sheet can only be an error; the caller checks the sum. */
	*out = n > max ? max + 1 : (uint32_t)n;
	return 0;
}

static int intern(ods_reader *o, const char *s, size_t len, uint32_t *id)
{
	sbx_book *b = o->b;
	int r;

	if (len > o->lim->max_string)
		return sbx_sheet__xml_fail(&o->x, -E2BIG, "text longer than %u bytes (limit)",
					   o->lim->max_string);
	if (b->pool.bytes + len > o->lim->max_text)
		return sbx_sheet__xml_fail(&o->x, -E2BIG, "more than %llu bytes of text (limit)",
					   (unsigned long long)o->lim->max_text);
	r = sbx_sheet__pool_intern(&b->pool, s, len, id);
	if (r < 0)
		return sbx_sheet__xml_fail(&o->x, r, "out of memory");
	return 0;
}

static int start_table(ods_reader *o)
{
	xmlTextReaderPtr r = o->x.r;
	_cleanup_free_ char *name = NULL;
	sbx_error e = SBX_ERROR_INIT;
	int rc;

	while (xmlTextReaderMoveToNextAttribute(r) == 1)
		if (xmlTextReaderConstLocalName(r) == o->n.name &&
		    xmlTextReaderConstNamespaceUri(r) == o->n.ns_table) {
			name = strdup((const char *)xmlTextReaderConstValue(r));
			if (!name)
				return sbx_sheet__xml_fail(&o->x, -ENOMEM, "out of memory");
		}
	xmlTextReaderMoveToElement(r);
	if (!name && asprintf(&name, "Sheet%zu", o->b->nsheets + 1) < 0) {
		name = NULL;
		return sbx_sheet__xml_fail(&o->x, -ENOMEM, "out of memory");
	}
	rc = sbx_book_add_sheet(o->b, name, SIZE_MAX, &o->sheet, &e);
	if (rc < 0)
		return sbx_sheet__xml_fail(&o->x, rc, "%s", e.msg);
	o->row = 0;
	return 0;
}

/* Reads the text content of a text:p / text:h subtree into o->text. */
static int read_paragraph(ods_reader *o)
{
	xmlTextReaderPtr r = o->x.r;
	int depth = xmlTextReaderDepth(r);
	int rc;

	if (o->text_any && sbx_buf_putc(&o->text, '\n') < 0)
		goto too_long;
	o->text_any = true;
	if (xmlTextReaderIsEmptyElement(r))
		return 0;
	rc = sbx_sheet__xml_next(&o->x);
	while (rc == 1) {
		int type = xmlTextReaderNodeType(r);
		if (type == XML_READER_TYPE_END_ELEMENT && xmlTextReaderDepth(r) == depth)
			return 0;
		if (type == XML_READER_TYPE_TEXT || type == XML_READER_TYPE_CDATA ||
		    type == XML_READER_TYPE_SIGNIFICANT_WHITESPACE) {
			if (sbx_buf_puts(&o->text, (const char *)xmlTextReaderConstValue(r)) < 0)
				goto too_long;
		} else if (type == XML_READER_TYPE_ELEMENT &&
			   xmlTextReaderConstNamespaceUri(r) == o->n.ns_text) {
			const xmlChar *ln = xmlTextReaderConstLocalName(r);
			if (ln == o->n.s) {
				uint32_t count = 1;
				xmlChar *c = xmlTextReaderGetAttributeNs(r, o->n.c, o->n.ns_text);
				if (c) {
					rc = parse_repeat(o, (const char *)c, o->lim->max_string,
							  "text:c", &count);
					xmlFree(c);
					if (rc < 0)
						return rc;
				}
				for (uint32_t i = 0; i < count; i++)
					if (sbx_buf_putc(&o->text, ' ') < 0)
						goto too_long;
			} else if (ln == o->n.tab) {
				if (sbx_buf_putc(&o->text, '\t') < 0)
					goto too_long;
			} else if (ln == o->n.line_break) {
				if (sbx_buf_putc(&o->text, '\n') < 0)
					goto too_long;
			}
		} else if (type == XML_READER_TYPE_ELEMENT &&
			   xmlTextReaderConstLocalName(r) == o->n.annotation &&
			   !xmlTextReaderIsEmptyElement(r)) {
			rc = sbx_sheet__xml_skip(&o->x);
			continue;
		}
		rc = sbx_sheet__xml_next(&o->x);
	}
	return rc < 0 ? rc : sbx_sheet__xml_fail(&o->x, -EINVAL, "unexpected end of document");
too_long:
	return sbx_sheet__xml_fail(&o->x, -E2BIG, "text longer than %u bytes (limit)",
				   o->lim->max_string);
}

/* Attribute values of one cell (pointers valid only while on the element). */
typedef struct cell_attrs {
	uint32_t repeat;
	const char *type, *calc_type, *value, *date, *time, *boolean, *string, *formula;
} cell_attrs;

static int push_pending(ods_reader *o, uint32_t col, const scell *c)
{
	if (o->ncells == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		pending *np = realloc(o->cells, cap * sizeof(*np));
		if (!np)
			return sbx_sheet__xml_fail(&o->x, -ENOMEM, "out of memory");
		o->cells = np;
		o->cap = cap;
	}
	o->cells[o->ncells].col = col;
	o->cells[o->ncells].cell = *c;
	o->ncells++;
	return 0;
}

static int finish_cell(ods_reader *o, const cell_attrs *a, const char *formula_a1)
{
	scell c = {0};
	const char *t = a->type;
	int rc;

	if (formula_a1) {
		rc = intern(o, formula_a1, strlen(formula_a1), &c.formula);
		if (rc < 0)
			return rc;
	}
	if (a->calc_type && strcmp(a->calc_type, "error") == 0) {
		c.kind = SBX_CELL_ERROR;
	} else if (!t) {
		c.kind = o->text_any && o->text.len > 0 ? SBX_CELL_STRING : SBX_CELL_EMPTY;
	} else if (strcmp(t, "float") == 0 || strcmp(t, "percentage") == 0 ||
		   strcmp(t, "currency") == 0) {
		c.kind = t[0] == 'f' ? SBX_CELL_NUMBER
				     : (t[0] == 'p' ? SBX_CELL_PERCENT : SBX_CELL_CURRENCY);
		char *end;
		if (!a->value || (c.v.num = strtod(a->value, &end),
				  end == a->value || *end || !isfinite(c.v.num)))
			c.kind = SBX_CELL_STRING; /* no usable value: keep the text */
	} else if (strcmp(t, "date") == 0) {
		c.kind = SBX_CELL_DATE;
		if (!a->date || sbx_sheet_parse_date(a->date, &c.v.num) < 0)
			c.kind = SBX_CELL_STRING;
	} else if (strcmp(t, "time") == 0) {
		c.kind = SBX_CELL_TIME;
		if (!a->time || sbx_sheet_parse_time(a->time, &c.v.num) < 0)
			c.kind = SBX_CELL_STRING;
	} else if (strcmp(t, "boolean") == 0) {
		c.kind = SBX_CELL_BOOL;
		if (a->boolean)
			c.v.num = strcmp(a->boolean, "true") == 0 || strcmp(a->boolean, "1") == 0;
		else
			c.kind = SBX_CELL_STRING;
	} else {
		c.kind = SBX_CELL_STRING;
	}
	if (c.kind == SBX_CELL_STRING || c.kind == SBX_CELL_ERROR) {
		const char *s = o->text.data ? o->text.data : "";
		size_t len = o->text.len;
		if (c.kind == SBX_CELL_STRING && a->string) {
			s = a->string;
			len = strlen(s);
		}
		if (c.kind == SBX_CELL_STRING && !a->string && !o->text_any && !c.formula) {
			c.kind = SBX_CELL_EMPTY;
		} else {
			rc = intern(o, s, len, &c.v.str);
			if (rc < 0)
				return rc;
		}
	}
	if (c.kind == SBX_CELL_EMPTY && c.formula == 0) {
		o->col += a->repeat;
		return 0;
	}
	for (uint32_t i = 0; i < a->repeat; i++) {
		rc = push_pending(o, o->col + i, &c);
		if (rc < 0)
			return rc;
	}
	o->col += a->repeat;
	return 0;
}

static int read_cell(ods_reader *o)
{
	xmlTextReaderPtr r = o->x.r;
	cell_attrs a = {.repeat = 1};
	_cleanup_free_ char *type = NULL, *calc_type = NULL, *value = NULL, *date = NULL,
			    *time = NULL, *boolean = NULL, *string = NULL, *formula = NULL;
	char *formula_a1 = NULL;
	int depth = xmlTextReaderDepth(r), rc;

	/* Copy the few attributes we need: the reader's buffers move on. */
	while (xmlTextReaderMoveToNextAttribute(r) == 1) {
		const xmlChar *ln = xmlTextReaderConstLocalName(r);
		const xmlChar *ns = xmlTextReaderConstNamespaceUri(r);
		const char *v = (const char *)xmlTextReaderConstValue(r);
		char **slot = NULL;

		if (ns == o->n.ns_office) {
			if (ln == o->n.value_type)
				slot = &type;
			else if (ln == o->n.value)
				slot = &value;
			else if (ln == o->n.date_value)
				slot = &date;
			else if (ln == o->n.time_value)
				slot = &time;
			else if (ln == o->n.boolean_value)
				slot = &boolean;
			else if (ln == o->n.string_value)
				slot = &string;
		} else if (ns == o->n.ns_table) {
			if (ln == o->n.formula)
				slot = &formula;
			else if (ln == o->n.cols_rep) {
				rc = parse_repeat(o, v, o->lim->max_cols, "column repeat",
						  &a.repeat);
				if (rc < 0)
					return rc;
			}
		} else if (ns == o->n.ns_calc && ln == o->n.value_type) {
			slot = &calc_type;
		}
		if (slot && !*slot) {
			if (strlen(v) > o->lim->max_string)
				return sbx_sheet__xml_fail(&o->x, -E2BIG,
							   "attribute longer than %u bytes (limit)",
							   o->lim->max_string);
			*slot = strdup(v);
			if (!*slot)
				return sbx_sheet__xml_fail(&o->x, -ENOMEM, "out of memory");
		}
	}
	xmlTextReaderMoveToElement(r);
	if ((uint64_t)o->col + a.repeat > o->lim->max_cols)
		return sbx_sheet__xml_fail(&o->x, -E2BIG, "more than %u columns (limit)",
					   o->lim->max_cols);
	a.type = type;
	a.calc_type = calc_type;
	a.value = value;
	a.date = date;
	a.time = time;
	a.boolean = boolean;
	a.string = string;
	sbx_buf_reset(&o->text);
	o->text_any = false;

	if (!xmlTextReaderIsEmptyElement(r)) {
		rc = sbx_sheet__xml_next(&o->x);
		while (rc == 1) {
			int t = xmlTextReaderNodeType(r);
			if (t == XML_READER_TYPE_END_ELEMENT && xmlTextReaderDepth(r) == depth)
				break;
			if (t == XML_READER_TYPE_ELEMENT) {
				const xmlChar *ln = xmlTextReaderConstLocalName(r);
				const xmlChar *ns = xmlTextReaderConstNamespaceUri(r);
				if (ns == o->n.ns_text && (ln == o->n.p || ln == o->n.h)) {
					rc = read_paragraph(o);
					if (rc < 0)
						return rc;
				} else if (!xmlTextReaderIsEmptyElement(r)) {
					/* annotations, drawings, nested tables: not cell text */
					rc = sbx_sheet__xml_skip(&o->x);
					continue;
				}
			}
			rc = sbx_sheet__xml_next(&o->x);
		}
		if (rc < 0)
			return rc;
		if (rc == 0)
			return sbx_sheet__xml_fail(&o->x, -EINVAL, "unexpected end of document");
	}
	if (formula) {
		sbx_error e = SBX_ERROR_INIT;
		rc = sbx_formula_from_ods(formula, o->lim->max_string, &formula_a1, &e);
		if (rc < 0)
			return sbx_sheet__xml_fail(&o->x, rc, "formula: %s", e.msg);
	}
	rc = finish_cell(o, &a, formula_a1);
	free(formula_a1);
	return rc;
}

static int end_row(ods_reader *o, uint32_t repeat)
{
	sbx_error e = SBX_ERROR_INIT;

	if ((uint64_t)o->row + repeat > o->lim->max_rows)
		return sbx_sheet__xml_fail(&o->x, -E2BIG, "sheet '%s': more than %u rows (limit)",
					   o->sheet->name, o->lim->max_rows);
	if (o->ncells > 0) {
		if ((uint64_t)o->ncells * repeat + o->b->ncells > o->lim->max_cells)
			return sbx_sheet__xml_fail(&o->x, -E2BIG, "more than %llu cells (limit)",
						   (unsigned long long)o->lim->max_cells);
		for (uint32_t k = 0; k < repeat; k++)
			for (size_t i = 0; i < o->ncells; i++) {
				int rc = sbx_sheet__append(o->sheet, o->row + k, o->cells[i].col,
							   &o->cells[i].cell, &e);
				if (rc < 0)
					return sbx_sheet__xml_fail(&o->x, rc, "%s", e.msg);
			}
	}
	o->row += repeat;
	o->ncells = 0;
	return 0;
}

static int read_row(ods_reader *o)
{
	xmlTextReaderPtr r = o->x.r;
	uint32_t repeat = 1;
	int depth = xmlTextReaderDepth(r), rc;

	if (!o->sheet)
		return sbx_sheet__xml_fail(&o->x, -EINVAL, "table row outside a table");
	xmlChar *v = xmlTextReaderGetAttributeNs(r, o->n.rows_rep, o->n.ns_table);
	if (v) {
		rc = parse_repeat(o, (const char *)v, o->lim->max_rows, "row repeat", &repeat);
		xmlFree(v);
		if (rc < 0)
			return rc;
	}
	o->col = 0;
	o->ncells = 0;
	if (xmlTextReaderIsEmptyElement(r))
		return end_row(o, repeat);
	rc = sbx_sheet__xml_next(&o->x);
	while (rc == 1) {
		int t = xmlTextReaderNodeType(r);
		if (t == XML_READER_TYPE_END_ELEMENT && xmlTextReaderDepth(r) == depth)
			return end_row(o, repeat);
		if (t == XML_READER_TYPE_ELEMENT) {
			const xmlChar *ln = xmlTextReaderConstLocalName(r);
			if (xmlTextReaderConstNamespaceUri(r) == o->n.ns_table &&
			    (ln == o->n.table_cell || ln == o->n.covered)) {
				rc = read_cell(o);
				if (rc < 0)
					return rc;
			} else if (!xmlTextReaderIsEmptyElement(r)) {
				rc = sbx_sheet__xml_skip(&o->x);
				continue;
			}
		}
		rc = sbx_sheet__xml_next(&o->x);
	}
	return rc < 0 ? rc : sbx_sheet__xml_fail(&o->x, -EINVAL, "unexpected end of document");
}

static int check_mimetype(const void *data, size_t len, sheet_zip_budget *budget, sbx_error *err)
{
	sbx_buf m = SBX_BUF_INIT(256);
	int r = sbx_sheet__zip_slurp(data, len, budget, "mimetype", 200, &m, err);

	if (r == -ENOENT || (r == 0 && strcmp(sbx_buf_str(&m), ODS_MIME) != 0))
		r = sbx_error_set(err, -EINVAL, "'%s': not an ODS spreadsheet (mimetype %s)",
				  budget->file, r == -ENOENT ? "missing" : "differs");
	sbx_buf_free(&m);
	return r;
}

int sbx_sheet__read_ods(sbx_book *b, const void *data, size_t len, const char *name,
			const sbx_sheet_open_options *opts, sbx_error *err)
{
	sheet_zip_budget budget = {.lim = &b->limits, .file = name, .packed = len};
	ods_reader o = {.b = b, .lim = &b->limits, .fname = name};
	int rc;

	rc = check_mimetype(data, len, &budget, err);
	if (rc < 0)
		return rc;
	rc = sbx_sheet__xml_open(&o.x, data, len, &budget, "content.xml", err);
	if (rc == -ENOENT)
		return sbx_error_set(err, -EINVAL, "'%s': not an ODS spreadsheet (no content.xml)",
				     name);
	if (rc < 0)
		return rc;
	sbx_buf_init(&o.text, (size_t)b->limits.max_string);
	names_init(&o);
	rc = sbx_sheet__xml_next(&o.x);
	while (rc == 1) {
		xmlTextReaderPtr r = o.x.r;
		if (xmlTextReaderNodeType(r) == XML_READER_TYPE_ELEMENT &&
		    xmlTextReaderConstNamespaceUri(r) == o.n.ns_table) {
			const xmlChar *ln = xmlTextReaderConstLocalName(r);
			if (ln == o.n.table) {
				rc = start_table(&o);
				if (rc == 0 && xmlTextReaderIsEmptyElement(r))
					o.sheet = NULL;
			} else if (ln == o.n.table_row) {
				rc = read_row(&o);
			}
			if (rc < 0)
				break;
		} else if (xmlTextReaderNodeType(r) == XML_READER_TYPE_END_ELEMENT &&
			   xmlTextReaderConstLocalName(r) == o.n.table &&
			   xmlTextReaderConstNamespaceUri(r) == o.n.ns_table) {
			o.sheet = NULL;
		}
		rc = sbx_sheet__xml_next(&o.x);
	}
	sbx_sheet__xml_close(&o.x);
	sbx_buf_free(&o.text);
	free(o.cells);
	if (rc < 0)
		return rc;
	if (b->nsheets == 0)
		return sbx_error_set(err, -EINVAL, "'%s': content.xml: no sheets", name);
	return 0;
}
