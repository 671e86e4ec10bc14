/* SPDX-License-Identifier: MIT */
/* Hardened streaming XML reading over zip entries (see xml.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sheet-internal.h"
#include "xml.h"

enum {
	P_TEXT,
	P_LT,
	P_PI,
	P_PI_Q,
	P_BANG,
	P_BANG_DASH,
	P_COMMENT,
	P_C1,
	P_C2,
	P_START,
	P_DONE = -1,
};

/*
 * Walks the prolog byte by byte (the state survives chunk boundaries) and
 * refuses anything but the XML declaration, processing instructions,
 * comments and whitespace before the root element. Returns false to refuse.
 */
bool sbx_sheet__xml_prolog_scan(int *state, const unsigned char *p, size_t n, const char **why)
{
	for (size_t i = 0; i < n && *state != P_DONE; i++) {
		unsigned char c = p[i];
		switch (*state) {
		case P_START:
			if (c == 0xef) { /* UTF-8 BOM: skip its three bytes */
				if (i + 2 < n && p[i + 1] == 0xbb && p[i + 2] == 0xbf) {
					i += 2;
					*state = P_TEXT;
					continue;
				}
			}
			if (c == 0xfe || c == 0xff || c == 0) {
				*why = "only UTF-8 XML is accepted";
				return false;
			}
			*state = P_TEXT;
			/* fall through */
		case P_TEXT:
			if (c == '<')
				*state = P_LT;
			break;
		case P_LT:
			if (c == '?')
				*state = P_PI;
			else if (c == '!')
				*state = P_BANG;
			else
				*state = P_DONE;
			break;
		case P_PI:
			if (c == '?')
				*state = P_PI_Q;
			break;
		case P_PI_Q:
			if (c == '>')
				*state = P_TEXT;
			else if (c != '?')
				*state = P_PI;
			break;
		case P_BANG:
			if (c != '-') {
				*why = "DOCTYPE and entity declarations are not allowed";
				return false;
			}
			*state = P_BANG_DASH;
			break;
		case P_BANG_DASH:
			if (c != '-') {
				*why = "DOCTYPE and entity declarations are not allowed";
				return false;
			}
			*state = P_COMMENT;
			break;
		case P_COMMENT:
			if (c == '-')
				*state = P_C1;
			break;
		case P_C1:
			*state = c == '-' ? P_C2 : P_COMMENT;
			break;
		case P_C2:
			if (c == '>')
				*state = P_TEXT;
			else if (c != '-')
				*state = P_COMMENT;
			break;
		}
	}
	return true;
}

static int io_read(void *ctx, char *buf, int len)
{
	sheet_xml *x = ctx;
	const char *why = NULL;
	ssize_t n;

	if (x->failed)
		return -1;
	n = sbx_sheet__zip_read(&x->zip, buf, (size_t)len, x->err);
	if (n < 0) {
		x->failed = true;
		return -1;
	}
	if (x->prolog != P_DONE &&
	    !sbx_sheet__xml_prolog_scan(&x->prolog, (const unsigned char *)buf, (size_t)n, &why)) {
		sbx_error_set(x->err, -EINVAL, "'%s': %s: %s", x->file, x->part, why);
		x->failed = true;
		return -1;
	}
	return (int)n;
}

static int io_close(void *ctx)
{
	return 0;
}

/* err = "'<file>': <part>: line <line>: <message>", code. */
static int fail_at(sbx_error *err, int code, const char *file, const char *part, int line,
		   const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
static int fail_at(sbx_error *err, int code, const char *file, const char *part, int line,
		   const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	return sbx_error_set(err, code, "'%s': %s: line %d: %s", file, part, line, msg);
}

/*
 * libxml2's first error in file's part into err (-EINVAL, its message without
 * the trailing newline), once: false when *failed was already set or e is
 * only a warning.
 */
static bool report_error(const xmlError *e, const char *file, const char *part, bool *failed,
			 sbx_error *err)
{
	char msg[256];
	size_t n;

	if (*failed || !e || e->level < XML_ERR_ERROR)
		return false;
	snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "malformed XML");
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	sbx_error_set(err, -EINVAL, "'%s': %s: line %d: %s", file, part, e->line, msg);
	*failed = true;
	return true;
}

static void on_error(void *ctx, xmlErrorPtr e)
{
	sheet_xml *x = ctx;

	report_error(e, x->file, x->part, &x->failed, x->err);
}

int sbx_sheet__xml_open(sheet_xml *x, const void *data, size_t len, sheet_zip_budget *budget,
			const char *part, sbx_error *err)
{
	int r;

	memset(x, 0, sizeof(*x));
	x->err = err;
	x->file = budget->file;
	x->part = part;
	x->max_depth = budget->lim->max_depth;
	x->prolog = P_START;
	r = sbx_sheet__zip_open_entry(&x->zip, data, len, budget, part, err);
	if (r < 0)
		return r;
	x->r = xmlReaderForIO(io_read, io_close, x, NULL, "UTF-8",
			      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
				      XML_PARSE_COMPACT);
	if (!x->r) {
		sbx_sheet__zip_close(&x->zip);
		return sbx_error_set(err, -ENOMEM, "'%s': %s: cannot create XML reader", x->file,
				     part);
	}
	xmlTextReaderSetStructuredErrorHandler(x->r, on_error, x);
	return 0;
}

void sbx_sheet__xml_close(sheet_xml *x)
{
	if (x->r)
		xmlFreeTextReader(x->r);
	x->r = NULL;
	sbx_sheet__zip_close(&x->zip);
}

int sbx_sheet__xml_fail(sheet_xml *x, int code, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = fail_at(x->err, code, x->file, x->part, xmlTextReaderGetParserLineNumber(x->r), fmt,
		    ap);
	va_end(ap);
	x->failed = true;
	return r;
}

static int check_node(sheet_xml *x)
{
	int type = xmlTextReaderNodeType(x->r);

	if (type == XML_READER_TYPE_DOCUMENT_TYPE || type == XML_READER_TYPE_ENTITY ||
	    type == XML_READER_TYPE_ENTITY_REFERENCE || type == XML_READER_TYPE_NOTATION)
		return sbx_sheet__xml_fail(x, -EINVAL,
					   "DOCTYPE and entity references are not allowed");
	if ((uint32_t)xmlTextReaderDepth(x->r) > x->max_depth)
		return sbx_sheet__xml_fail(x, -E2BIG, "XML nested deeper than %u (limit)",
					   x->max_depth);
	return 1;
}

static int after_read(sheet_xml *x, int r)
{
	if (r == 1 && !x->failed)
		return check_node(x);
	if (r == 0 && !x->failed)
		return 0;
	if (x->err && x->err->code)
		return x->err->code;
	x->failed = true;
	return sbx_error_set(x->err, -EINVAL, "'%s': %s: malformed XML", x->file, x->part);
}

int sbx_sheet__xml_next(sheet_xml *x)
{
	return after_read(x, xmlTextReaderRead(x->r));
}

int sbx_sheet__xml_skip(sheet_xml *x)
{
	/* xmlTextReaderNext moves past the subtree; callers then continue with next(). */
	int r = xmlTextReaderNext(x->r);
	return after_read(x, r);
}

const char *sbx_sheet__xml_attr_value(const xmlAttr *a, char **owned)
{
	const xmlNode *t = a->children;

	*owned = NULL;
	if (!t)
		return "";
	if (t->type == XML_TEXT_NODE && !t->next && t->content)
		return (const char *)t->content;
	*owned = (char *)xmlNodeListGetString(a->doc, a->children, 1);
	return *owned;
}

/* ---- SAX ---- */

static void on_sax_error(void *ctx, xmlErrorPtr e)
{
	sheet_sax *s = ctx;

	if (report_error(e, s->file, s->part, &s->failed, s->err) && s->ctxt)
		xmlStopParser(s->ctxt);
}

int sbx_sheet__sax_fail(sheet_sax *s, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!s->failed)
		fail_at(s->err, code, s->file, s->part, s->ctxt ? xmlSAX2GetLineNumber(s->ctxt) : 0,
			fmt, ap);
	va_end(ap);
	s->failed = true;
	if (s->ctxt)
		xmlStopParser(s->ctxt);
	return code;
}

int sbx_sheet__sax_parse(sheet_sax *s, const void *data, size_t len, sheet_zip_budget *budget,
			 const char *part, const xmlSAXHandler *h, sbx_error *err)
{
	sheet_zip_pipe *pipe = NULL;
	sheet_zip z = {0};
	int state = P_START, r;

	s->err = err;
	s->file = budget->file;
	s->part = part;
	s->max_depth = budget->lim->max_depth;
	s->depth = 0;
	s->failed = false;
	r = sbx_sheet__zip_open_entry(&z, data, len, budget, part, err);
	if (r < 0)
		return r;
	/*
	 * The parser gets the caller's content callbacks and nothing else: no DTD or
	 * entity machinery at all (the prolog scan refuses a DOCTYPE anyway).
	 */
	xmlSAXHandler sax = {
		.initialized = XML_SAX2_MAGIC,
		.serror = on_sax_error,
		.startElementNs = h->startElementNs,
		.endElementNs = h->endElementNs,
		.characters = h->characters,
		.cdataBlock = h->cdataBlock,
	};
	s->ctxt = xmlCreatePushParserCtxt(&sax, s, NULL, 0, NULL);
	if (!s->ctxt) {
		sbx_sheet__zip_close(&z);
		return sbx_error_set(err, -ENOMEM, "'%s': %s: cannot create XML parser", s->file,
				     part);
	}
	xmlCtxtUseOptions(s->ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	r = sbx_sheet__pipe_start(&pipe, &z, err);
	for (; r == 0;) {
		const char *why = NULL, *buf = NULL;
		ssize_t n = sbx_sheet__pipe_next(pipe, &buf, err);
		if (n < 0) {
			s->failed = true;
			r = (int)n;
			break;
		}
		if (state != P_DONE &&
		    !sbx_sheet__xml_prolog_scan(&state, (const unsigned char *)buf, (size_t)n,
						&why)) {
			r = sbx_error_set(err, -EINVAL, "'%s': %s: %s", s->file, part, why);
			s->failed = true;
			break;
		}
		xmlParseChunk(s->ctxt, buf, (int)n, n == 0);
		if (s->failed || n == 0)
			break;
	}
	sbx_sheet__pipe_stop(pipe);
	if (r == 0 && !s->failed && !s->ctxt->wellFormed) {
		sbx_error_set(err, -EINVAL, "'%s': %s: malformed XML", s->file, part);
		s->failed = true;
	}
	if (s->failed && r == 0)
		r = err && err->code ? err->code : -EINVAL;
	xmlFreeParserCtxt(s->ctxt);
	s->ctxt = NULL;
	sbx_sheet__zip_close(&z);
	return r;
}
