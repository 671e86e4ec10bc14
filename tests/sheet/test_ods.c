/* SPDX-License-Identifier: MIT */
/* ODS reading and writing, LibreOffice-saved and odfpy-written files, hostile files. */
#include "check_main.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "image_fixture.h"

START_TEST(write_read_round_trip)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = sample_book(SBX_FORMAT_ODS), *back;

	ck_assert_int_eq(sbx_book_save_memory(b, SBX_FORMAT_ODS, &img, &err), 0);
	/* mimetype first, stored, no extra field: the ODF magic at fixed offsets. */
	ck_assert_mem_eq(img.data, "PK\003\004", 4);
	ck_assert_int_eq(img.data[8], 0);			 /* method: stored */
	ck_assert_int_eq(img.data[28] | (img.data[29] << 8), 0); /* no extra field */
	ck_assert_mem_eq(img.data + 30, "mimetypeapplication/vnd.oasis.opendocument.spreadsheet",
			 54);
	ck_assert_int_eq(sbx_sheet_detect_format("x", img.data, img.len), SBX_FORMAT_ODS);
	ck_assert_int_eq(open_image(&img, "rt.ods", NULL, &back, &err), 0);
	ck_assert_int_eq(sbx_book_format(back), SBX_FORMAT_ODS);
	ck_assert_uint_eq(sbx_book_sheet_count(back), 2);
	ck_assert_str_eq(sbx_sheet_name(sbx_book_sheet(back, 1)), "It's 2nd");
	check_sample_values(back, true);
	sbx_book_free(back);
	sbx_book_free(b);
}
END_TEST

START_TEST(save_is_atomic_and_reopens)
{
	sbx_error err = SBX_ERROR_INIT;
	char dir[] = "/tmp/sbx-sheet-test-XXXXXX", path[256];
	sbx_book *b = sample_book(SBX_FORMAT_AUTO), *back;
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.ods", dir);
	ck_assert_int_eq(sbx_book_save(b, path, SBX_FORMAT_AUTO, &err), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(sbx_book_open(path, NULL, &back, &err), 0);
	check_sample_values(back, true);
	/* Edit and save over the same file. */
	ck_assert_int_eq(sbx_sheet_set_number(sbx_book_sheet(back, 0), 0, 9, 99, &err), 0);
	ck_assert_int_eq(sbx_book_save(back, path, SBX_FORMAT_AUTO, &err), 0);
	sbx_book_free(back);
	ck_assert_int_eq(sbx_book_open(path, NULL, &back, &err), 0);
	assert_number(sbx_book_sheet(back, 0), "J1", SBX_CELL_NUMBER, 99);
	sbx_book_free(back);
	sbx_book_free(b);
	/* Only the file itself is left: no temp files. */
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_int_eq(sbx_book_open(path, NULL, &back, &err), -ENOENT);
}
END_TEST

START_TEST(read_libreoffice_saved)
{
	check_lo_saved("lo-saved.ods");
}
END_TEST

START_TEST(read_odfpy_reference_files)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;
	const sbx_sheet *s;
	sbx_cell c;

	ck_assert_int_eq(sbx_book_open(data_path("reference/banking_reserve-expected_reserves.ods"),
				       NULL, &b, &err),
			 0);
	s = sbx_book_sheet(b, 0);
	ck_assert_str_eq(sbx_sheet_name(s), "Sheet1");
	ck_assert_uint_eq(sbx_sheet_cell_count(s), 315);
	assert_text(s, "D1", SBX_CELL_STRING, "Required_Reserve");
	assert_number(s, "A2", SBX_CELL_NUMBER, 1);
	assert_number(s, "B2", SBX_CELL_NUMBER, 257624.09);
	assert_number(s, "C2", SBX_CELL_NUMBER, 0.1031);
	assert_number(s, "D2", SBX_CELL_NUMBER, 26561.04);
	assert_number(s, "B3", SBX_CELL_NUMBER, 23002.63);
	ck_assert_int_eq(cell_at(s, "C3", &c), SBX_CELL_EMPTY);
	assert_number(s, "D3", SBX_CELL_NUMBER, 2167.61);
	sbx_book_free(b);

	ck_assert_int_eq(sbx_book_open(data_path("reference/banking_reserve-cash_flows.ods"), NULL,
				       &b, &err),
			 0);
	s = sbx_book_sheet(b, 0);
	uint32_t rows, cols;
	sbx_sheet_used_range(s, &rows, &cols);
	ck_assert_uint_eq(rows, 101);
	ck_assert_uint_eq(cols, 3);
	sbx_book_free(b);

	ck_assert_int_eq(sbx_book_open(data_path("reference/sales_revenue-expected_revenue.ods"),
				       NULL, &b, &err),
			 0);
	s = sbx_book_sheet(b, 0);
	sbx_sheet_used_range(s, &rows, &cols);
	ck_assert_uint_eq(rows, 51);
	ck_assert_uint_eq(cols, 5);
	assert_text(s, "E1", SBX_CELL_STRING, "Revenue");
	sbx_book_free(b);
	ck_assert_int_eq(
		sbx_book_open(data_path("reference/sales_revenue-sales_data.ods"), NULL, &b, &err),
		0);
	sbx_book_free(b);
}
END_TEST

START_TEST(huge_empty_trailing_repeats_cost_nothing)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;
	const char *x = CONTENT_HEAD
		"<table:table table:name=\"T\">"
		"<table:table-column table:number-columns-repeated=\"16384\"/>"
		"<table:table-row><table:table-cell office:value-type=\"float\" "
		"office:value=\"1\"/>"
		"<table:table-cell table:number-columns-repeated=\"16383\"/></table:table-row>"
		"<table:table-row table:number-rows-repeated=\"1048575\">"
		"<table:table-cell table:number-columns-repeated=\"16384\"/></table:table-row>"
		"</table:table>" CONTENT_TAIL;

	make_ods(&img, x, 0);
	ck_assert_int_eq(open_image(&img, "big.ods", NULL, &b, &err), 0);
	uint32_t rows, cols;
	sbx_sheet_used_range(sbx_book_sheet(b, 0), &rows, &cols);
	ck_assert_uint_eq(rows, 1);
	ck_assert_uint_eq(cols, 1);
	sbx_book_free(b);
	/* Lower row/column limits bind content, not empty repeats. */
	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;
	o.limits.max_rows = 10;
	o.limits.max_cols = 10;
	ck_assert_int_eq(open_image(&img, "big.ods", &o, &b, &err), 0);
	sbx_book_free(b);
	o.limits.max_rows = 1;
	ck_assert_int_eq(open_image(&img, "big.ods", &o, &b, &err), 0);
	sbx_book_free(b);
	make_ods(&img,
		 CONTENT_HEAD "<table:table table:name=\"T\">"
			      "<table:table-row table:number-rows-repeated=\"5\">"
			      "<table:table-cell office:value-type=\"float\" office:value=\"1\"/>"
			      "</table:table-row></table:table>" CONTENT_TAIL,
		 0);
	o.limits.max_rows = 4;
	ck_assert_int_lt(open_image(&img, "big.ods", &o, &b, &err), 0);
	ck_assert_msg(strstr(err.msg, "more than 4 rows (limit)"), "%s", err.msg);
}
END_TEST

START_TEST(repeated_content_rows_expand)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b;
	const char *x = CONTENT_HEAD
		"<table:table table:name=\"T\">"
		"<table:table-row table:number-rows-repeated=\"3\">"
		"<table:table-cell table:number-columns-repeated=\"2\" "
		"office:value-type=\"string\">"
		"<text:p>a<text:s/>b<text:s text:c=\"2\"/>c<text:tab/>d<text:line-break/>e"
		"<text:span>f</text:span></text:p></table:table-cell>"
		"<table:covered-table-cell/>"
		"<table:table-cell office:value-type=\"boolean\" office:boolean-value=\"false\"/>"
		"</table:table-row>"
		"</table:table>"
		"<table:table table:name=\"Empty\"/>"
		"<table:table table:name=\"a:b/c\"/><table:table table:name=\"EMPTY\"/>"
		"<table:table table:name=\"\"/>" CONTENT_TAIL;

	make_ods(&img, x, 0);
	ck_assert_int_eq(open_image(&img, "rep.ods", NULL, &b, &err), 0);
	const sbx_sheet *s = sbx_book_sheet(b, 0);
	ck_assert_uint_eq(sbx_sheet_cell_count(s), 9);
	assert_text(s, "B3", SBX_CELL_STRING, "a b  c\td\nef");
	assert_number(s, "D3", SBX_CELL_BOOL, 0);
	ck_assert_uint_eq(sbx_book_sheet_count(b), 5);
	ck_assert_uint_eq(sbx_sheet_cell_count(sbx_book_sheet(b, 1)), 0);
	/* Names other writers allow are kept; duplicates and blanks are made usable. */
	ck_assert_str_eq(sbx_sheet_name(sbx_book_sheet(b, 2)), "a:b/c");
	ck_assert_str_eq(sbx_sheet_name(sbx_book_sheet(b, 3)), "EMPTY (2)");
	ck_assert_str_eq(sbx_sheet_name(sbx_book_sheet(b, 4)), "Sheet5");
	sbx_book_free(b);
}
END_TEST

/* ---- hostile files ---- */

static void expect_error(const char *content, size_t len, const sbx_sheet_open_options *o,
			 const char *needle)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;

	make_ods(&img, content, len);
	ck_assert_int_lt(open_image(&img, "x.ods", o, &b, &err), 0);
	ck_assert_ptr_null(b);
	ck_assert_msg(strstr(err.msg, needle), "error '%s' lacks '%s'", err.msg, needle);
	ck_assert_msg(strncmp(err.msg, "'x.ods': ", 9) == 0, "error '%s' lacks the file", err.msg);
}

START_TEST(refuses_billion_laughs)
{
	const char *x = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
			"<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">"
			"<!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">"
			"<!ENTITY lol9 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">]>"
			"<office:document-content>&lol9;</office:document-content>";
	expect_error(x, 0, NULL, "content.xml: DOCTYPE and entity declarations are not allowed");
}
END_TEST

START_TEST(refuses_external_entities)
{
	const char *x = "<?xml version=\"1.0\"?><!-- hi -->\n"
			"<!DOCTYPE r [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>"
			"<office:document-content>&xxe;</office:document-content>";
	expect_error(x, 0, NULL, "DOCTYPE");
	/* An undeclared entity without a DOCTYPE is plain malformed XML. */
	expect_error(CONTENT_HEAD "<table:table table:name=\"a\">&xxe;</table:table>" CONTENT_TAIL,
		     0, NULL, "content.xml: line");
}
END_TEST

START_TEST(refuses_zip_bomb)
{
	size_t n = (size_t)64 << 20;
	char *x = malloc(n);
	const char *head = CONTENT_HEAD;

	/* Many tiny elements: libxml2's own text-node cap must not be what stops it. */
	ck_assert_ptr_nonnull(x);
	for (size_t i = 0; i + 4 <= n; i += 4)
		memcpy(x + i, "<t/>", 4);
	memcpy(x, head, strlen(head));
	expect_error(x, n, NULL, "compression ratio above 200 (limit; zip bomb?)");
	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;
	o.limits.max_unpacked = 1 << 20;
	expect_error(x, n, &o, "more than 1048576 bytes unpacked (limit)");
	free(x);
}
END_TEST

START_TEST(refuses_billion_rows)
{
	expect_error(CONTENT_HEAD
		     "<table:table table:name=\"T\">"
		     "<table:table-row table:number-rows-repeated=\"1000000000\">"
		     "<table:table-cell/></table:table-row></table:table>" CONTENT_TAIL,
		     0, NULL, "sheet 'T': more than 1048576 rows (limit)");
	expect_error(CONTENT_HEAD "<table:table table:name=\"T\"><table:table-row>"
				  "<table:table-cell table:number-columns-repeated=\"99999\"/>"
				  "</table:table-row></table:table>" CONTENT_TAIL,
		     0, NULL, "more than 16384 columns (limit)");
	expect_error(CONTENT_HEAD "<table:table table:name=\"T\">"
				  "<table:table-row table:number-rows-repeated=\"-5\">"
				  "</table:table-row></table:table>" CONTENT_TAIL,
		     0, NULL, "invalid row repeat '-5'");
}
END_TEST

START_TEST(refuses_too_many_cells)
{
	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;

	o.limits.max_cells = 1000;
	expect_error(CONTENT_HEAD "<table:table table:name=\"T\">"
				  "<table:table-row table:number-rows-repeated=\"1000\">"
				  "<table:table-cell table:number-columns-repeated=\"1000\" "
				  "office:value-type=\"float\" office:value=\"1\"/>"
				  "</table:table-row></table:table>" CONTENT_TAIL,
		     0, &o, "content.xml: line 2: more than 1000 cells (limit)");
	/* The default limit holds against a 16384 x 1048576 sheet of ones. */
	expect_error(CONTENT_HEAD "<table:table table:name=\"T\">"
				  "<table:table-row table:number-rows-repeated=\"1048576\">"
				  "<table:table-cell table:number-columns-repeated=\"16384\" "
				  "office:value-type=\"float\" office:value=\"1\"/>"
				  "</table:table-row></table:table>" CONTENT_TAIL,
		     0, NULL, "more than 10000000 cells (limit)");
}
END_TEST

START_TEST(refuses_deep_nesting_and_long_text)
{
	sbx_buf x = SBX_BUF_INIT((size_t)16 << 20);
	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;

	sbx_buf_puts(&x, CONTENT_HEAD "<table:table table:name=\"T\"><table:table-row>"
				      "<table:table-cell><text:p>");
	for (int i = 0; i < 300; i++)
		sbx_buf_puts(&x, "<text:span>");
	expect_error(x.data, x.len, NULL, "nested deeper than 128 (limit)");
	sbx_buf_reset(&x);
	sbx_buf_puts(&x, CONTENT_HEAD "<table:table table:name=\"T\"><table:table-row>"
				      "<table:table-cell office:value-type=\"string\"><text:p>");
	for (int i = 0; i < 2000; i++)
		sbx_buf_puts(&x, "0123456789");
	sbx_buf_puts(&x,
		     "</text:p></table:table-cell></table:table-row></table:table>" CONTENT_TAIL);
	o.limits.max_string = 10000;
	expect_error(x.data, x.len, &o, "text longer than 10000 bytes (limit)");
	sbx_buf_free(&x);
}
END_TEST

/*
 * One compressed entry holding payload, built up in 4 KiB pieces and handed
 * to the writer in 1 MiB chunks: by sbx_sheet__zipw_flush (threaded, the
 * way the ODS and XLSX writers save a big part) or by sbx_sheet__zipw_write
 * at the same boundaries (on this thread).
 */
static int zip_payload(const sbx_buf *payload, bool threaded, size_t out_max, sbx_buf *out,
		       sbx_error *err)
{
	sheet_zip_writer w;
	sbx_buf chunk = SBX_BUF_INIT((size_t)8 << 20);
	int r;

	sbx_buf_init(out, out_max);
	sbx_sheet__zipw_init(&w, out);
	r = sbx_sheet__zipw_begin(&w, "content.xml", true, err);
	for (size_t off = 0; r == 0 && off < payload->len; off += 4096) {
		size_t n = payload->len - off < 4096 ? payload->len - off : 4096;
		r = sbx_buf_append(&chunk, payload->data + off, n);
		if (r == 0 && threaded) {
			r = sbx_sheet__zipw_flush(&w, &chunk, SHEET_ZIP_FLUSH_AT, err);
		} else if (r == 0 && chunk.len >= SHEET_ZIP_FLUSH_AT) {
			r = sbx_sheet__zipw_write(&w, chunk.data, chunk.len, err);
			sbx_buf_reset(&chunk);
		}
	}
	if (r == 0)
		r = sbx_sheet__zipw_flush(&w, &chunk, 0, err);
	if (r == 0)
		r = sbx_sheet__zipw_end(&w, err);
	if (r == 0)
		r = sbx_sheet__zipw_finish(&w, err);
	sbx_sheet__zipw_free(&w);
	sbx_buf_free(&chunk);
	return r;
}

START_TEST(big_part_deflates_on_a_thread_to_the_same_bytes)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf payload = SBX_BUF_INIT((size_t)16 << 20), threaded, alone,
		back = SBX_BUF_INIT((size_t)16 << 20);
	sbx_sheet_limits lim;
	uint32_t x = 1;

	/* 6 MiB of rows with varied numbers, so deflate has real work on every chunk. */
	while (payload.len < ((size_t)6 << 20)) {
		x = x * 1103515245u + 12345u;
		ck_assert_int_eq(sbx_buf_printf(&payload, "<row n=\"%u\">%u.%u</row>", x >> 20,
						x % 977, x % 13),
				 0);
	}
	ck_assert_int_eq(zip_payload(&payload, true, SIZE_MAX / 2, &threaded, &err), 0);
	ck_assert_int_eq(zip_payload(&payload, false, SIZE_MAX / 2, &alone, &err), 0);
	ck_assert_uint_eq(threaded.len, alone.len);
	ck_assert_mem_eq(threaded.data, alone.data, alone.len);

	/* And it is the payload: libarchive checks the entry's crc32 as it inflates. */
	sbx_sheet_limits_default(&lim);
	sheet_zip_budget budget = {.lim = &lim, .file = "t.zip", .packed = threaded.len};
	int r = sbx_sheet__zip_slurp(threaded.data, threaded.len, &budget, "content.xml",
				     (size_t)16 << 20, &back, &err);
	ck_assert_msg(r == 0, "%s", err.msg);
	ck_assert_uint_eq(back.len, payload.len);
	ck_assert_mem_eq(back.data, payload.data, payload.len);

	/* The thread's failure (its output over the cap) ends the entry with one line. */
	sbx_buf_free(&threaded);
	ck_assert_int_lt(zip_payload(&payload, true, (size_t)512 << 10, &threaded, &err), 0);
	ck_assert_str_eq(err.msg, "zip entry 'content.xml': output too large");
	sbx_buf_free(&threaded);
	sbx_buf_free(&alone);
	sbx_buf_free(&back);
	sbx_buf_free(&payload);
}
END_TEST

START_TEST(refuses_broken_packages)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = sample_book(SBX_FORMAT_ODS), *back = NULL;

	ck_assert_int_eq(sbx_book_save_memory(b, SBX_FORMAT_ODS, &img, &err), 0);
	sbx_book_free(b);
	/* Every truncation is an error, never a crash. */
	size_t full = img.len;
	for (size_t cut = 0; cut < full; cut += full / 37 + 1) {
		img.len = cut;
		int r = open_image(&img, "cut.ods", NULL, &back, &err);
		if (r == 0) {
			sbx_book_free(back);
			back = NULL;
			continue;
		}
		ck_assert_msg(strncmp(err.msg, "'cut.ods': ", 11) == 0, "%s", err.msg);
	}
	img.len = full / 2;
	ck_assert_int_lt(open_image(&img, "cut.ods", NULL, &back, &err), 0);

	const char *nomime[] = {"content.xml", CONTENT_HEAD CONTENT_TAIL, NULL};
	make_zip(&img, nomime, NULL);
	ck_assert_int_lt(open_image(&img, "x.ods", NULL, &back, &err), 0);
	ck_assert_str_eq(err.msg, "'x.ods': not an ODS spreadsheet (mimetype missing)");

	sbx_buf_reset(&img);
	sbx_buf_puts(&img, "PK\003\004 this is not really a zip at all");
	ck_assert_int_lt(open_image(&img, "x.ods", NULL, &back, &err), 0);
	ck_assert_msg(strncmp(err.msg, "'x.ods': ", 9) == 0, "%s", err.msg);

	/* Entry and sheet counts are capped too. */
	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;
	const char *many[] = {"mimetype",    "application/vnd.oasis.opendocument.spreadsheet",
			      "a",	     "1",
			      "b",	     "2",
			      "c",	     "3",
			      "content.xml", CONTENT_HEAD CONTENT_TAIL,
			      NULL};
	make_zip(&img, many, NULL);
	o.limits.max_entries = 3;
	ck_assert_int_lt(open_image(&img, "x.ods", &o, &back, &err), 0);
	ck_assert_str_eq(err.msg, "'x.ods': more than 3 zip entries (limit)");
	o.limits.max_entries = 0;
	o.limits.max_sheets = 2;
	expect_error(CONTENT_HEAD "<table:table table:name=\"a\"/><table:table table:name=\"b\"/>"
				  "<table:table table:name=\"c\"/>" CONTENT_TAIL,
		     0, &o, "more than 2 sheets (limit)");

	expect_error("<office:document-content", 0, NULL, "content.xml: line");
	expect_error(CONTENT_HEAD CONTENT_TAIL, 0, NULL, "no sheets");
	expect_error("\xff\xfe<\0x\0", 6, NULL, "only UTF-8 XML is accepted");
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "ods", setup, teardown, 60, write_read_round_trip,
		      save_is_atomic_and_reopens, read_libreoffice_saved,
		      read_odfpy_reference_files, huge_empty_trailing_repeats_cost_nothing,
		      repeated_content_rows_expand,
		      big_part_deflates_on_a_thread_to_the_same_bytes);

	SBX_TEST_CASE(s, "hostile", setup, teardown, 60, refuses_billion_laughs,
		      refuses_external_entities, refuses_zip_bomb, refuses_billion_rows,
		      refuses_too_many_cells, refuses_deep_nesting_and_long_text,
		      refuses_broken_packages);
}

SBX_TEST_MAIN("sheet-ods", add_cases)
