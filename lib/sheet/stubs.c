/* SPDX-License-Identifier: MIT */
/* Temporary: entry points not implemented yet. */
#include <errno.h>

#include "sheet-internal.h"

int sbx_sheet__read_xlsx(sbx_book *b, const void *data, size_t len, const char *name,
			 const sbx_sheet_open_options *o, sbx_error *err)
{
	return sbx_error_set(err, -ENOTSUP, "'%s': XLSX not implemented yet", name);
}
int sbx_sheet__write_xlsx(sbx_book *b, sbx_buf *out, sbx_error *err)
{
	return sbx_error_set(err, -ENOTSUP, "XLSX writing not implemented yet");
}
