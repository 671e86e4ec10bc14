/* SPDX-License-Identifier: MIT */
/*
 * XLSX package parts: relationships, the workbook's sheet list, number
 * formats (which decide whether a number is a date) and shared strings.
 * Sheets are found through workbook.xml.rels, never by guessing file names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xlsx.h"

#define RELS_MAX 10000

static bool is(const xmlChar *name, const char *want)
{
	return name && strcmp((const char *)name, want) == 0;
}

/* The value of the attribute with this local name (any namespace), copied; NULL if absent. */
static char *attr(sheet_xml *x, const char *local, bool want_ns)
{
	char *v = NULL;

	while (xmlTextReaderMoveToNextAttribute(x->r) == 1) {
		if (!is(xmlTextReaderConstLocalName(x->r), local))
			continue;
		if (want_ns != (xmlTextReaderConstNamespaceUri(x->r) != NULL))
			continue;
		v = strdup((const char *)xmlTextReaderConstValue(x->r));
		break;
	}
	xmlTextReaderMoveToElement(x->r);
	return v;
}

static bool element(sheet_xml *x, const char *local)
{
	return xmlTextReaderNodeType(x->r) == XML_READER_TYPE_ELEMENT &&
	       is(xmlTextReaderConstLocalName(x->r), local);
}

char *sbx_sheet__xlsx_resolve(const char *source, const char *target)
{
	sbx_buf b = SBX_BUF_INIT(8192);
	const char *slash = strrchr(source, '/');
	int r = 0;

	if (target[0] == '/')
		target++;
	else if (slash)
		r = sbx_buf_append(&b, source, (size_t)(slash - source + 1));
	if (r == 0)
		r = sbx_buf_puts(&b, target);
	if (r < 0)
		return NULL;
	/* Fold "x/../" and "./" segments. */
	char *s = sbx_buf_steal(&b, NULL), *out = s;
	if (!s)
		return NULL;
	char *w = s;
	for (char *p = s; *p;) {
		char *seg_end = strchr(p, '/');
		size_t len = seg_end ? (size_t)(seg_end - p) : strlen(p);
		if (len == 1 && p[0] == '.') {
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (w > s) {
				w--;
				while (w > s && w[-1] != '/')
					w--;
			}
		} else {
			memmove(w, p, len);
			w += len;
			if (seg_end)
				*w++ = '/';
		}
		p += len + (seg_end ? 1 : 0);
	}
	*w = '\0';
	return out;
}

void sbx_sheet__xlsx_rels_free(xlsx_rel *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].id);
		free(r[i].type);
		free(r[i].target);
	}
	free(r);
}

int sbx_sheet__xlsx_rels(xlsx_pkg *p, const char *part, xlsx_rel **out, size_t *n, sbx_error *err)
{
	_cleanup_free_ char *source = NULL;
	xlsx_rel *rels = NULL;
	size_t count = 0;
	sheet_xml x;
	int r;

	/* "xl/_rels/workbook.xml.rels" describes "xl/workbook.xml". */
	{
		const char *rd = strstr(part, "_rels/");
		size_t pre = rd ? (size_t)(rd - part) : 0;
		if (asprintf(&source, "%.*s%s", (int)pre, part, rd ? rd + 6 : part) < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		size_t l = strlen(source);
		if (l > 5 && strcmp(source + l - 5, ".rels") == 0)
			source[l - 5] = '\0';
	}
	r = sbx_sheet__xml_open(&x, p->data, p->len, &p->budget, part, err);
	if (r < 0)
		return r;
	while ((r = sbx_sheet__xml_next(&x)) == 1) {
		if (!element(&x, "Relationship"))
			continue;
		if (count >= RELS_MAX) {
			r = sbx_sheet__xml_fail(&x, -E2BIG, "more than %d relationships (limit)",
						RELS_MAX);
			break;
		}
		xlsx_rel *nr = realloc(rels, (count + 1) * sizeof(*nr));
		if (!nr) {
			r = sbx_sheet__xml_fail(&x, -ENOMEM, "out of memory");
			break;
		}
		rels = nr;
		_cleanup_free_ char *target = attr(&x, "Target", false);
		rels[count].id = attr(&x, "Id", false);
		rels[count].type = attr(&x, "Type", false);
		rels[count].target = target ? sbx_sheet__xlsx_resolve(source, target) : NULL;
		count++;
		if (!rels[count - 1].id || !rels[count - 1].type || !rels[count - 1].target) {
			r = sbx_sheet__xml_fail(&x, -EINVAL,
						"relationship without Id, Type or Target");
			break;
		}
	}
	sbx_sheet__xml_close(&x);
	if (r < 0) {
		sbx_sheet__xlsx_rels_free(rels, count);
		return r;
	}
	*out = rels;
	*n = count;
	return 0;
}

static const xlsx_rel *rel_by_type(const xlsx_rel *r, size_t n, const char *suffix)
{
	size_t sl = strlen(suffix);
	for (size_t i = 0; i < n; i++) {
		size_t tl = strlen(r[i].type);
		if (tl >= sl && strcmp(r[i].type + tl - sl, suffix) == 0)
			return &r[i];
	}
	return NULL;
}

int sbx_sheet__xlsx_workbook(xlsx_pkg *p, sbx_error *err)
{
	xlsx_rel *rels = NULL, *wrels = NULL;
	size_t nrels = 0, nwrels = 0;
	_cleanup_free_ char *wrels_part = NULL;
	sheet_xml x;
	int r;

	r = sbx_sheet__xlsx_rels(p, "_rels/.rels", &rels, &nrels, err);
	if (r < 0 && r != -ENOENT)
		return r;
	const xlsx_rel *doc = r == 0 ? rel_by_type(rels, nrels, "/officeDocument") : NULL;
	p->workbook = strdup(doc ? doc->target : "xl/workbook.xml");
	sbx_sheet__xlsx_rels_free(rels, nrels);
	if (!p->workbook)
		return sbx_error_set(err, -ENOMEM, "out of memory");

	const char *slash = strrchr(p->workbook, '/');
	if (asprintf(&wrels_part, "%.*s_rels/%s.rels", slash ? (int)(slash - p->workbook + 1) : 0,
		     p->workbook, slash ? slash + 1 : p->workbook) < 0) {
		wrels_part = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	r = sbx_sheet__xlsx_rels(p, wrels_part, &wrels, &nwrels, err);
	if (r == -ENOENT)
		return sbx_error_set(err, -EINVAL, "'%s': not an XLSX workbook (no %s)", p->file,
				     wrels_part);
	if (r < 0)
		return r;

	r = sbx_sheet__xml_open(&x, p->data, p->len, &p->budget, p->workbook, err);
	if (r == -ENOENT)
		r = sbx_error_set(err, -EINVAL, "'%s': not an XLSX workbook (no %s)", p->file,
				  p->workbook);
	while (r >= 0 && (r = sbx_sheet__xml_next(&x)) == 1) {
		if (element(&x, "workbookPr")) {
			_cleanup_free_ char *d = attr(&x, "date1904", false);
			p->date1904 = d && (strcmp(d, "1") == 0 || strcmp(d, "true") == 0);
		} else if (element(&x, "sheet")) {
			_cleanup_free_ char *name = attr(&x, "name", false);
			_cleanup_free_ char *id = attr(&x, "id", true);
			const xlsx_rel *rel = NULL;
			for (size_t i = 0; id && i < nwrels; i++)
				if (strcmp(wrels[i].id, id) == 0)
					rel = &wrels[i];
			if (!name || !rel) {
				r = sbx_sheet__xml_fail(&x, -EINVAL,
							"sheet '%s' has no relationship '%s'",
							name ? name : "?", id ? id : "?");
				break;
			}
			if (p->nsheets >= p->b->limits.max_sheets) {
				r = sbx_sheet__xml_fail(&x, -E2BIG, "more than %u sheets (limit)",
							p->b->limits.max_sheets);
				break;
			}
			xlsx_sheet_ref *ns = realloc(p->sheets, (p->nsheets + 1) * sizeof(*ns));
			if (!ns) {
				r = sbx_sheet__xml_fail(&x, -ENOMEM, "out of memory");
				break;
			}
			p->sheets = ns;
			ns[p->nsheets].name = TAKE_PTR(name);
			ns[p->nsheets].part = strdup(rel->target);
			p->nsheets++;
		}
	}
	if (x.r)
		sbx_sheet__xml_close(&x);
	if (r >= 0) {
		const xlsx_rel *st = rel_by_type(wrels, nwrels, "/styles");
		const xlsx_rel *ss = rel_by_type(wrels, nwrels, "/sharedStrings");
		if (st)
			r = sbx_sheet__xlsx_styles(p, st->target, err);
		if (r >= 0 && ss)
			r = sbx_sheet__xlsx_strings(p, ss->target, err);
	}
	sbx_sheet__xlsx_rels_free(wrels, nwrels);
	return r < 0 ? r : 0;
}

sbx_cell_kind sbx_sheet__xlsx_format_kind(unsigned id, const char *code)
{
	bool date = false, time = false, pct = false, cur = false;

	if (!code) {
		if (id >= 14 && id <= 17)
			return SBX_CELL_DATE;
		if (id == 22 || (id >= 27 && id <= 36) || (id >= 50 && id <= 58))
			return SBX_CELL_DATE;
		if ((id >= 18 && id <= 21) || (id >= 45 && id <= 47))
			return SBX_CELL_TIME;
		if (id == 9 || id == 10)
			return SBX_CELL_PERCENT;
		if (id >= 5 && id <= 8)
			return SBX_CELL_CURRENCY;
		return SBX_CELL_NUMBER;
	}
	if (strcasecmp(code, "General") == 0 || strcmp(code, "@") == 0)
		return SBX_CELL_NUMBER;
	/* Only the first section (positive numbers) decides. */
	for (const char *c = code; *c && *c != ';'; c++) {
		switch (*c) {
		case '"':
			while (c[1] && c[1] != '"') {
				c++;
				cur = cur || *c == '$' || strncmp(c, "\xe2\x82\xac", 3) == 0 ||
				      strncmp(c, "\xc2\xa3", 2) == 0 ||
				      strncmp(c, "\xc2\xa5", 2) == 0;
			}
			if (c[1])
				c++;
			break;
		case '\\':
		case '_':
		case '*':
			if (c[1])
				c++;
			break;
		case '[':
			if (c[1] == '$') {
				cur = cur || (c[2] && c[2] != '-' && c[2] != ']');
			} else if (strchr("hHmMsS", c[1])) {
				time = true;
			}
			while (c[1] && c[1] != ']')
				c++;
			if (c[1])
				c++;
			break;
		case 'y':
		case 'Y':
		case 'd':
		case 'D':
			date = true;
			break;
		case 'h':
		case 'H':
		case 's':
		case 'S':
			time = true;
			break;
		case 'm':
		case 'M':
			time = true; /* minutes or months: either way not a plain number */
			break;
		case '%':
			pct = true;
			break;
		case '$':
			cur = true;
			break;
		default:
			if ((unsigned char)*c == 0xe2 || (unsigned char)*c == 0xc2 ||
			    (unsigned char)*c == 0xc3)
				cur = cur || strncmp(c, "\xe2\x82\xac", 3) == 0 ||
				      strncmp(c, "\xc2\xa3", 2) == 0 ||
				      strncmp(c, "\xc2\xa5", 2) == 0;
			break;
		}
	}
	if (date)
		return SBX_CELL_DATE;
	if (time)
		return SBX_CELL_TIME;
	if (pct)
		return SBX_CELL_PERCENT;
	if (cur)
		return SBX_CELL_CURRENCY;
	return SBX_CELL_NUMBER;
}

/* 1 with part open in x; 0 when the package has none (styles and strings are optional). */
static int open_optional(xlsx_pkg *p, const char *part, sheet_xml *x, sbx_error *err)
{
	int r = sbx_sheet__xml_open(x, p->data, p->len, &p->budget, part, err);

	return r == -ENOENT ? 0 : r < 0 ? r : 1;
}

/*
 * Reads an optional part node by node: on_node sees every node until it
 * returns a negative errno. 0 also when the package has no such part.
 */
static int each_node(xlsx_pkg *p, const char *part, int (*on_node)(sheet_xml *x, void *state),
		     void *state, sbx_error *err)
{
	sheet_xml x;
	int r = open_optional(p, part, &x, err);

	if (r <= 0)
		return r;
	while ((r = sbx_sheet__xml_next(&x)) == 1 && (r = on_node(&x, state)) >= 0)
		;
	sbx_sheet__xml_close(&x);
	return r < 0 ? r : 0;
}

typedef struct styles_reader {
	xlsx_pkg *p;
	struct fmt {
		unsigned id;
		char *code;
	} * fmts;
	size_t nfmts;
	bool in_xfs;
} styles_reader;

static int add_number_format(styles_reader *st, sheet_xml *x)
{
	_cleanup_free_ char *id = attr(x, "numFmtId", false);
	struct fmt *nf = realloc(st->fmts, (st->nfmts + 1) * sizeof(*nf));

	if (!nf)
		return sbx_sheet__xml_fail(x, -ENOMEM, "out of memory");
	st->fmts = nf;
	st->fmts[st->nfmts].id = id ? (unsigned)strtoul(id, NULL, 10) : 0;
	st->fmts[st->nfmts].code = attr(x, "formatCode", false);
	st->nfmts++;
	return 0;
}

static int add_cell_style(styles_reader *st, sheet_xml *x)
{
	xlsx_pkg *p = st->p;

	if (p->nxf >= 65536)
		return sbx_sheet__xml_fail(x, -E2BIG, "more than 65536 cell styles (limit)");
	_cleanup_free_ char *id = attr(x, "numFmtId", false);
	unsigned fid = id ? (unsigned)strtoul(id, NULL, 10) : 0;
	const char *code = NULL;
	for (size_t i = 0; i < st->nfmts; i++)
		if (st->fmts[i].id == fid)
			code = st->fmts[i].code ? st->fmts[i].code : "";
	uint8_t *nk = realloc(p->xf_kind, p->nxf + 1);
	if (!nk)
		return sbx_sheet__xml_fail(x, -ENOMEM, "out of memory");
	p->xf_kind = nk;
	p->xf_kind[p->nxf++] = (uint8_t)sbx_sheet__xlsx_format_kind(fid, code);
	return 0;
}

static int on_styles_node(sheet_xml *x, void *state)
{
	styles_reader *st = state;
	int type = xmlTextReaderNodeType(x->r);
	const xmlChar *ln = xmlTextReaderConstLocalName(x->r);

	if (type == XML_READER_TYPE_END_ELEMENT && is(ln, "cellXfs"))
		st->in_xfs = false;
	if (type != XML_READER_TYPE_ELEMENT)
		return 0;
	if (is(ln, "numFmt") && st->nfmts < 4096)
		return add_number_format(st, x);
	if (is(ln, "cellXfs"))
		st->in_xfs = !xmlTextReaderIsEmptyElement(x->r);
	else if (st->in_xfs && is(ln, "xf"))
		return add_cell_style(st, x);
	return 0;
}

int sbx_sheet__xlsx_styles(xlsx_pkg *p, const char *part, sbx_error *err)
{
	styles_reader st = {.p = p};
	int r = each_node(p, part, on_styles_node, &st, err);

	for (size_t i = 0; i < st.nfmts; i++)
		free(st.fmts[i].code);
	free(st.fmts);
	return r;
}

int sbx_sheet__xlsx_intern(xlsx_pkg *p, sheet_xml *x, const char *s, size_t len, uint32_t *id)
{
	sbx_error why = SBX_ERROR_INIT;
	int r = sbx_sheet__book_intern(p->b, s, len, id, &why);

	return r < 0 ? sbx_sheet__xml_fail(x, r, "%s", why.msg) : 0;
}

int sbx_sheet__xlsx_text(sheet_xml *x, sbx_buf *out, bool rich)
{
	int depth = xmlTextReaderDepth(x->r), r, in_t = 0;

	sbx_buf_reset(out);
	if (xmlTextReaderIsEmptyElement(x->r))
		return 0;
	r = sbx_sheet__xml_next(x);
	while (r == 1) {
		int type = xmlTextReaderNodeType(x->r);
		const xmlChar *ln = xmlTextReaderConstLocalName(x->r);
		if (type == XML_READER_TYPE_END_ELEMENT && xmlTextReaderDepth(x->r) == depth)
			return 0;
		if (type == XML_READER_TYPE_ELEMENT && (is(ln, "rPh") || is(ln, "phoneticPr")) &&
		    !xmlTextReaderIsEmptyElement(x->r)) {
			r = sbx_sheet__xml_skip(x);
			continue;
		}
		if (type == XML_READER_TYPE_ELEMENT && is(ln, "t") &&
		    !xmlTextReaderIsEmptyElement(x->r))
			in_t++;
		else if (type == XML_READER_TYPE_END_ELEMENT && is(ln, "t"))
			in_t--;
		else if ((in_t > 0 || !rich) &&
			 (type == XML_READER_TYPE_TEXT || type == XML_READER_TYPE_CDATA ||
			  type == XML_READER_TYPE_SIGNIFICANT_WHITESPACE)) {
			if (sbx_buf_puts(out, (const char *)xmlTextReaderConstValue(x->r)) < 0)
				return sbx_sheet__xml_fail(
					x, -E2BIG, "text longer than %zu bytes (limit)", out->max);
		}
		r = sbx_sheet__xml_next(x);
	}
	return r < 0 ? r : sbx_sheet__xml_fail(x, -EINVAL, "unexpected end of document");
}

typedef struct strings_reader {
	xlsx_pkg *p;
	sbx_buf text;
	size_t cap;
} strings_reader;

static int on_strings_node(sheet_xml *x, void *state)
{
	strings_reader *sr = state;
	xlsx_pkg *p = sr->p;
	int r;

	if (!element(x, "si"))
		return 0;
	if (p->nsst >= p->b->limits.max_cells)
		return sbx_sheet__xml_fail(x, -E2BIG, "more than %llu shared strings (limit)",
					   (unsigned long long)p->b->limits.max_cells);
	r = sbx_sheet__xlsx_text(x, &sr->text, true);
	if (r < 0)
		return r;
	if (p->nsst == sr->cap) {
		sr->cap = sr->cap ? sr->cap * 2 : 1024;
		uint32_t *n = realloc(p->sst, sr->cap * sizeof(*n));
		if (!n)
			return sbx_sheet__xml_fail(x, -ENOMEM, "out of memory");
		p->sst = n;
	}
	r = sbx_sheet__xlsx_intern(p, x, sbx_buf_str(&sr->text), sr->text.len, &p->sst[p->nsst]);
	if (r < 0)
		return r;
	p->nsst++;
	return 0;
}

int sbx_sheet__xlsx_strings(xlsx_pkg *p, const char *part, sbx_error *err)
{
	strings_reader sr = {.p = p, .text = SBX_BUF_INIT((size_t)p->b->limits.max_string + 1)};
	int r = each_node(p, part, on_strings_node, &sr, err);

	sbx_buf_free(&sr.text);
	return r;
}
