/* SPDX-License-Identifier: MIT */
/*
 * sandbox-demo-agent: a scripted agent that solves the bundled tasks through
 * MCP Streamable HTTP, the way a model-driven agent would, with no shortcuts.
 * banking_reserve:
 *
 *   initialize → notifications/initialized → tools/list → list_files →
 *   get_sheet_info → read_range → compute the reserves → write_range →
 *   complete_task
 *
 * The reserve of a period is round(cash_flow * rate, 2); the rate is the
 * period's Rate_Point when known, else the linear interpolation between the
 * nearest known periods before and after (flat beyond the first or last).
 * sales_revenue: Revenue = round(Quantity * Unit_Price, 2) the same way;
 * quarterly_totals: SUM formulas with set_formula, then recalculate (which
 * needs LibreOffice: the full image). The task is recognised by its file.
 *
 * Reads SANDBOX_MCP_URL (as `sandboxctl run --agent demo` sets it), or takes
 * the URL as its argument. Logs each step on stderr. Exit 0 when the task was
 * completed, 1 otherwise.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mcp_client.h"
#include "say.h"

#define MAX_ROWS 100000
#define SHEET	 "Sheet1"

typedef mcp_client agent;

const char *const agent_name = "demo-agent";

/* tools/call; the tool's structured result, or NULL (logged). */
static cJSON *call_tool(agent *a, const char *name, cJSON *args)
{
	cJSON *out = mcp_client_call_structured(a, name, args);

	if (!out)
		say("%s", a->error);
	return out;
}

static cJSON *sheet_args(const char *file, const char *sheet)
{
	cJSON *a = cJSON_CreateObject();

	cJSON_AddStringToObject(a, "file_path", file);
	cJSON_AddStringToObject(a, "sheet_name", sheet);
	return a;
}

/* The sheet's row count (header included), or -1. */
static int row_count(agent *a, const char *file, const char *sheet)
{
	cJSON *res = call_tool(a, "get_sheet_info", sheet_args(file, sheet));
	int rows = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(res, "row_count"));

	cJSON_Delete(res);
	if (rows < 2 || rows > MAX_ROWS) {
		say("%s: unexpected row count %d", sheet, rows);
		return -1;
	}
	say("%s has %d rows", sheet, rows);
	return rows;
}

/* read_range's values (a copy the caller frees), or NULL. */
static cJSON *read_values(agent *a, const char *file, const char *sheet, const char *from,
			  const char *to)
{
	cJSON *args = sheet_args(file, sheet), *res, *values;

	cJSON_AddStringToObject(args, "start_cell", from);
	cJSON_AddStringToObject(args, "end_cell", to);
	res = call_tool(a, "read_range", args);
	values = cJSON_DetachItemFromObjectCaseSensitive(res, "values");
	cJSON_Delete(res);
	if (!cJSON_IsArray(values)) {
		say("read_range %s:%s gave no values", from, to);
		cJSON_Delete(values);
		return NULL;
	}
	return values;
}

/* write_range of a column: header, then one number per row. */
static bool write_column(agent *a, const char *file, const char *sheet, const char *cell,
			 const char *header, const double *v, int n)
{
	cJSON *args = sheet_args(file, sheet), *vals = cJSON_CreateArray(), *row, *res;

	row = cJSON_CreateArray();
	cJSON_AddItemToArray(row, cJSON_CreateString(header));
	cJSON_AddItemToArray(vals, row);
	for (int i = 0; i < n; i++) {
		row = cJSON_CreateArray();
		cJSON_AddItemToArray(row, cJSON_CreateNumber(v[i]));
		cJSON_AddItemToArray(vals, row);
	}
	cJSON_AddStringToObject(args, "start_cell", cell);
	cJSON_AddItemToObject(args, "values", vals);
	res = call_tool(a, "write_range", args);
	cJSON_Delete(res);
	if (res)
		say("wrote %s and %d values from %s", header, n, cell);
	return res != NULL;
}

/* A cell value as a number; false when empty or not numeric. */
static bool number_of(const cJSON *v, double *out)
{
	char *end;

	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return true;
	}
	if (cJSON_IsString(v) && v->valuestring[0]) {
		*out = strtod(v->valuestring, &end);
		return *end == '\0';
	}
	return false;
}

/* SHEET's data rows (from row 2), columns A to last_col; *n of them. NULL on failure. */
static cJSON *read_rows(agent *a, const char *file, char last_col, int *n)
{
	int rows = row_count(a, file, SHEET);
	char end_cell[32];
	cJSON *values;

	if (rows < 0)
		return NULL;
	snprintf(end_cell, sizeof(end_cell), "%c%d", last_col, rows);
	values = read_values(a, file, SHEET, "A2", end_cell);
	if (values)
		*n = cJSON_GetArraySize(values);
	return values;
}

static double round2(double v)
{
	return round(v * 100.0) / 100.0;
}

/* banking_reserve: Required_Reserve = round(cash flow * interpolated rate, 2). */
static int solve_banking(agent *a, const char *file)
{
	cJSON *values = NULL;
	double *period = NULL, *cf = NULL, *rate = NULL, *reserve = NULL;
	bool *known = NULL;
	int n, rc = 1;

	values = read_rows(a, file, 'C', &n);
	if (!values)
		return 1;
	period = calloc((size_t)n + 1, sizeof(double));
	cf = calloc((size_t)n + 1, sizeof(double));
	rate = calloc((size_t)n + 1, sizeof(double));
	reserve = calloc((size_t)n + 1, sizeof(double));
	known = calloc((size_t)n + 1, sizeof(bool));
	if (!period || !cf || !rate || !reserve || !known)
		goto done;
	for (int i = 0; i < n; i++) {
		const cJSON *row = cJSON_GetArrayItem(values, i);

		if (!number_of(cJSON_GetArrayItem(row, 0), &period[i]))
			period[i] = i + 1;
		if (!number_of(cJSON_GetArrayItem(row, 1), &cf[i]))
			cf[i] = 0;
		known[i] = number_of(cJSON_GetArrayItem(row, 2), &rate[i]);
	}
	/* Interpolate the unknown rates between the nearest known periods. */
	for (int i = 0; i < n; i++) {
		int lo = i, hi = i;

		if (!known[i]) {
			while (lo >= 0 && !known[lo])
				lo--;
			while (hi < n && !known[hi])
				hi++;
			if (lo < 0 && hi >= n)
				rate[i] = 0;
			else if (lo < 0)
				rate[i] = rate[hi];
			else if (hi >= n)
				rate[i] = rate[lo];
			else
				rate[i] = rate[lo] + (rate[hi] - rate[lo]) *
							     (period[i] - period[lo]) /
							     (period[hi] - period[lo]);
		}
		reserve[i] = round2(cf[i] * rate[i]);
	}
	if (write_column(a, file, SHEET, "D1", "Required_Reserve", reserve, n))
		rc = 0;
done:
	free(period);
	free(cf);
	free(rate);
	free(reserve);
	free(known);
	cJSON_Delete(values);
	return rc;
}

/* sales_revenue: Revenue = round(Quantity * Unit_Price, 2). */
static int solve_sales(agent *a, const char *file)
{
	cJSON *values;
	double *revenue;
	int n, rc = 1;

	values = read_rows(a, file, 'D', &n);
	if (!values)
		return 1;
	revenue = calloc((size_t)n + 1, sizeof(double));
	if (revenue) {
		for (int i = 0; i < n; i++) {
			const cJSON *row = cJSON_GetArrayItem(values, i);
			double q = 0, p = 0;

			number_of(cJSON_GetArrayItem(row, 2), &q);
			number_of(cJSON_GetArrayItem(row, 3), &p);
			revenue[i] = round2(q * p);
		}
		if (write_column(a, file, SHEET, "E1", "Revenue", revenue, n))
			rc = 0;
	}
	free(revenue);
	cJSON_Delete(values);
	return rc;
}

static bool set_formula(agent *a, const char *file, const char *sheet, const char *cell,
			const char *formula)
{
	cJSON *args = sheet_args(file, sheet), *res;

	cJSON_AddStringToObject(args, "cell_reference", cell);
	cJSON_AddStringToObject(args, "formula", formula);
	res = call_tool(a, "set_formula", args);
	cJSON_Delete(res);
	return res != NULL;
}

/* quarterly_totals: live SUM formulas for the row and column totals, then recalculate. */
static int solve_quarterly(agent *a, const char *file)
{
	static const char *const sheet = "Sales";
	char cell[16], formula[64];
	cJSON *args, *res;

	args = sheet_args(file, sheet);
	cJSON_AddStringToObject(args, "cell_reference", "F1");
	cJSON_AddStringToObject(args, "value", "Total");
	res = call_tool(a, "write_cell", args);
	if (!res)
		return 1;
	cJSON_Delete(res);
	for (int r = 2; r <= 9; r++) {
		snprintf(cell, sizeof(cell), "F%d", r);
		snprintf(formula, sizeof(formula), "=SUM(B%d:E%d)", r, r);
		if (!set_formula(a, file, sheet, cell, formula))
			return 1;
	}
	for (char c = 'B'; c <= 'F'; c++) {
		snprintf(cell, sizeof(cell), "%c10", c);
		snprintf(formula, sizeof(formula), "=SUM(%c2:%c9)", c, c);
		if (!set_formula(a, file, sheet, cell, formula))
			return 1;
	}
	say("wrote 13 SUM formulas");
	/* The values beside the formulas come from LibreOffice; a busy one may need another try. */
	for (int attempt = 0;; attempt++) {
		args = cJSON_CreateObject();
		cJSON_AddStringToObject(args, "file_path", file);
		res = call_tool(a, "recalculate", args);
		if (res)
			break;
		if (attempt == 2)
			return 1;
		sleep(1);
	}
	say("recalculated");
	cJSON_Delete(res);
	return 0;
}

static const struct solver {
	const char *file;
	int (*solve)(agent *a, const char *file);
} solvers[] = {
	{"cash_flows.ods", solve_banking},
	{"sales_data.ods", solve_sales},
	{"quarterly_sales.ods", solve_quarterly},
};

/* Looks at the workspace, solves the task it recognises, completes it. */
static int solve(agent *a)
{
	cJSON *res, *files = NULL, *args;
	const cJSON *f, *list;
	int rc = 1;

	list = mcp_client_rpc(a, "tools/list", NULL, &files);
	if (!list)
		return 1;
	say("server offers %d tools", cJSON_GetArraySize(cJSON_GetObjectItem(list, "tools")));
	cJSON_Delete(files);

	files = call_tool(a, "list_files", NULL);
	cJSON_ArrayForEach (f, cJSON_GetObjectItemCaseSensitive(files, "files")) {
		const char *name = cJSON_IsString(f)
					   ? f->valuestring
					   : cJSON_GetStringValue(cJSON_GetObjectItem(f, "path"));
		size_t nl = name ? strlen(name) : 0;

		for (size_t i = 0; rc && i < sizeof(solvers) / sizeof(solvers[0]); i++) {
			size_t sl = strlen(solvers[i].file);

			if (nl >= sl && strcmp(name + nl - sl, solvers[i].file) == 0) {
				say("found %s", name);
				rc = solvers[i].solve(a, name);
			}
		}
		if (!rc)
			break;
	}
	cJSON_Delete(files);
	if (rc) {
		say("no task I know how to solve");
		return rc;
	}
	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "summary", "done by sandbox-demo-agent");
	res = call_tool(a, "complete_task", args);
	if (!res)
		return 1;
	cJSON_Delete(res);
	say("task completed");
	return 0;
}

int main(int argc, char **argv)
{
	const char *url = argc > 1 ? argv[1] : getenv("SANDBOX_MCP_URL");
	agent a;
	int rc = 1;

	if (!url || !*url || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "Usage: sandbox-demo-agent [MCP_URL]\n"
				"Solves the bundled tasks through MCP Streamable HTTP; the URL "
				"defaults to $SANDBOX_MCP_URL.\n");
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (mcp_client_open(&a, url, "sandbox-demo-agent", "1.0") == 0) {
		say("connected (protocol %s)", a.version);
		rc = solve(&a);
	} else {
		say("%s", a.error);
	}
	mcp_client_close(&a);
	curl_global_cleanup();
	return rc;
}
