/* SPDX-License-Identifier: MIT */
/*
 * XLSX writer: the smallest package Excel and LibreOffice open cleanly.
 * Strings are written inline (no shared-strings part); dates, times,
 * percentages and currency get number formats so they read back as such.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sheet-internal.h"
#include "xmlw.h"
#include "zip.h"

#define NS_MAIN	 "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
#define NS_REL	 "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define NS_PKG	 "http://schemas.openxmlformats.org/package/2006/relationships"
#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"

static const char root_rels[] =
	XML_DECL "<Relationships xmlns=\"" NS_PKG "\">"
		 "<Relationship Id=\"rId1\" Type=\"" NS_REL "/officeDocument\" "
		 "Target=\"xl/workbook.xml\"/></Relationships>";

/* cellXfs: 0 general, 1 date, 2 date-time, 3 time, 4 percentage, 5 currency. */
static const char styles[] =
	XML_DECL "<styleSheet xmlns=\"" NS_MAIN "\">"
		 "<numFmts count=\"4\">"
		 "<numFmt numFmtId=\"164\" formatCode=\"yyyy\\-mm\\-dd\"/>"
		 "<numFmt numFmtId=\"165\" formatCode=\"yyyy\\-mm\\-dd\\ hh:mm:ss\"/>"
		 "<numFmt numFmtId=\"166\" formatCode=\"[hh]:mm:ss\"/>"
		 "<numFmt numFmtId=\"167\" formatCode=\"&quot;$&quot;#,##0.00\"/>"
		 "</numFmts>"
		 "<fonts count=\"1\"><font><sz val=\"11\"/><name val=\"Calibri\"/></font></fonts>"
		 "<fills count=\"2\"><fill><patternFill patternType=\"none\"/></fill>"
		 "<fill><patternFill patternType=\"gray125\"/></fill></fills>"
		 "<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border>"
		 "</borders>"
		 "<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" "
		 "borderId=\"0\"/></cellStyleXfs>"
		 "<cellXfs count=\"6\">"
		 "<xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>"
		 "<xf numFmtId=\"164\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" "
		 "applyNumberFormat=\"1\"/>"
		 "<xf numFmtId=\"165\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" "
		 "applyNumberFormat=\"1\"/>"
		 "<xf numFmtId=\"166\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" "
		 "applyNumberFormat=\"1\"/>"
		 "<xf numFmtId=\"10\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" "
		 "applyNumberFormat=\"1\"/>"
		 "<xf numFmtId=\"167\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" "
		 "applyNumberFormat=\"1\"/>"
		 "</cellXfs>"
		 "<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/>"
		 "</cellStyles></styleSheet>";

/* <tag> with text that keeps its leading, trailing and repeated spaces. */
static int put_text_el(sbx_buf *b, const char *tag, const char *s)
{
	return sbx_sheet__xml_element(b, tag, " xml:space=\"preserve\"", s);
}

static int put_cell(sbx_book *bk, sbx_buf *b, uint32_t row, const scell *sc, sbx_error *err)
{
	char col[4], num[32];
	sbx_cell c;
	int style = 0, r;

	sbx_sheet__export(bk, sc, &c);
	sbx_ref_col_name(sc->col, col);
	switch (c.kind) {
	case SBX_CELL_DATE:
		style = c.number != (double)(long long)c.number ? 2 : 1;
		break;
	case SBX_CELL_TIME:
		style = 3;
		break;
	case SBX_CELL_PERCENT:
		style = 4;
		break;
	case SBX_CELL_CURRENCY:
		style = 5;
		break;
	default:
		break;
	}
	r = sbx_buf_printf(b, "<c r=\"%s%u\"", col, row + 1);
	if (r == 0 && style)
		r = sbx_buf_printf(b, " s=\"%d\"", style);
	if (r == 0) {
		const char *t = NULL;
		if (c.kind == SBX_CELL_STRING)
			t = c.formula ? "str" : "inlineStr";
		else if (c.kind == SBX_CELL_BOOL)
			t = "b";
		else if (c.kind == SBX_CELL_ERROR)
			t = "e";
		r = t ? sbx_buf_printf(b, " t=\"%s\">", t) : sbx_buf_putc(b, '>');
	}
	if (r == 0 && c.formula) {
		const char *f = c.formula[0] == '=' ? c.formula + 1 : c.formula;
		r = sbx_sheet__xml_element(b, "f", "", f);
	}
	if (r < 0)
		return r;
	switch (c.kind) {
	case SBX_CELL_EMPTY:
		break;
	case SBX_CELL_STRING:
		if (c.formula) {
			r = put_text_el(b, "v", c.text);
		} else {
			r = sbx_buf_puts(b, "<is>");
			if (r == 0)
				r = put_text_el(b, "t", c.text);
			if (r == 0)
				r = sbx_buf_puts(b, "</is>");
		}
		break;
	case SBX_CELL_ERROR:
		r = put_text_el(b, "v", c.text);
		break;
	case SBX_CELL_BOOL:
		r = sbx_buf_puts(b, c.number != 0 ? "<v>1</v>" : "<v>0</v>");
		break;
	default:
		r = sbx_buf_printf(b, "<v>%s</v>", sbx_sheet_format_number(c.number, num));
		break;
	}
	if (r == 0)
		r = sbx_buf_puts(b, "</c>");
	return r;
}

static int put_sheet(sbx_book *bk, const sbx_sheet *s, sheet_zip_writer *w, sbx_buf *b,
		     sbx_error *err)
{
	uint32_t rows, cols;
	char last[4];
	int r;

	sbx_sheet_used_range(s, &rows, &cols);
	r = sbx_buf_puts(b, XML_DECL "<worksheet xmlns=\"" NS_MAIN "\" xmlns:r=\"" NS_REL "\">");
	if (r == 0 && rows > 0)
		r = sbx_buf_printf(b, "<dimension ref=\"A1:%s%u\"/>",
				   sbx_ref_col_name(cols - 1, last), rows);
	if (r == 0)
		r = sbx_buf_puts(b, "<sheetData>");
	for (uint32_t row = 0; row < rows && r == 0; row++) {
		const srow *rw = &s->rows[row];
		if (rw->n == 0)
			continue;
		r = sbx_buf_printf(b, "<row r=\"%u\">", row + 1);
		for (uint32_t i = 0; i < rw->n && r == 0; i++)
			r = put_cell(bk, b, row, &rw->cells[i], err);
		if (r == 0)
			r = sbx_sheet__zipw_end_row(w, b, "</row>", err);
	}
	if (r == 0)
		r = sbx_buf_puts(b, "</sheetData></worksheet>");
	return r;
}

int sbx_sheet__write_xlsx(sbx_book *bk, sbx_buf *out, sbx_error *err)
{
	sbx_buf ct = SBX_BUF_INIT((size_t)16 << 20), wb = SBX_BUF_INIT((size_t)16 << 20),
		rels = SBX_BUF_INIT((size_t)16 << 20), part = SBX_BUF_INIT((size_t)256 << 20);
	size_t nsheets = bk->nsheets ? bk->nsheets : 1;
	sheet_zip_writer w;
	int r;

	r = sbx_buf_puts(
		&ct, XML_DECL
		"<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/"
		"content-types\">"
		"<Default Extension=\"rels\" "
		"ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
		"<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
		"<Override PartName=\"/xl/workbook.xml\" "
		"ContentType=\"application/"
		"vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>"
		"<Override PartName=\"/xl/styles.xml\" "
		"ContentType=\"application/"
		"vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>");
	if (r == 0)
		r = sbx_buf_puts(&wb, XML_DECL "<workbook xmlns=\"" NS_MAIN "\" xmlns:r=\"" NS_REL
					       "\"><bookViews><workbookView/></bookViews><sheets>");
	if (r == 0)
		r = sbx_buf_puts(&rels, XML_DECL "<Relationships xmlns=\"" NS_PKG "\">");
	for (size_t i = 0; i < nsheets && r == 0; i++) {
		const char *name = bk->nsheets ? bk->sheets[i]->name : "Sheet1";
		r = sbx_buf_printf(
			&ct,
			"<Override PartName=\"/xl/worksheets/sheet%zu.xml\" "
			"ContentType=\"application/"
			"vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/>",
			i + 1);
		if (r == 0)
			r = sbx_buf_puts(&wb, "<sheet");
		if (r == 0)
			r = sbx_sheet__xml_attr(&wb, "name", name);
		if (r == 0)
			r = sbx_buf_printf(&wb, " sheetId=\"%zu\" r:id=\"rId%zu\"/>", i + 1, i + 1);
		if (r == 0)
			r = sbx_buf_printf(&rels,
					   "<Relationship Id=\"rId%zu\" Type=\"" NS_REL
					   "/worksheet\" Target=\"worksheets/sheet%zu.xml\"/>",
					   i + 1, i + 1);
	}
	if (r == 0)
		r = sbx_buf_puts(&ct, "</Types>");
	if (r == 0)
		r = sbx_buf_puts(&wb, "</sheets><calcPr fullCalcOnLoad=\"1\"/></workbook>");
	if (r == 0)
		r = sbx_buf_printf(&rels,
				   "<Relationship Id=\"rId%zu\" Type=\"" NS_REL
				   "/styles\" Target=\"styles.xml\"/></Relationships>",
				   nsheets + 1);
	if (r < 0) {
		r = sbx_error_set(err, r, "out of memory");
		goto done;
	}
	sbx_sheet__zipw_init(&w, out);
	r = sbx_sheet__zipw_add(&w, "[Content_Types].xml", ct.data, ct.len, true, err);
	if (r == 0)
		r = sbx_sheet__zipw_add(&w, "_rels/.rels", root_rels, strlen(root_rels), true, err);
	if (r == 0)
		r = sbx_sheet__zipw_add(&w, "xl/workbook.xml", wb.data, wb.len, true, err);
	if (r == 0)
		r = sbx_sheet__zipw_add(&w, "xl/_rels/workbook.xml.rels", rels.data, rels.len, true,
					err);
	if (r == 0)
		r = sbx_sheet__zipw_add(&w, "xl/styles.xml", styles, strlen(styles), true, err);
	for (size_t i = 0; i < nsheets && r == 0; i++) {
		char name[64];
		snprintf(name, sizeof(name), "xl/worksheets/sheet%zu.xml", i + 1);
		sbx_buf_reset(&part);
		r = sbx_sheet__zipw_begin(&w, name, true, err);
		if (r < 0)
			break;
		if (bk->nsheets)
			r = put_sheet(bk, bk->sheets[i], &w, &part, err);
		else
			r = sbx_buf_puts(&part, XML_DECL "<worksheet xmlns=\"" NS_MAIN
							 "\"><sheetData/></worksheet>");
		if (r == 0)
			r = sbx_sheet__zipw_flush(&w, &part, 0, err);
		if (r < 0) {
			if (!err || !err->code)
				r = sbx_error_set(err, r, "worksheet: %s",
						  r == -ENOBUFS ? "too large" : "out of memory");
			break;
		}
		r = sbx_sheet__zipw_end(&w, err);
	}
	if (r == 0)
		r = sbx_sheet__zipw_finish(&w, err);
	sbx_sheet__zipw_free(&w);
done:
	sbx_buf_free(&ct);
	sbx_buf_free(&wb);
	sbx_buf_free(&rels);
	sbx_buf_free(&part);
	return r;
}
