/* SPDX-License-Identifier: MIT */
/* Cell references and values as the spreadsheet tools show them (declared in wbcache.h). */
#include <errno.h>
#include <string.h>

#include "wbcache.h"

int cell_parse(const char *text, uint32_t *row, uint32_t *col, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_range range;
	sbx_ref ref;

	/* "Sheet1!B2" names its sheet too (see ref_sheet); the cell is what counts here. */
	if (strchr(text, '!')) {
		if (sbx_range_parse(text, &range, &err) < 0 || range.first.row != range.last.row ||
		    range.first.col != range.last.col)
			return tool_fail(out, TOOL_E_ARGUMENT, "Invalid cell reference: %s", text),
			       -EINVAL;
		ref = range.first;
	} else if (sbx_ref_parse(text, &ref, &err) < 0) {
		return tool_fail(out, TOOL_E_ARGUMENT, "Invalid cell reference: %s", text), -EINVAL;
	}
	*row = ref.row;
	*col = ref.col;
	return 0;
}

char *cell_name(uint32_t row, uint32_t col, char buf[static 16])
{
	sbx_ref ref = {row, col, false, false};

	return sbx_ref_format(&ref, buf);
}

cJSON *cell_value_json(const sbx_cell *c)
{
	char buf[40];

	switch (c->kind) {
	case SBX_CELL_EMPTY:
		return cJSON_CreateNull();
	case SBX_CELL_STRING:
	case SBX_CELL_ERROR:
		return cJSON_CreateString(c->text ? c->text : "");
	case SBX_CELL_BOOL:
		return cJSON_CreateBool(c->number != 0);
	case SBX_CELL_DATE:
		return cJSON_CreateString(sbx_sheet_format_date(c->number, buf));
	case SBX_CELL_TIME:
		return cJSON_CreateString(sbx_sheet_format_time(c->number, buf));
	case SBX_CELL_NUMBER:
	case SBX_CELL_PERCENT:
	case SBX_CELL_CURRENCY:
		break;
	}
	return cJSON_CreateNumber(c->number);
}

const char *cell_type_name(const sbx_cell *c)
{
	switch (c->kind) {
	case SBX_CELL_EMPTY:
		return "empty";
	case SBX_CELL_NUMBER:
		return "float";
	case SBX_CELL_STRING:
		return "string";
	case SBX_CELL_BOOL:
		return "boolean";
	case SBX_CELL_DATE:
		return "date";
	case SBX_CELL_TIME:
		return "time";
	case SBX_CELL_PERCENT:
		return "percentage";
	case SBX_CELL_CURRENCY:
		return "currency";
	case SBX_CELL_ERROR:
		return "error";
	}
	return "empty";
}

/* Opens file and sheet; on failure out is filled and the handle closed. */
