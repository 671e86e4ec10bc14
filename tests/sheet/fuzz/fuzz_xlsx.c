/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the XLSX reader, on arbitrary bytes and on a sheet part in a valid package. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/sheet.h"
#include "fuzz_sheet.h"
#include "zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A package with a fixed workbook around the given sheet and shared-strings parts. */
static void open_in_package(const void *sheet, size_t sheet_len, const void *sst, size_t sst_len)
{
	static const char rels[] =
		"<Relationships "
		"xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
		"<Relationship Id=\"r1\" "
		"Type=\"http://schemas.openxmlformats.org/officeDocument/2006/"
		"relationships/worksheet\" Target=\"s.xml\"/>"
		"<Relationship Id=\"r2\" "
		"Type=\"http://schemas.openxmlformats.org/officeDocument/2006/"
		"relationships/sharedStrings\" Target=\"ss.xml\"/></Relationships>";
	static const char wb[] =
		"<workbook xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/"
		"relationships\"><sheets><sheet name=\"S\" r:id=\"r1\"/></sheets></workbook>";
	sbx_buf img = SBX_BUF_INIT((size_t)64 << 20);
	sbx_error err = SBX_ERROR_INIT;
	sheet_zip_writer w;

	sbx_sheet__zipw_init(&w, &img);
	if (sbx_sheet__zipw_add(&w, "xl/workbook.xml", wb, strlen(wb), true, &err) == 0 &&
	    sbx_sheet__zipw_add(&w, "xl/_rels/workbook.xml.rels", rels, strlen(rels), true, &err) ==
		    0 &&
	    sbx_sheet__zipw_add(&w, "xl/ss.xml", sst, sst_len, true, &err) == 0 &&
	    sbx_sheet__zipw_add(&w, "xl/s.xml", sheet, sheet_len, true, &err) == 0 &&
	    sbx_sheet__zipw_finish(&w, &err) == 0)
		fuzz_sheet_round_trip(img.data, img.len, "fuzz.xlsx", SBX_FORMAT_XLSX);
	sbx_sheet__zipw_free(&w);
	sbx_buf_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char ss[] = "<sst><si><t>a</t></si><si><r><t>b</t></r></si></sst>";
	/* A sheet that uses the first shared strings, so a fuzzed sst is read. */
	static const char sheet[] =
		"<worksheet><sheetData><row r=\"1\">"
		"<c r=\"A1\" t=\"s\"><v>0</v></c><c r=\"B1\" t=\"s\"><v>1</v></c>"
		"<c r=\"C1\" t=\"s\"><v>2</v></c></row></sheetData></worksheet>";

	/* Most inputs are not zips: also read them as the sheet part and as the
	 * shared-strings part of a valid package, so the XML layer is reached. */
	fuzz_sheet_round_trip(data, size, "fuzz.xlsx", SBX_FORMAT_XLSX);
	open_in_package(data, size, ss, strlen(ss));
	open_in_package(sheet, strlen(sheet), data, size);
	return 0;
}
