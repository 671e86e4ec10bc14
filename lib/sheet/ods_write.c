/* SPDX-License-Identifier: MIT */
/*
 * ODS writer: mimetype first and stored, a manifest, content.xml with
 * compressed empty runs, and minimal styles.xml/meta.xml. Numbers keep full
 * double precision; formulas are written with their cached values.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sbx-config.h"
#include "sheet-internal.h"
#include "xmlw.h"
#include "zip.h"

#define ODS_MIME "application/vnd.oasis.opendocument.spreadsheet"
/* Books past this many cells are deflated for speed (see write_ods). */
#define FAST_DEFLATE_CELLS 50000

#define NS_DECLS                                                                                   \
	" xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\""                       \
	" xmlns:style=\"urn:oasis:names:tc:opendocument:xmlns:style:1.0\""                         \
	" xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\""                           \
	" xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\""                         \
	" xmlns:fo=\"urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0\""                \
	" xmlns:number=\"urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0\""                    \
	" xmlns:meta=\"urn:oasis:names:tc:opendocument:xmlns:meta:1.0\""                           \
	" xmlns:of=\"urn:oasis:names:tc:opendocument:xmlns:of:1.2\""                               \
	" xmlns:calcext=\"urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0\""  \
	" office:version=\"1.2\""

/* Data styles so LibreOffice shows dates, times, percentages and booleans as such. */
static const char automatic_styles[] =
	"<office:automatic-styles>"
	"<number:date-style style:name=\"N1\"><number:year number:style=\"long\"/>"
	"<number:text>-</number:text><number:month number:style=\"long\"/>"
	"<number:text>-</number:text><number:day number:style=\"long\"/></number:date-style>"
	"<number:date-style style:name=\"N2\"><number:year number:style=\"long\"/>"
	"<number:text>-</number:text><number:month number:style=\"long\"/>"
	"<number:text>-</number:text><number:day number:style=\"long\"/>"
	"<number:text> </number:text><number:hours number:style=\"long\"/><number:text>:</"
	"number:text><number:minutes number:style=\"long\"/><number:text>:</number:text>"
	"<number:seconds number:style=\"long\"/></number:date-style>"
	"<number:time-style style:name=\"N3\" number:truncate-on-overflow=\"false\">"
	"<number:hours number:style=\"long\"/><number:text>:</number:text>"
	"<number:minutes number:style=\"long\"/><number:text>:</number:text>"
	"<number:seconds number:style=\"long\"/></number:time-style>"
	"<number:percentage-style style:name=\"N4\"><number:number number:decimal-places=\"2\" "
	"number:min-decimal-places=\"0\" number:min-integer-digits=\"1\"/>"
	"<number:text>%</number:text></number:percentage-style>"
	"<number:boolean-style style:name=\"N5\"><number:boolean/></number:boolean-style>"
	"<style:style style:name=\"ce1\" style:family=\"table-cell\" "
	"style:data-style-name=\"N1\"/>"
	"<style:style style:name=\"ce2\" style:family=\"table-cell\" "
	"style:data-style-name=\"N2\"/>"
	"<style:style style:name=\"ce3\" style:family=\"table-cell\" "
	"style:data-style-name=\"N3\"/>"
	"<style:style style:name=\"ce4\" style:family=\"table-cell\" "
	"style:data-style-name=\"N4\"/>"
	"<style:style style:name=\"ce5\" style:family=\"table-cell\" "
	"style:data-style-name=\"N5\"/>"
	"</office:automatic-styles>";

static const char manifest[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<manifest:manifest "
	"xmlns:manifest=\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\" "
	"manifest:version=\"1.2\">"
	"<manifest:file-entry manifest:full-path=\"/\" manifest:version=\"1.2\" "
	"manifest:media-type=\"" ODS_MIME "\"/>"
	"<manifest:file-entry manifest:full-path=\"content.xml\" "
	"manifest:media-type=\"text/xml\"/>"
	"<manifest:file-entry manifest:full-path=\"styles.xml\" "
	"manifest:media-type=\"text/xml\"/>"
	"<manifest:file-entry manifest:full-path=\"meta.xml\" manifest:media-type=\"text/xml\"/>"
	"</manifest:manifest>";

static const char styles[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			     "<office:document-styles" NS_DECLS ">"
			     "<office:styles/></office:document-styles>";

static const char meta[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			   "<office:document-meta" NS_DECLS ">"
			   "<office:meta><meta:generator>sandboxctl/" SBX_VERSION
			   "</meta:generator></office:meta></office:document-meta>";

/* Paragraph text: lines become text:p, space runs text:s, tabs text:tab. */
static int put_paragraphs(sbx_buf *b, const char *s)
{
	int r = sbx_buf_puts(b, "<text:p>");
	bool line_start = true;

	while (*s && r == 0) {
		size_t n = strcspn(s, " \t\n");
		if (n > 0) {
			r = sbx_sheet__xml_escape(b, s, n, 0);
			s += n;
			line_start = false;
			continue;
		}
		if (*s == '\n') {
			r = sbx_buf_puts(b, "</text:p><text:p>");
			line_start = true;
			s++;
		} else if (*s == '\t') {
			r = sbx_buf_puts(b, "<text:tab/>");
			line_start = false;
			s++;
		} else {
			size_t k = strspn(s, " ");
			bool at_end = s[k] == '\0' || s[k] == '\n';
			if (line_start || at_end)
				r = sbx_buf_printf(b, "<text:s text:c=\"%zu\"/>", k);
			else if (k == 1)
				r = sbx_buf_putc(b, ' ');
			else
				r = sbx_buf_printf(b, " <text:s text:c=\"%zu\"/>", k - 1);
			s += k;
			line_start = false;
		}
	}
	if (r == 0)
		r = sbx_buf_puts(b, "</text:p>");
	return r;
}

static void iso_time(double days, char buf[static 64])
{
	double secs = fabs(days) * 86400.0;
	long long whole = (long long)floor(secs);
	double frac = secs - (double)whole;
	long long ms = llround(frac * 1000.0);

	if (ms >= 1000) {
		whole++;
		ms = 0;
	}
	if (ms)
		snprintf(buf, 64, "%sPT%lldH%02lldM%02lld.%03lldS", days < 0 ? "-" : "",
			 whole / 3600, whole / 60 % 60, whole % 60, ms);
	else
		snprintf(buf, 64, "%sPT%lldH%02lldM%02lldS", days < 0 ? "-" : "", whole / 3600,
			 whole / 60 % 60, whole % 60);
}

static int put_cell(sbx_book *bk, sbx_buf *b, const scell *sc, sbx_error *err)
{
	sbx_cell c;
	char num[32], tmp[64];
	int r;

	sbx_sheet__export(bk, sc, &c);
	r = sbx_buf_puts(b, "<table:table-cell");
	if (r == 0 && c.formula) {
		_cleanup_free_ char *of = NULL;
		r = sbx_formula_to_ods(c.formula, SIZE_MAX / 2, &of, err);
		if (r < 0)
			return r;
		r = sbx_sheet__xml_attr(b, "table:formula", of);
	}
	if (r < 0)
		return r;
	switch (c.kind) {
	case SBX_CELL_EMPTY:
		return sbx_buf_puts(b, "/>");
	case SBX_CELL_NUMBER:
	case SBX_CELL_CURRENCY: {
		const char *type = c.kind == SBX_CELL_NUMBER ? "float" : "currency";

		sbx_sheet_format_number(c.number, num);
		return sbx_buf_printf(b,
				      " office:value-type=\"%s\" office:value=\"%s\" "
				      "calcext:value-type=\"%s\"><text:p>%s</text:p>"
				      "</table:table-cell>",
				      type, num, type, num);
	}
	case SBX_CELL_PERCENT:
		sbx_sheet_format_number(c.number, num);
		return sbx_buf_printf(b,
				      " table:style-name=\"ce4\" office:value-type=\"percentage\" "
				      "office:value=\"%s\" calcext:value-type=\"percentage\">"
				      "<text:p>%s%%</text:p></table:table-cell>",
				      num, sbx_sheet_format_number(c.number * 100.0, tmp));
	case SBX_CELL_BOOL:
		return sbx_buf_printf(b,
				      " table:style-name=\"ce5\" office:value-type=\"boolean\" "
				      "office:boolean-value=\"%s\" calcext:value-type=\"boolean\">"
				      "<text:p>%s</text:p></table:table-cell>",
				      c.number != 0 ? "true" : "false",
				      c.number != 0 ? "TRUE" : "FALSE");
	case SBX_CELL_DATE: {
		char d[40];
		sbx_sheet_format_date(c.number, d);
		bool has_time = strchr(d, 'T') != NULL;
		char shown[40];
		memcpy(shown, d, sizeof(shown));
		if (has_time)
			*strchr(shown, 'T') = ' ';
		return sbx_buf_printf(b,
				      " table:style-name=\"%s\" office:value-type=\"date\" "
				      "office:date-value=\"%s\" calcext:value-type=\"date\">"
				      "<text:p>%s</text:p></table:table-cell>",
				      has_time ? "ce2" : "ce1", d, shown);
	}
	case SBX_CELL_TIME: {
		char shown[40];
		iso_time(c.number, tmp);
		return sbx_buf_printf(b,
				      " table:style-name=\"ce3\" office:value-type=\"time\" "
				      "office:time-value=\"%s\" calcext:value-type=\"time\">"
				      "<text:p>%s</text:p></table:table-cell>",
				      tmp, sbx_sheet_format_time(c.number, shown));
	}
	case SBX_CELL_ERROR:
		r = sbx_buf_puts(b, " office:value-type=\"string\" office:string-value=\"\" "
				    "calcext:value-type=\"error\">");
		break;
	case SBX_CELL_STRING:
		r = sbx_buf_puts(b, " office:value-type=\"string\" calcext:value-type=\"string\"");
		/* LibreOffice drops text:tab from cell text; the attribute keeps it. */
		if (r == 0 && strchr(c.text, '\t')) {
			r = sbx_sheet__xml_attr(b, "office:string-value", c.text);
		}
		if (r == 0)
			r = sbx_buf_putc(b, '>');
		break;
	}
	if (r == 0)
		r = put_paragraphs(b, c.text);
	if (r == 0)
		r = sbx_buf_puts(b, "</table:table-cell>");
	return r;
}

static int put_sheet(sbx_book *bk, const sbx_sheet *s, sheet_zip_writer *w, sbx_buf *b,
		     sbx_error *err)
{
	uint32_t rows, cols, empty_rows = 0;
	int r;

	sbx_sheet_used_range(s, &rows, &cols);
	r = sbx_buf_puts(b, "<table:table");
	if (r == 0)
		r = sbx_sheet__xml_attr(b, "table:name", s->name);
	if (r == 0)
		r = sbx_buf_printf(b, "><table:table-column table:number-columns-repeated=\"%u\"/>",
				   cols ? cols : 1);
	if (rows == 0 && r == 0)
		r = sbx_buf_puts(b, "<table:table-row><table:table-cell/></table:table-row>");
	for (uint32_t row = 0; row < rows && r == 0; row++) {
		const srow *rw = &s->rows[row];
		uint32_t col = 0;
		if (rw->n == 0) {
			empty_rows++;
			continue;
		}
		if (empty_rows) {
			r = sbx_buf_printf(
				b,
				"<table:table-row table:number-rows-repeated=\"%u\">"
				"<table:table-cell table:number-columns-repeated=\"%u\"/>"
				"</table:table-row>",
				empty_rows, cols);
			empty_rows = 0;
		}
		if (r == 0)
			r = sbx_buf_puts(b, "<table:table-row>");
		for (uint32_t i = 0; i < rw->n && r == 0; i++) {
			const scell *c = &rw->cells[i];
			if (c->col > col)
				r = sbx_buf_printf(b,
						   "<table:table-cell "
						   "table:number-columns-repeated=\"%u\"/>",
						   c->col - col);
			if (r == 0)
				r = put_cell(bk, b, c, err);
			col = c->col + 1u;
		}
		if (r == 0 && col < cols)
			r = sbx_buf_printf(
				b, "<table:table-cell table:number-columns-repeated=\"%u\"/>",
				cols - col);
		if (r == 0)
			r = sbx_sheet__zipw_end_row(w, b, "</table:table-row>", err);
	}
	if (r == 0)
		r = sbx_buf_puts(b, "</table:table>");
	return r;
}

int sbx_sheet__write_ods(sbx_book *bk, sbx_buf *out, sbx_error *err)
{
	sbx_buf content = SBX_BUF_INIT((size_t)256 << 20);
	sheet_zip_writer w;
	int r;

	sbx_sheet__zipw_init(&w, out);
	r = sbx_sheet__zipw_add(&w, "mimetype", ODS_MIME, strlen(ODS_MIME), false, err);
	if (r == 0)
		r = sbx_sheet__zipw_add(&w, "META-INF/manifest.xml", manifest, strlen(manifest),
					true, err);
	if (r == 0)
		r = sbx_sheet__zipw_add(&w, "styles.xml", styles, strlen(styles), true, err);
	if (r == 0)
		r = sbx_sheet__zipw_add(&w, "meta.xml", meta, strlen(meta), true, err);
	/*
	 * deflate at level 6 is a third of the time it takes to save a large
	 * book, and level 1 costs it a few percent more bytes; small books (every
	 * task's files) keep level 6, so their bytes do not change.
	 */
	if (bk->ncells > FAST_DEFLATE_CELLS)
		w.level = 1;
	if (r == 0)
		r = sbx_sheet__zipw_begin(&w, "content.xml", true, err);
	if (r == 0)
		r = sbx_buf_puts(&content, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
					   "<office:document-content" NS_DECLS ">");
	if (r == 0)
		r = sbx_buf_puts(&content, automatic_styles);
	if (r == 0)
		r = sbx_buf_puts(&content, "<office:body><office:spreadsheet>");
	if (r == 0 && bk->nsheets == 0)
		r = sbx_buf_puts(&content,
				 "<table:table table:name=\"Sheet1\"><table:table-column/>"
				 "<table:table-row><table:table-cell/></table:table-row>"
				 "</table:table>");
	for (size_t i = 0; i < bk->nsheets && r == 0; i++)
		r = put_sheet(bk, bk->sheets[i], &w, &content, err);
	if (r == 0)
		r = sbx_buf_puts(&content, "</office:spreadsheet></office:body>"
					   "</office:document-content>");
	if (r == 0)
		r = sbx_sheet__zipw_flush(&w, &content, 0, err);
	if (r == 0)
		r = sbx_sheet__zipw_end(&w, err);
	if (r == 0)
		r = sbx_sheet__zipw_finish(&w, err);
	if (r < 0 && (!err || !err->code))
		r = sbx_error_set(err, r, "content.xml: %s",
				  r == -ENOBUFS ? "too large" : "out of memory");
	sbx_sheet__zipw_free(&w);
	sbx_buf_free(&content);
	return r;
}
