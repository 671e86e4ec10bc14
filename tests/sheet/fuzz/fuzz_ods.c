/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the ODS reader on arbitrary bytes, and raw content.xml wrapped in a zip. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/sheet.h"
#include "zip.h"

static void open_and_touch(const void *data, size_t len, const char *name)
{
	sbx_sheet_open_options o = SBX_SHEET_OPEN_OPTIONS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;

	/* Small limits keep each run fast and memory bounded. */
	o.format = SBX_FORMAT_ODS;
	o.limits.max_cells = 100000;
	o.limits.max_unpacked = 64 << 20;
	o.limits.max_string = 1 << 16;
	if (sbx_book_open_memory(data, len, name, &o, &b, &err) == 0) {
		sbx_buf out = SBX_BUF_INIT((size_t)256 << 20);
		/* Whatever was read must write and read back. */
		if (sbx_book_save_memory(b, SBX_FORMAT_ODS, &out, &err) == 0) {
			sbx_book *back = NULL;
			if (sbx_book_open_memory(out.data, out.len, "again.ods", &o, &back, &err) <
			    0)
				abort();
			sbx_book_free(back);
		}
		sbx_buf_free(&out);
		sbx_book_free(b);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sbx_buf img = SBX_BUF_INIT((size_t)64 << 20);
	sheet_zip_writer w;
	sbx_error err = SBX_ERROR_INIT;
	static const char mime[] = "application/vnd.oasis.opendocument.spreadsheet";

	open_and_touch(data, size, "fuzz.ods");
	/* Most inputs are not zips: also feed them as content.xml of a valid package. */
	sbx_sheet__zipw_init(&w, &img);
	if (sbx_sheet__zipw_add(&w, "mimetype", mime, strlen(mime), false, &err) == 0 &&
	    sbx_sheet__zipw_add(&w, "content.xml", data, size, true, &err) == 0 &&
	    sbx_sheet__zipw_finish(&w, &err) == 0)
		open_and_touch(img.data, img.len, "fuzz-content.ods");
	sbx_sheet__zipw_free(&w);
	sbx_buf_free(&img);
	return 0;
}
