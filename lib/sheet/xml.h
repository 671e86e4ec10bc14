/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Streaming XML over a zip entry with libxml2's xmlTextReader, hardened:
 * no network (XML_PARSE_NONET), no entity substitution, no DTD loading, and
 * a DOCTYPE is refused before libxml2 ever sees it (a byte-level scan of the
 * prolog), so entity expansion attacks cannot start. Nesting is capped.
 * Only UTF-8 documents are accepted (ODF and OOXML always are).
 */

#include <stdbool.h>
#include <string.h>
#include <libxml/xmlreader.h>
#include <libxml/SAX2.h>

#include "sbx/error.h"
#include "zip.h"

typedef struct sheet_xml {
	xmlTextReaderPtr r;
	sheet_zip zip;
	sbx_error *err;
	const char *file;
	const char *part;
	uint32_t max_depth;
	int prolog; /* scanner state; -1 when past the prolog */
	bool failed;
} sheet_xml;

/*
 * Opens part inside the zip image for streaming. -ENOENT (err not set) when
 * the part is absent.
 */
int sbx_sheet__xml_open(sheet_xml *x, const void *data, size_t len, sheet_zip_budget *budget,
			const char *part, sbx_error *err);

/*
 * Advances to the next node. Returns 1 on a node, 0 at the end of the
 * document, or a negative errno with err set ("'x.ods': content.xml:
 * line 3: ...").
 */
int sbx_sheet__xml_next(sheet_xml *x);

/* Skips the current element's subtree (the next call to next() lands after it). */
int sbx_sheet__xml_skip(sheet_xml *x);

/* Sets err for a semantic problem found by the caller, with file/part/line context. */
int sbx_sheet__xml_fail(sheet_xml *x, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void sbx_sheet__xml_close(sheet_xml *x);

/* Interns s in the reader's dictionary so names compare by pointer. */
static inline const xmlChar *sbx_sheet__xml_name(sheet_xml *x, const char *s)
{
	return xmlTextReaderConstString(x->r, (const xmlChar *)s);
}

/*
 * Fast access to the current node without the xmlTextReaderConst* calls,
 * which hash every name through the dictionary on each call. Element and
 * attribute names are dictionary strings: compare them by pointer with
 * names from sbx_sheet__xml_name.
 */
static inline xmlNodePtr sbx_sheet__xml_node(sheet_xml *x)
{
	return xmlTextReaderCurrentNode(x->r);
}

/* True when the node or attribute is in the namespace href. */
static inline bool sbx_sheet__xml_in_ns(const xmlNs *ns, const char *href)
{
	return ns && ns->href && strcmp((const char *)ns->href, href) == 0;
}

/*
 * An attribute's value. Values made of one text node (the normal case) are
 * returned in place; anything else is joined into a malloc'd string stored
 * in *owned (free it; NULL when nothing was allocated). NULL on OOM.
 */
const char *sbx_sheet__xml_attr_value(const xmlAttr *a, char **owned);

/* Checks the prolog bytes (see xml.c); *state starts at 9 (P_START), -1 when done. */
bool sbx_sheet__xml_prolog_scan(int *state, const unsigned char *p, size_t n, const char **why);

/*
 * The fast path for big parts (ODS content.xml): libxml2's SAX2 push parser
 * fed from the zip, with the same hardening as the reader (prolog scan, no
 * DTD callbacks, NONET): of h, only startElementNs, endElementNs, characters
 * and cdataBlock are used. A callback's userData is the sheet_sax, which the
 * caller embeds first in its own state. Callbacks track depth themselves
 * (depth/max_depth) and report problems with sbx_sheet__sax_fail, which
 * stops the parser.
 */
typedef struct sheet_sax {
	xmlParserCtxtPtr ctxt;
	sbx_error *err;
	const char *file;
	const char *part;
	uint32_t depth, max_depth;
	bool failed;
} sheet_sax;

int sbx_sheet__sax_parse(sheet_sax *s, const void *data, size_t len, sheet_zip_budget *budget,
			 const char *part, const xmlSAXHandler *h, sbx_error *err);
int sbx_sheet__sax_fail(sheet_sax *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
