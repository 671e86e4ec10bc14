/* SPDX-License-Identifier: MIT */
/*
 * ODS reader: streams content.xml out of the zip through libxml2's SAX2
 * push parser (hardened, see xml.h), expanding repeated rows and columns as
 * it goes. Empty repeats cost nothing, so LibreOffice's trailing
 * 1,048,000-row repeats are free. SAX rather than xmlTextReader because the
 * reader builds and frees a node per element and attribute, which tripled
 * the cost of a million-cell sheet.
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

/* Names interned in the parser's dictionary: SAX2 hands out dictionary strings. */
typedef struct names {
	const xmlChar *ns_table, *ns_office, *ns_text, *ns_calc;
	const xmlChar *table, *table_row, *table_cell, *covered, *name, *rows_rep, *cols_rep;
	const xmlChar *value_type, *value, *date_value, *time_value, *boolean_value, *string_value,
		*formula;
	const xmlChar *p, *h, *s, *c, *tab, *line_break;
} names;

/* One cell of the row being read, before it is stored (rows may repeat). */
typedef struct pending {
	uint32_t col;
	scell cell;
} pending;

/* Attribute values of the open cell, as offsets into ods_reader.attrs (0: absent). */
typedef struct cell_attrs {
	uint32_t repeat;
	const char *type, *calc_type, *value, *date, *time, *boolean, *string, *formula;
} cell_attrs;

enum { A_TYPE, A_CALC_TYPE, A_VALUE, A_DATE, A_TIME, A_BOOLEAN, A_STRING, A_FORMULA, A_COUNT };

typedef struct ods_reader {
	sheet_sax x; /* first: the SAX userData */
	sbx_book *b;
	names n;
	bool names_ready;
	const sbx_sheet_limits *lim;
	sbx_sheet *sheet;
	uint32_t row, col, row_repeat;
	pending *cells;
	size_t ncells, cap;
	/* the open cell */
	bool in_cell;
	uint32_t cell_depth;
	uint32_t para_depth; /* >0 inside text:p / text:h */
	uint32_t skip_depth; /* >0 inside a subtree whose text is not cell text */
	bool text_any;
	sbx_buf text;
	sbx_buf attrs;
	size_t attr_off[A_COUNT];
	uint32_t cell_repeat;
} ods_reader;

static void names_init(ods_reader *o, xmlDictPtr d)
{
	names *n = &o->n;
#define I(s) xmlDictLookup(d, (const xmlChar *)(s), -1)
	n->ns_table = I(NS_TABLE);
	n->ns_office = I(NS_OFFICE);
	n->ns_text = I(NS_TEXT);
	n->ns_calc = I(NS_CALC);
	n->table = I("table");
	n->table_row = I("table-row");
	n->table_cell = I("table-cell");
	n->covered = I("covered-table-cell");
	n->name = I("name");
	n->rows_rep = I("number-rows-repeated");
	n->cols_rep = I("number-columns-repeated");
	n->value_type = I("value-type");
	n->value = I("value");
	n->date_value = I("date-value");
	n->time_value = I("time-value");
	n->boolean_value = I("boolean-value");
	n->string_value = I("string-value");
	n->formula = I("formula");
	n->p = I("p");
	n->h = I("h");
	n->s = I("s");
	n->c = I("c");
	n->tab = I("tab");
	n->line_break = I("line-break");
#undef I
	o->names_ready = true;
}

/* SAX2 attributes: 5 pointers each (localname, prefix, URI, value, end). */
#define ATTR_NAME(a, i)	 ((a)[(i)*5])
#define ATTR_URI(a, i)	 ((a)[(i)*5 + 2])
#define ATTR_VALUE(a, i) ((const char *)(a)[(i)*5 + 3])
#define ATTR_LEN(a, i)	 ((size_t)((a)[(i)*5 + 4] - (a)[(i)*5 + 3]))

/*
 * Appends an attribute value. Without entity substitution libxml2's SAX2
 * hands '&' (from &amp; or &#38;) over as the five bytes "&#38;"; every
 * other reference is already decoded, and there is no DTD to define more.
 */
static int attr_append(sbx_buf *b, const char *v, size_t len)
{
	const char *end = v + len, *amp;
	int r = 0;

	while (r == 0 && (amp = memchr(v, '&', (size_t)(end - v))) != NULL) {
		r = sbx_buf_append(b, v, (size_t)(amp - v) + 1);
		v = amp + 1;
		if ((size_t)(end - v) >= 4 && memcmp(v, "#38;", 4) == 0)
			v += 4;
	}
	return r ? r : sbx_buf_append(b, v, (size_t)(end - v));
}

/* Copies an attribute value (which may end without a NUL) into a small buffer. */
static int attr_copy(ods_reader *o, const xmlChar **a, int i, char *buf, size_t size)
{
	size_t len = ATTR_LEN(a, i);
	if (len >= size)
		return sbx_sheet__sax_fail(&o->x, -EINVAL, "attribute value too long");
	memcpy(buf, ATTR_VALUE(a, i), len);
	buf[len] = '\0';
	return 0;
}

static int parse_repeat(ods_reader *o, const char *v, uint32_t max, const char *what, uint32_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || *end || n == 0 || v[0] == '-')
		return sbx_sheet__sax_fail(&o->x, -EINVAL, "invalid %s '%.32s'", what, v);
	/* Larger than the sheet can only be an error; the caller checks the sum. */
	*out = n > max ? max + 1 : (uint32_t)n;
	return 0;
}

static int intern(ods_reader *o, const char *s, size_t len, uint32_t *id)
{
	sbx_error why = SBX_ERROR_INIT;
	int r = sbx_sheet__book_intern(o->b, s, len, id, &why);

	return r < 0 ? sbx_sheet__sax_fail(&o->x, r, "%s", why.msg) : 0;
}

static int push_pending(ods_reader *o, uint32_t col, const scell *c)
{
	if (o->ncells == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		pending *np = realloc(o->cells, cap * sizeof(*np));
		if (!np)
			return sbx_sheet__sax_fail(&o->x, -ENOMEM, "out of memory");
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

static int end_row(ods_reader *o, uint32_t repeat)
{
	sbx_error e = SBX_ERROR_INIT;

	if (o->x.failed)
		return -EINVAL;

	/*
	 * Empty rows count only against the format's size, so LibreOffice's
	 * trailing repeats pass a lower max_rows; content past max_rows fails
	 * in sbx_sheet__append.
	 */
	if ((uint64_t)o->row + repeat > SBX_SHEET_MAX_ROWS)
		return sbx_sheet__sax_fail(&o->x, -E2BIG, "sheet '%s': more than %u rows (limit)",
					   o->sheet->name, SBX_SHEET_MAX_ROWS);
	if (o->ncells > 0) {
		if ((uint64_t)o->ncells * repeat + o->b->ncells > o->lim->max_cells)
			return sbx_sheet__sax_fail(&o->x, -E2BIG, "more than %llu cells (limit)",
						   (unsigned long long)o->lim->max_cells);
		for (uint32_t k = 0; k < repeat; k++)
			for (size_t i = 0; i < o->ncells; i++) {
				int rc = sbx_sheet__append(o->sheet, o->row + k, o->cells[i].col,
							   &o->cells[i].cell, &e);
				if (rc < 0)
					return sbx_sheet__sax_fail(&o->x, rc, "%s", e.msg);
			}
	}
	o->row += repeat;
	o->ncells = 0;
	return 0;
}

static int attr_repeat(ods_reader *o, const xmlChar **a, int i, uint32_t max, const char *what,
		       uint32_t *out)
{
	char tmp[32];
	int r = attr_copy(o, a, i, tmp, sizeof(tmp));
	return r < 0 ? r : parse_repeat(o, tmp, max, what, out);
}

static int start_table(ods_reader *o, int nb, const xmlChar **a)
{
	_cleanup_free_ char *name = NULL;
	sbx_error e = SBX_ERROR_INIT;
	int rc;

	for (int i = 0; i < nb; i++)
		if (ATTR_NAME(a, i) == o->n.name && ATTR_URI(a, i) == o->n.ns_table) {
			sbx_buf namebuf = SBX_BUF_INIT(4096);
			if (attr_append(&namebuf, ATTR_VALUE(a, i), ATTR_LEN(a, i)) < 0 ||
			    !(name = sbx_buf_steal(&namebuf, NULL)))
				return sbx_sheet__sax_fail(&o->x, -EINVAL, "invalid sheet name");
			break;
		}
	if (!name && asprintf(&name, "Sheet%zu", o->b->nsheets + 1) < 0) {
		name = NULL;
		return sbx_sheet__sax_fail(&o->x, -ENOMEM, "out of memory");
	}
	rc = sbx_sheet__add_read(o->b, name, &o->sheet, &e);
	if (rc < 0)
		return sbx_sheet__sax_fail(&o->x, rc, "%s", e.msg);
	o->row = 0;
	return 0;
}

static int start_cell(ods_reader *o, int nb, const xmlChar **a)
{
	o->in_cell = true;
	o->cell_depth = o->x.depth;
	o->para_depth = 0;
	o->skip_depth = 0;
	o->text_any = false;
	o->cell_repeat = 1;
	sbx_buf_reset(&o->text);
	sbx_buf_reset(&o->attrs);
	memset(o->attr_off, 0, sizeof(o->attr_off));
	if (sbx_buf_putc(&o->attrs, '\0') < 0)
		return sbx_sheet__sax_fail(&o->x, -ENOMEM, "out of memory");
	for (int i = 0; i < nb; i++) {
		const xmlChar *ln = ATTR_NAME(a, i), *ns = ATTR_URI(a, i);
		int slot = -1;
		if (ns == o->n.ns_office) {
			if (ln == o->n.value_type)
				slot = A_TYPE;
			else if (ln == o->n.value)
				slot = A_VALUE;
			else if (ln == o->n.date_value)
				slot = A_DATE;
			else if (ln == o->n.time_value)
				slot = A_TIME;
			else if (ln == o->n.boolean_value)
				slot = A_BOOLEAN;
			else if (ln == o->n.string_value)
				slot = A_STRING;
		} else if (ns == o->n.ns_table) {
			if (ln == o->n.formula) {
				slot = A_FORMULA;
			} else if (ln == o->n.cols_rep) {
				int r = attr_repeat(o, a, i, SBX_SHEET_MAX_COLS, "column repeat",
						    &o->cell_repeat);
				if (r < 0)
					return r;
			}
		} else if (ns == o->n.ns_calc && ln == o->n.value_type) {
			slot = A_CALC_TYPE;
		}
		if (slot < 0 || o->attr_off[slot])
			continue;
		size_t len = ATTR_LEN(a, i);
		if (len > o->lim->max_string)
			return sbx_sheet__sax_fail(&o->x, -E2BIG,
						   "attribute longer than %u bytes (limit)",
						   o->lim->max_string);
		o->attr_off[slot] = o->attrs.len;
		if (attr_append(&o->attrs, ATTR_VALUE(a, i), len) < 0 ||
		    sbx_buf_putc(&o->attrs, '\0') < 0)
			return sbx_sheet__sax_fail(&o->x, -ENOMEM, "out of memory");
	}
	if ((uint64_t)o->col + o->cell_repeat > SBX_SHEET_MAX_COLS)
		return sbx_sheet__sax_fail(&o->x, -E2BIG, "more than %u columns (limit)",
					   SBX_SHEET_MAX_COLS);
	return 0;
}

static int end_cell(ods_reader *o)
{
	cell_attrs a = {.repeat = o->cell_repeat};
	const char **slots[A_COUNT] = {&a.type, &a.calc_type, &a.value,	 &a.date,
				       &a.time, &a.boolean,   &a.string, &a.formula};
	char *formula_a1 = NULL;
	int rc;

	o->in_cell = false;
	for (int i = 0; i < A_COUNT; i++)
		*slots[i] = o->attr_off[i] ? o->attrs.data + o->attr_off[i] : NULL;
	if (a.formula) {
		sbx_error e = SBX_ERROR_INIT;
		rc = sbx_formula_from_ods(a.formula, o->lim->max_string, &formula_a1, &e);
		if (rc < 0)
			return sbx_sheet__sax_fail(&o->x, rc, "formula: %s", e.msg);
	}
	rc = finish_cell(o, &a, formula_a1);
	free(formula_a1);
	return rc;
}

static void text_fail(ods_reader *o)
{
	sbx_sheet__sax_fail(&o->x, -E2BIG, "text longer than %u bytes (limit)", o->lim->max_string);
}

static void on_start(void *ctx, const xmlChar *ln, const xmlChar *prefix, const xmlChar *uri,
		     int nb_ns, const xmlChar **ns, int nb_attr, int nb_def, const xmlChar **a)
{
	ods_reader *o = ctx;

	if (o->x.failed)
		return;
	if (!o->names_ready)
		names_init(o, o->x.ctxt->dict);
	if (++o->x.depth > o->x.max_depth) {
		sbx_sheet__sax_fail(&o->x, -E2BIG, "XML nested deeper than %u (limit)",
				    o->x.max_depth);
		return;
	}
	if (o->in_cell) {
		if (o->skip_depth)
			return;
		if (uri == o->n.ns_text) {
			if (ln == o->n.p || ln == o->n.h) {
				if (o->para_depth == 0) {
					if (o->text_any && sbx_buf_putc(&o->text, '\n') < 0) {
						text_fail(o);
						return;
					}
					o->text_any = true;
					o->para_depth = o->x.depth;
				}
				return;
			}
			if (o->para_depth && ln == o->n.s) {
				uint32_t count = 1;
				for (int i = 0; i < nb_attr; i++)
					if (ATTR_NAME(a, i) == o->n.c &&
					    ATTR_URI(a, i) == o->n.ns_text &&
					    attr_repeat(o, a, i, o->lim->max_string, "text:c",
							&count) < 0)
						return;
				for (uint32_t i = 0; i < count; i++)
					if (sbx_buf_putc(&o->text, ' ') < 0) {
						text_fail(o);
						return;
					}
				return;
			}
			if (o->para_depth && (ln == o->n.tab || ln == o->n.line_break)) {
				if (sbx_buf_putc(&o->text, ln == o->n.tab ? '\t' : '\n') < 0) {
					text_fail(o);
					return;
				}
				return;
			}
			if (o->para_depth)
				return; /* spans, links: their text is cell text */
		}
		/* annotations, drawings, nested tables: not cell text */
		o->skip_depth = o->x.depth;
		return;
	}
	if (uri != o->n.ns_table)
		return;
	if (ln == o->n.table) {
		start_table(o, nb_attr, a);
	} else if (ln == o->n.table_row) {
		if (!o->sheet) {
			sbx_sheet__sax_fail(&o->x, -EINVAL, "table row outside a table");
			return;
		}
		o->row_repeat = 1;
		o->col = 0;
		o->ncells = 0;
		for (int i = 0; i < nb_attr; i++)
			if (ATTR_NAME(a, i) == o->n.rows_rep && ATTR_URI(a, i) == o->n.ns_table &&
			    attr_repeat(o, a, i, SBX_SHEET_MAX_ROWS, "row repeat", &o->row_repeat) <
				    0)
				return;
	} else if ((ln == o->n.table_cell || ln == o->n.covered) && o->sheet) {
		start_cell(o, nb_attr, a);
	}
}

static void on_end(void *ctx, const xmlChar *ln, const xmlChar *prefix, const xmlChar *uri)
{
	ods_reader *o = ctx;
	uint32_t depth = o->x.depth--;

	if (o->x.failed)
		return;
	if (o->in_cell) {
		if (o->skip_depth == depth)
			o->skip_depth = 0;
		else if (o->para_depth == depth)
			o->para_depth = 0;
		else if (o->cell_depth == depth)
			end_cell(o);
		return;
	}
	if (uri != o->n.ns_table)
		return;
	if (ln == o->n.table_row && o->sheet)
		end_row(o, o->row_repeat);
	else if (ln == o->n.table)
		o->sheet = NULL;
}

static void on_text(void *ctx, const xmlChar *ch, int len)
{
	ods_reader *o = ctx;

	if (o->x.failed || !o->in_cell || !o->para_depth || o->skip_depth)
		return;
	if (sbx_buf_append(&o->text, ch, (size_t)len) < 0)
		text_fail(o);
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
	ods_reader o = {.b = b, .lim = &b->limits};
	xmlSAXHandler h;
	int rc;

	rc = check_mimetype(data, len, &budget, err);
	if (rc < 0)
		return rc;
	memset(&h, 0, sizeof(h));
	h.startElementNs = on_start;
	h.endElementNs = on_end;
	h.characters = on_text;
	h.cdataBlock = on_text;
	sbx_buf_init(&o.text, (size_t)b->limits.max_string);
	sbx_buf_init(&o.attrs, (size_t)b->limits.max_string * 8 + 64);
	rc = sbx_sheet__sax_parse(&o.x, data, len, &budget, "content.xml", &h, err);
	sbx_buf_free(&o.text);
	sbx_buf_free(&o.attrs);
	free(o.cells);
	if (rc == -ENOENT)
		return sbx_error_set(err, -EINVAL, "'%s': not an ODS spreadsheet (no content.xml)",
				     name);
	if (rc < 0)
		return rc;
	if (b->nsheets == 0)
		return sbx_error_set(err, -EINVAL, "'%s': content.xml: no sheets", name);
	return 0;
}
