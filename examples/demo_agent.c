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
#include <curl/curl.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_BODY (64L * 1024 * 1024)
#define MAX_ROWS 100000
#define SHEET	 "Sheet1"

typedef struct agent {
	CURL *curl;
	const char *url;
	char session[256];
	char version[32];
	int next_id;
} agent;

typedef struct body {
	char *data;
	size_t len;
	bool sse;
	char session[256];
} body;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("demo-agent: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	body *b = ud;
	size_t add = size * n;
	char *d;

	if (b->len + add > MAX_BODY)
		return 0;
	d = realloc(b->data, b->len + add + 1);
	if (!d)
		return 0;
	memcpy(d + b->len, p, add);
	b->data = d;
	b->len += add;
	b->data[b->len] = '\0';
	return add;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	body *b = ud;
	size_t len = size * n;

	if (len > 13 && strncasecmp(p, "Content-Type:", 13) == 0)
		b->sse = strstr(p, "text/event-stream") != NULL;
	if (len > 15 && strncasecmp(p, "Mcp-Session-Id:", 15) == 0) {
		const char *v = p + 15;
		size_t vl;

		while (*v == ' ')
			v++;
		vl = strcspn(v, "\r\n");
		if (vl < sizeof(b->session)) {
			memcpy(b->session, v, vl);
			b->session[vl] = '\0';
		}
	}
	return len;
}

/* Finds the JSON-RPC response with this id in a JSON or SSE body. */
static cJSON *pick_response(const body *b, int id)
{
	if (!b->sse)
		return cJSON_ParseWithLength(b->data, b->len);
	for (char *line = b->data; line && *line;) {
		char *next = strchr(line, '\n');

		if (next)
			*next++ = '\0';
		if (strncmp(line, "data:", 5) == 0) {
			cJSON *m = cJSON_Parse(line + 5);
			const cJSON *mid = cJSON_GetObjectItemCaseSensitive(m, "id");

			if (cJSON_IsNumber(mid) && mid->valueint == id)
				return m;
			cJSON_Delete(m);
		}
		line = next;
	}
	return NULL;
}

/* POSTs one message; returns the HTTP status, or -1. *out gets the body. */
static long post(agent *a, cJSON *msg, body *out)
{
	struct curl_slist *h = NULL;
	char hdr[320];
	char *text = cJSON_PrintUnformatted(msg);
	long status = -1;

	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json, text/event-stream");
	if (a->session[0]) {
		snprintf(hdr, sizeof(hdr), "Mcp-Session-Id: %s", a->session);
		h = curl_slist_append(h, hdr);
	}
	if (a->version[0]) {
		snprintf(hdr, sizeof(hdr), "MCP-Protocol-Version: %s", a->version);
		h = curl_slist_append(h, hdr);
	}
	curl_easy_setopt(a->curl, CURLOPT_URL, a->url);
	curl_easy_setopt(a->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(a->curl, CURLOPT_POSTFIELDS, text);
	curl_easy_setopt(a->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(a->curl, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(a->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(a->curl, CURLOPT_HEADERDATA, out);
	curl_easy_setopt(a->curl, CURLOPT_TIMEOUT, 120L);
	if (curl_easy_perform(a->curl) == CURLE_OK)
		curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	free(text);
	return status;
}

/* A request; returns its result (caller frees the whole response via *resp_out). */
static const cJSON *rpc(agent *a, const char *method, cJSON *params, cJSON **resp_out)
{
	cJSON *msg = cJSON_CreateObject();
	body b = {0};
	int id = ++a->next_id;
	long status;
	cJSON *resp;
	const cJSON *err;

	cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
	cJSON_AddNumberToObject(msg, "id", id);
	cJSON_AddStringToObject(msg, "method", method);
	if (params)
		cJSON_AddItemToObject(msg, "params", params);
	status = post(a, msg, &b);
	cJSON_Delete(msg);
	if (b.session[0] && !a->session[0])
		snprintf(a->session, sizeof(a->session), "%s", b.session);
	resp = status == 200 && b.data ? pick_response(&b, id) : NULL;
	free(b.data);
	if (!resp) {
		say("%s: no response (HTTP %ld)", method, status);
		return NULL;
	}
	err = cJSON_GetObjectItemCaseSensitive(resp, "error");
	if (err) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(err, "message");
		say("%s: error: %s", method, cJSON_IsString(m) ? m->valuestring : "?");
		cJSON_Delete(resp);
		return NULL;
	}
	*resp_out = resp;
	return cJSON_GetObjectItemCaseSensitive(resp, "result");
}

static bool notify(agent *a, const char *method)
{
	cJSON *msg = cJSON_CreateObject();
	body b = {0};
	long status;

	cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
	cJSON_AddStringToObject(msg, "method", method);
	status = post(a, msg, &b);
	cJSON_Delete(msg);
	free(b.data);
	return status == 202 || status == 200;
}

/*
 * tools/call; returns the tool's structured result (structuredContent, or the
 * first text block parsed as JSON) as a tree the caller frees, or NULL.
 */
static cJSON *call_tool(agent *a, const char *name, cJSON *args)
{
	cJSON *params = cJSON_CreateObject(), *resp = NULL, *out = NULL;
	const cJSON *res, *sc, *content, *text;

	cJSON_AddStringToObject(params, "name", name);
	cJSON_AddItemToObject(params, "arguments", args ? args : cJSON_CreateObject());
	res = rpc(a, "tools/call", params, &resp);
	if (!res)
		return NULL;
	content = cJSON_GetObjectItemCaseSensitive(res, "content");
	text = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(content, 0), "text");
	sc = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "isError")))
		say("%s: tool error: %s", name, cJSON_IsString(text) ? text->valuestring : "?");
	else if (cJSON_IsObject(sc))
		out = cJSON_Duplicate(sc, 1);
	else if (cJSON_IsString(text))
		out = cJSON_Parse(text->valuestring);
	cJSON_Delete(resp);
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
	int rows, n, rc = 1;
	char end_cell[32];

	rows = row_count(a, file, SHEET);
	if (rows < 0)
		return 1;
	snprintf(end_cell, sizeof(end_cell), "C%d", rows);
	values = read_values(a, file, SHEET, "A2", end_cell);
	if (!values)
		return 1;
	n = cJSON_GetArraySize(values);
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
	int rows, n, rc = 1;
	char end_cell[32];

	rows = row_count(a, file, SHEET);
	if (rows < 0)
		return 1;
	snprintf(end_cell, sizeof(end_cell), "D%d", rows);
	values = read_values(a, file, SHEET, "A2", end_cell);
	if (!values)
		return 1;
	n = cJSON_GetArraySize(values);
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

	list = rpc(a, "tools/list", NULL, &files);
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
	agent a = {0};
	cJSON *params, *resp = NULL;
	const cJSON *res;
	int rc = 1;

	a.url = argc > 1 ? argv[1] : getenv("SANDBOX_MCP_URL");
	if (!a.url || !*a.url || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "Usage: sandbox-demo-agent [MCP_URL]\n"
				"Solves the bundled tasks through MCP Streamable HTTP; the URL "
				"defaults to $SANDBOX_MCP_URL.\n");
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	a.curl = curl_easy_init();
	if (!a.curl)
		return 1;

	params = cJSON_CreateObject();
	cJSON_AddStringToObject(params, "protocolVersion", "2025-06-18");
	cJSON_AddItemToObject(params, "capabilities", cJSON_CreateObject());
	{
		cJSON *ci = cJSON_AddObjectToObject(params, "clientInfo");
		cJSON_AddStringToObject(ci, "name", "sandbox-demo-agent");
		cJSON_AddStringToObject(ci, "version", "1.0");
	}
	res = rpc(&a, "initialize", params, &resp);
	if (res) {
		const char *v = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(res, "protocolVersion"));
		const cJSON *si = cJSON_GetObjectItemCaseSensitive(res, "serverInfo");

		snprintf(a.version, sizeof(a.version), "%s", v ? v : "2025-06-18");
		say("connected to %s (protocol %s)",
		    cJSON_GetStringValue(cJSON_GetObjectItem(si, "name"))
			    ? cJSON_GetStringValue(cJSON_GetObjectItem(si, "name"))
			    : "server",
		    a.version);
		cJSON_Delete(resp);
		if (notify(&a, "notifications/initialized"))
			rc = solve(&a);
		else
			say("notifications/initialized was refused");
	}
	curl_easy_cleanup(a.curl);
	curl_global_cleanup();
	return rc;
}
