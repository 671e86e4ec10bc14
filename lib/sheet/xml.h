/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Streaming XML over a zip entry with libxml2's xmlTextReader, hardened:
 * no network (XML_PARSE_NONET), no entity substitution, no DTD loading, and
 * a DOCTYPE is refused before libxml2 ever sees it (a byte-level scan of the
 * prolog), so entity expansion attacks cannot start. Nesting is capped.
 * Only UTF-8 documents are accepted (ODF and OOXML always are).
 */

#include <libxml/xmlreader.h>

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
