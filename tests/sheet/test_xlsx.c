/* SPDX-License-Identifier: MIT */
/* XLSX reading and writing; CSV reading and writing. */
#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "image_fixture.h"

#define MAIN "xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\""
#define RNS  "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\""
#define PKG  "xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\""
#define RT   "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"

START_TEST(xlsx_write_read_round_trip)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = sample_book(SBX_FORMAT_XLSX), *back;

	ck_assert_int_eq(sbx_book_save_memory(b, SBX_FORMAT_AUTO, &img, &err), 0);
	ck_assert_int_eq(sbx_sheet_detect_format("x", img.data, img.len), SBX_FORMAT_XLSX);
	ck_assert_int_eq(open_image(&img, "rt.xlsx", NULL, &back, &err), 0);
	ck_assert_int_eq(sbx_book_format(back), SBX_FORMAT_XLSX);
	check_sample_values(back, true);
	/* And across formats: the XLSX book saved as ODS reads the same. */
	ck_assert_int_eq(sbx_book_save_memory(back, SBX_FORMAT_ODS, &img, &err), 0);
	sbx_book_free(back);
	ck_assert_int_eq(open_image(&img, "rt.ods", NULL, &back, &err), 0);
	check_sample_values(back, true);
	sbx_book_free(back);
	sbx_book_free(b);
}
END_TEST

START_TEST(xlsx_read_libreoffice_saved)
{
	check_lo_saved("lo-saved.xlsx");
}
END_TEST

/* A hand-made package exercising what LibreOffice's writer never produces. */
static void make_tricky_xlsx(const char *first_sheet, const char *sst, bool date1904)
{
	char wb[1024];
	snprintf(wb, sizeof(wb),
		 "<workbook " MAIN " " RNS "><workbookPr date1904=\"%d\"/><sheets>"
		 "<sheet name=\"Odd Name\" sheetId=\"7\" r:id=\"rIdB\"/>"
		 "<sheet name=\"Other\" sheetId=\"1\" r:id=\"rIdA\"/></sheets></workbook>",
		 date1904 ? 1 : 0);
	const char *e[] = {
		"_rels/.rels",
		"<Relationships " PKG "><Relationship Id=\"x\" Type=\"" RT "officeDocument\" "
		"Target=\"/book/wb.xml\"/></Relationships>",
		"book/wb.xml",
		wb,
		"book/_rels/wb.xml.rels",
		"<Relationships " PKG ">"
		"<Relationship Id=\"rIdA\" Type=\"" RT "worksheet\" Target=\"../data/two.xml\"/>"
		"<Relationship Id=\"rIdB\" Type=\"" RT "worksheet\" Target=\"sheets/first.xml\"/>"
		"<Relationship Id=\"s\" Type=\"" RT "sharedStrings\" Target=\"strings.xml\"/>"
		"<Relationship Id=\"t\" Type=\"" RT "styles\" Target=\"st.xml\"/>"
		"</Relationships>",
		"book/st.xml",
		"<styleSheet " MAIN
		"><numFmts><numFmt numFmtId=\"200\" formatCode=\"d\\.m\\.yyyy\"/>"
		"<numFmt numFmtId=\"201\" formatCode=\"0.0%\"/>"
		"<numFmt numFmtId=\"202\" formatCode=\"[$-409]h:mm AM/PM\"/>"
		"<numFmt numFmtId=\"203\" formatCode=\"#,##0.00\\ [$€-407]\"/>"
		"<numFmt numFmtId=\"204\" formatCode=\"&quot;Qty &quot;0\"/></numFmts>"
		"<cellXfs><xf numFmtId=\"0\"/><xf numFmtId=\"14\"/><xf numFmtId=\"200\"/>"
		"<xf numFmtId=\"201\"/><xf numFmtId=\"202\"/><xf numFmtId=\"203\"/>"
		"<xf numFmtId=\"204\"/><xf numFmtId=\"22\"/></cellXfs></styleSheet>",
		"book/strings.xml",
		sst,
		"book/sheets/first.xml",
		first_sheet,
		"data/two.xml",
		"<worksheet " MAIN "><sheetData><row><c><v>5</v></c><c><v>6</v></c></row>"
		"<row/><row><c t=\"inlineStr\"><is><r><t>in</t></r><r><t xml:space=\"preserve\"> "
		"line</t></r></is></c></row></sheetData></worksheet>",
		NULL};
	make_zip(&img, e, NULL);
}

static const char tricky_sst[] =
	"<sst " MAIN " count=\"3\" uniqueCount=\"3\"><si><t>plain</t></si>"
	"<si><r><rPr><b/></rPr><t>rich </t></r><r><t>runs</t></r><rPh><t>PHONETIC</t></rPh></si>"
	"<si><t xml:space=\"preserve\">  spaced\nlines </t></si></sst>";

static const char tricky_sheet[] =
	"<worksheet " MAIN "><dimension ref=\"A1:F9\"/><cols><col min=\"1\" max=\"2\"/></cols>"
	"<sheetData>"
	"<row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c><c r=\"B1\" t=\"s\"><v>1</v></c>"
	"<c r=\"C1\" t=\"s\"><v>2</v></c><c r=\"E1\" s=\"1\"/></row>"
	"<row r=\"2\"><c r=\"A2\" s=\"1\"><v>45352</v></c><c r=\"B2\" s=\"2\"><v>45352</v></c>"
	"<c r=\"C2\" s=\"3\"><v>0.125</v></c><c r=\"D2\" s=\"4\"><v>0.5</v></c>"
	"<c r=\"E2\" s=\"5\"><v>9.99</v></c><c r=\"F2\" s=\"6\"><v>3</v></c></row>"
	"<row r=\"3\"><c r=\"A3\" t=\"b\"><v>1</v></c><c r=\"B3\" t=\"e\"><v>#N/A</v></c>"
	"<c r=\"C3\" t=\"d\"><v>2024-03-01T06:00:00</v></c>"
	"<c r=\"D3\" t=\"str\"><f>\"a\"&amp;\"b\"</f><v>ab</v></c><c r=\"E3\" "
	"s=\"7\"><v>45352.25</v></c></row>"
	"<row r=\"5\"><c r=\"A5\"><v>1</v></c><c r=\"B5\"><f t=\"shared\" ref=\"B5:B7\" "
	"si=\"0\">A5*2+$A$5</f>"
	"<v>3</v></c></row>"
	"<row r=\"6\"><c r=\"A6\"><v>2</v></c><c r=\"B6\"><f t=\"shared\" "
	"si=\"0\"/><v>5</v></c></row>"
	"<row r=\"7\"><c r=\"A7\"><v>3</v></c><c r=\"B7\"><f t=\"shared\" si=\"0\"/><v>7</v></c>"
	"<c r=\"C7\"><f>SUM(A5:A7)</f></c></row>"
	"<row><c><v>-1.5e-3</v></c><c/><c><v>8</v></c></row>"
	"</sheetData><mergeCells count=\"1\"><mergeCell ref=\"A1:B1\"/></mergeCells></worksheet>";

START_TEST(xlsx_read_tricky_package)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;
	sbx_cell c;

	make_tricky_xlsx(tricky_sheet, tricky_sst, false);
	ck_assert_msg(open_image(&img, "t.xlsx", NULL, &b, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(sbx_book_sheet_count(b), 2);
	const sbx_sheet *s = sbx_book_sheet(b, 0), *s2 = sbx_book_sheet(b, 1);
	ck_assert_str_eq(sbx_sheet_name(s), "Odd Name");
	assert_text(s, "A1", SBX_CELL_STRING, "plain");
	assert_text(s, "B1", SBX_CELL_STRING, "rich runs");
	assert_text(s, "C1", SBX_CELL_STRING, "  spaced\nlines ");
	ck_assert_int_eq(cell_at(s, "E1", &c), SBX_CELL_EMPTY);
	assert_number(s, "A2", SBX_CELL_DATE, 45352);
	assert_number(s, "B2", SBX_CELL_DATE, 45352);
	assert_number(s, "C2", SBX_CELL_PERCENT, 0.125);
	assert_number(s, "D2", SBX_CELL_TIME, 0.5);
	assert_number(s, "E2", SBX_CELL_CURRENCY, 9.99);
	assert_number(s, "F2", SBX_CELL_NUMBER, 3);
	assert_number(s, "A3", SBX_CELL_BOOL, 1);
	assert_text(s, "B3", SBX_CELL_ERROR, "#N/A");
	assert_number(s, "C3", SBX_CELL_DATE, 45352.25);
	assert_text(s, "D3", SBX_CELL_STRING, "ab");
	assert_formula(s, "D3", "=\"a\"&\"b\"");
	assert_number(s, "E3", SBX_CELL_DATE, 45352.25);
	assert_formula(s, "B5", "=A5*2+$A$5");
	assert_formula(s, "B6", "=A6*2+$A$5");
	assert_formula(s, "B7", "=A7*2+$A$5");
	assert_number(s, "B7", SBX_CELL_NUMBER, 7);
	ck_assert_int_eq(cell_at(s, "C7", &c), SBX_CELL_EMPTY);
	ck_assert_str_eq(c.formula, "=SUM(A5:A7)");
	/* A row without r follows the previous one; cells without r follow too. */
	assert_number(s, "A8", SBX_CELL_NUMBER, -1.5e-3);
	assert_number(s, "C8", SBX_CELL_NUMBER, 8);
	assert_number(s2, "A1", SBX_CELL_NUMBER, 5);
	assert_number(s2, "B1", SBX_CELL_NUMBER, 6);
	assert_text(s2, "A3", SBX_CELL_STRING, "in line");
	sbx_book_free(b);

	/* date1904: serials move by 1462 days so dates stay dates. */
	make_tricky_xlsx(tricky_sheet, tricky_sst, true);
	ck_assert_int_eq(open_image(&img, "t.xlsx", NULL, &b, &err), 0);
	assert_number(sbx_book_sheet(b, 0), "A2", SBX_CELL_DATE, 45352 + 1462);
	assert_number(sbx_book_sheet(b, 0), "F2", SBX_CELL_NUMBER, 3);
	sbx_book_free(b);
}
END_TEST

START_TEST(xlsx_number_format_kinds)
{
	struct {
		unsigned id;
		const char *code;
		sbx_cell_kind kind;
	} cases[] = {
		{0, NULL, SBX_CELL_NUMBER},
		{14, NULL, SBX_CELL_DATE},
		{22, NULL, SBX_CELL_DATE},
		{21, NULL, SBX_CELL_TIME},
		{46, NULL, SBX_CELL_TIME},
		{10, NULL, SBX_CELL_PERCENT},
		{164, "General", SBX_CELL_NUMBER},
		{164, "0.00", SBX_CELL_NUMBER},
		{164, "yyyy-mm-dd", SBX_CELL_DATE},
		{164, "[$-409]mmmm d, yyyy", SBX_CELL_DATE},
		{164, "[h]:mm:ss", SBX_CELL_TIME},
		{164, "0.0%", SBX_CELL_PERCENT},
		{164, "\"$\"#,##0.00", SBX_CELL_CURRENCY},
		{164, "#,##0 [$EUR]", SBX_CELL_CURRENCY},
		{164, "0 \"days\"", SBX_CELL_NUMBER},
		{164, "0.00E+00", SBX_CELL_NUMBER},
		{164, "@", SBX_CELL_NUMBER},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(sbx_sheet__xlsx_format_kind(cases[i].id, cases[i].code) ==
				      cases[i].kind,
			      "%u %s", cases[i].id, cases[i].code ? cases[i].code : "");
}
END_TEST

START_TEST(xlsx_refuses_hostile_parts)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;

	make_tricky_xlsx(tricky_sheet,
			 "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"aaaa\">]><sst " MAIN
			 "><si><t>&a;</t></si></sst>",
			 false);
	ck_assert_int_lt(open_image(&img, "h.xlsx", NULL, &b, &err), 0);
	ck_assert_str_eq(err.msg, "'h.xlsx': book/strings.xml: DOCTYPE and entity declarations "
				  "are not allowed");
	make_tricky_xlsx("<worksheet " MAIN "><sheetData><row><c t=\"s\"><v>99</v></c></row>"
			 "</sheetData></worksheet>",
			 tricky_sst, false);
	ck_assert_int_lt(open_image(&img, "h.xlsx", NULL, &b, &err), 0);
	ck_assert_str_eq(err.msg,
			 "'h.xlsx': book/sheets/first.xml: line 1: cell A1: shared string 99 does "
			 "not exist");
	make_tricky_xlsx("<worksheet " MAIN "><sheetData><row r=\"2000000\"/></sheetData>"
			 "</worksheet>",
			 tricky_sst, false);
	ck_assert_int_lt(open_image(&img, "h.xlsx", NULL, &b, &err), 0);
	ck_assert_msg(strstr(err.msg, "row number beyond 1048576 rows (limit)"), "%s", err.msg);
	make_tricky_xlsx("<worksheet " MAIN "><sheetData><row><c r=\"ZZZZ1\"><v>1</v></c></row>"
			 "</sheetData></worksheet>",
			 tricky_sst, false);
	ck_assert_int_lt(open_image(&img, "h.xlsx", NULL, &b, &err), 0);
	ck_assert_msg(strstr(err.msg, "Invalid cell reference: ZZZZ1"), "%s", err.msg);

	/* A zip bomb as the worksheet, and every truncation of a real package. */
	size_t n = (size_t)48 << 20;
	char *bomb = malloc(n);
	ck_assert_ptr_nonnull(bomb);
	for (size_t i = 0; i + 4 <= n; i += 4)
		memcpy(bomb + i, "<t/>", 4);
	memcpy(bomb, "<worksheet>", 11);
	bomb[n - 1] = '\0';
	make_tricky_xlsx(bomb, tricky_sst, false);
	free(bomb);
	ck_assert_int_lt(open_image(&img, "h.xlsx", NULL, &b, &err), 0);
	ck_assert_msg(strstr(err.msg, "compression ratio above 200 (limit; zip bomb?)"), "%s",
		      err.msg);
	sbx_book *good = sample_book(SBX_FORMAT_XLSX);
	ck_assert_int_eq(sbx_book_save_memory(good, SBX_FORMAT_XLSX, &img, &err), 0);
	sbx_book_free(good);
	size_t full = img.len;
	for (size_t cut = 0; cut < full; cut += full / 41 + 1) {
		img.len = cut;
		if (open_image(&img, "cut.xlsx", NULL, &b, &err) == 0) {
			sbx_book_free(b);
			b = NULL;
			continue;
		}
		ck_assert_msg(strncmp(err.msg, "'cut.xlsx': ", 12) == 0, "%s", err.msg);
	}

	const char *norels[] = {"xl/workbook.xml", "<workbook " MAIN "/>", NULL};
	make_zip(&img, norels, NULL);
	ck_assert_int_lt(open_image(&img, "n.xlsx", NULL, &b, &err), 0);
	ck_assert_str_eq(err.msg, "'n.xlsx': not an XLSX workbook (no xl/_rels/workbook.xml.rels)");
	ck_assert_ptr_null(b);
}
END_TEST

/* ---- CSV ---- */

START_TEST(csv_read_rfc4180)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;
	sbx_cell c;
	const char *csv = "\xef\xbb\xbfName,Value,Note\r\n"
			  "\"Smith, J\",1.5,\"say \"\"hi\"\"\"\r\n"
			  "multi,-2e3,\"line1\nline2\"\n"
			  "x,,12.5%\n"
			  "TRUE,2024-03-01,\"007\"\n"
			  ",,\n"
			  "last,1,";

	sbx_buf_reset(&img);
	sbx_buf_puts(&img, csv);
	ck_assert_int_eq(open_image(&img, "in.csv", NULL, &b, &err), 0);
	const sbx_sheet *s = sbx_book_sheet(b, 0);
	assert_text(s, "A2", SBX_CELL_STRING, "Smith, J");
	assert_number(s, "B2", SBX_CELL_NUMBER, 1.5);
	assert_text(s, "C2", SBX_CELL_STRING, "say \"hi\"");
	assert_number(s, "B3", SBX_CELL_NUMBER, -2000);
	assert_text(s, "C3", SBX_CELL_STRING, "line1\nline2");
	ck_assert_int_eq(cell_at(s, "B4", &c), SBX_CELL_EMPTY);
	assert_number(s, "C4", SBX_CELL_PERCENT, 0.125);
	assert_number(s, "A5", SBX_CELL_BOOL, 1);
	assert_number(s, "B5", SBX_CELL_DATE, 45352);
	assert_text(s, "C5", SBX_CELL_STRING, "007");
	assert_text(s, "A7", SBX_CELL_STRING, "last");
	uint32_t rows, cols;
	sbx_sheet_used_range(s, &rows, &cols);
	ck_assert_uint_eq(rows, 7);
	ck_assert_uint_eq(cols, 3);

	/* Written back: quoting where needed, CRLF, values in full precision. */
	sbx_buf out = SBX_BUF_INIT(1 << 20);
	ck_assert_int_eq(sbx_book_save_memory(b, SBX_FORMAT_CSV, &out, &err), 0);
	ck_assert_str_eq(sbx_buf_str(&out), "Name,Value,Note\r\n"
					    "\"Smith, J\",1.5,\"say \"\"hi\"\"\"\r\n"
					    "multi,-2000,\"line1\nline2\"\r\n"
					    "x,,0.125\r\n"
					    "TRUE,2024-03-01,007\r\n"
					    ",,\r\n"
					    "last,1,\r\n");
	sbx_buf_free(&out);
	sbx_book_free(b);

	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;
	o.csv_all_text = true;
	o.csv_delimiter = ';';
	sbx_buf_reset(&img);
	sbx_buf_puts(&img, "1;2,5\n");
	ck_assert_int_eq(open_image(&img, "in.csv", &o, &b, &err), 0);
	assert_text(sbx_book_sheet(b, 0), "A1", SBX_CELL_STRING, "1");
	assert_text(sbx_book_sheet(b, 0), "B1", SBX_CELL_STRING, "2,5");
	sbx_book_free(b);

	sbx_buf_reset(&img);
	sbx_buf_puts(&img, "a,\"open\nnever closed");
	ck_assert_int_lt(open_image(&img, "bad.csv", NULL, &b, &err), 0);
	ck_assert_str_eq(err.msg, "'bad.csv': line 1: unterminated quoted field");
	o = (sbx_sheet_open_options)SBX_SHEET_OPEN_OPTIONS_INIT;
	o.limits.max_rows = 2;
	sbx_buf_reset(&img);
	sbx_buf_puts(&img, "1\n2\n3\n");
	ck_assert_int_lt(open_image(&img, "big.csv", &o, &b, &err), 0);
	ck_assert_str_eq(err.msg, "'big.csv': more than 2 rows (limit)");
}
END_TEST

START_TEST(csv_write_any_sheet)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = sample_book(SBX_FORMAT_CSV);
	sbx_buf out = SBX_BUF_INIT(1 << 20);

	ck_assert_int_eq(sbx_sheet_write_csv(sbx_book_sheet(b, 1), '\t', &out, &err), 0);
	ck_assert_str_eq(sbx_buf_str(&out), "0.2\t\t\r\n\t\t\r\n\t\t3\r\n");
	sbx_buf_free(&out);
	sbx_book_free(b);
}
END_TEST

static void add_cases(Suite *s)
{
	/* The hostile packages (bombs, 10^6 shared strings) take a second alone and
	 * several on a loaded machine: Check's default 4 s timed out there. */
	SBX_TEST_CASE(s, "xlsx", setup, teardown, 60, xlsx_write_read_round_trip,
		      xlsx_read_libreoffice_saved, xlsx_read_tricky_package,
		      xlsx_number_format_kinds, xlsx_refuses_hostile_parts);

	SBX_TEST_CASE(s, "csv", setup, teardown, 0, csv_read_rfc4180, csv_write_any_sheet);
}

SBX_TEST_MAIN("sheet-xlsx-csv", add_cases)
