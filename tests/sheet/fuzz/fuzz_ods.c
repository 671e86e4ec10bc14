/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the ODS reader on arbitrary bytes, and raw content.xml wrapped in a zip. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/sheet.h"
#include "fuzz_sheet.h"
#include "zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sbx_buf img = SBX_BUF_INIT((size_t)64 << 20);
	sheet_zip_writer w;
	sbx_error err = SBX_ERROR_INIT;
	static const char mime[] = "application/vnd.oasis.opendocument.spreadsheet";

	fuzz_sheet_round_trip(data, size, "fuzz.ods", SBX_FORMAT_ODS);
	/* Most inputs are not zips: also feed them as content.xml of a valid package. */
	sbx_sheet__zipw_init(&w, &img);
	if (sbx_sheet__zipw_add(&w, "mimetype", mime, strlen(mime), false, &err) == 0 &&
	    sbx_sheet__zipw_add(&w, "content.xml", data, size, true, &err) == 0 &&
	    sbx_sheet__zipw_finish(&w, &err) == 0)
		fuzz_sheet_round_trip(img.data, img.len, "fuzz-content.ods", SBX_FORMAT_ODS);
	sbx_sheet__zipw_free(&w);
	sbx_buf_free(&img);
	return 0;
}
