/* SPDX-License-Identifier: MIT */
/*
 * sandbox-demo-agent: a scripted agent that solves banking_reserve through
 * MCP Streamable HTTP, the way a model-driven agent would, with no shortcuts:
 *
 *   initialize → notifications/initialized → tools/list → list_files →
 *   get_sheet_info → read_range → compute the reserves → write_range →
 *   complete_task
 *
 * The reserve of a period is round(cash_flow * rate, 2); the rate is the
 * period's Rate_Point when known, else the linear interpolation between the
 * nearest known periods before and after (flat beyond the first or last).
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

#define MAX_BODY   (64L * 1024 * 1024)
#define MAX_ROWS   100000
#define INPUT_FILE "cash_flows.ods"
#define SHEET	   "Sheet1"

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
 * tools/call; returns the tool's structured result (structuredContent, or
 * the first text block parsed as JSON), owned by *resp_out / *parsed_out.
 */
static const cJSON *call_tool(agent *a, const char *name, cJSON *args, cJSON **resp_out,
			      cJSON **parsed_out)
{
	cJSON *params = cJSON_CreateObject();
	const cJSON *res, *sc, *content, *text;

	cJSON_AddStringToObject(params, "name", name);
	cJSON_AddItemToObject(params, "arguments", args ? args : cJSON_CreateObject());
	res = rpc(a, "tools/call", params, resp_out);
	if (!res)
		return NULL;
	content = cJSON_GetObjectItemCaseSensitive(res, "content");
	text = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(content, 0), "text");
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "isError"))) {
		say("%s: tool error: %s", name, cJSON_IsString(text) ? text->valuestring : "?");
		return NULL;
	}
	sc = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
	if (cJSON_IsObject(sc))
		return sc;
	if (cJSON_IsString(text)) {
		*parsed_out = cJSON_Parse(text->valuestring);
		return *parsed_out;
	}
	return NULL;
}

static cJSON *sheet_args(const char *file)
{
	cJSON *a = cJSON_CreateObject();

	cJSON_AddStringToObject(a, "file_path", file);
	cJSON_AddStringToObject(a, "sheet_name", SHEET);
	return a;
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

static int solve(agent *a)
{
	cJSON *r1 = NULL, *p1 = NULL, *r2 = NULL, *p2 = NULL, *r3 = NULL, *p3 = NULL, *r4 = NULL,
	      *p4 = NULL, *r5 = NULL, *p5 = NULL, *r6 = NULL, *p6 = NULL, *r0 = NULL;
	const cJSON *res, *files, *f, *values;
	const char *file = NULL;
	double *period = NULL, *cf = NULL, *rate = NULL;
	bool *known = NULL;
	int rows, n = 0, rc = 1;
	char end_cell[32];

	res = rpc(a, "tools/list", NULL, &r0);
	if (!res)
		goto done;
	say("server offers %d tools", cJSON_GetArraySize(cJSON_GetObjectItem(res, "tools")));

	res = call_tool(a, "list_files", NULL, &r1, &p1);
	files = cJSON_GetObjectItemCaseSensitive(res, "files");
	cJSON_ArrayForEach (f, files) {
		const char *name = cJSON_IsString(f)
					   ? f->valuestring
					   : cJSON_GetStringValue(cJSON_GetObjectItem(f, "path"));
		size_t nl = name ? strlen(name) : 0;

		if (nl >= strlen(INPUT_FILE) &&
		    strcmp(name + nl - strlen(INPUT_FILE), INPUT_FILE) == 0)
			file = name;
	}
	if (!file) {
		say("no %s in the workspace", INPUT_FILE);
		goto done;
	}
	say("found %s", file);

	res = call_tool(a, "get_sheet_info", sheet_args(file), &r2, &p2);
	rows = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(res, "row_count"));
	if (rows < 2 || rows > MAX_ROWS) {
		say("unexpected row count %d", rows);
		goto done;
	}
	say("%s has %d rows", SHEET, rows);

	{
		cJSON *args = sheet_args(file);

		snprintf(end_cell, sizeof(end_cell), "C%d", rows);
		cJSON_AddStringToObject(args, "start_cell", "A2");
		cJSON_AddStringToObject(args, "end_cell", end_cell);
		res = call_tool(a, "read_range", args, &r3, &p3);
	}
	values = cJSON_GetObjectItemCaseSensitive(res, "values");
	if (!cJSON_IsArray(values)) {
		say("read_range gave no values");
		goto done;
	}
	n = cJSON_GetArraySize(values);
	period = calloc((size_t)n + 1, sizeof(double));
	cf = calloc((size_t)n + 1, sizeof(double));
	rate = calloc((size_t)n + 1, sizeof(double));
	known = calloc((size_t)n + 1, sizeof(bool));
	if (!period || !cf || !rate || !known)
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

		if (known[i])
			continue;
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
			rate[i] = rate[lo] + (rate[hi] - rate[lo]) * (period[i] - period[lo]) /
						     (period[hi] - period[lo]);
	}
	{
		cJSON *args = sheet_args(file), *vals = cJSON_CreateArray(), *row;

		row = cJSON_CreateArray();
		cJSON_AddItemToArray(row, cJSON_CreateString("Required_Reserve"));
		cJSON_AddItemToArray(vals, row);
		for (int i = 0; i < n; i++) {
			row = cJSON_CreateArray();
			cJSON_AddItemToArray(row, cJSON_CreateNumber(round2(cf[i] * rate[i])));
			cJSON_AddItemToArray(vals, row);
		}
		cJSON_AddStringToObject(args, "start_cell", "D1");
		cJSON_AddItemToObject(args, "values", vals);
		res = call_tool(a, "write_range", args, &r4, &p4);
		if (!res)
			goto done;
		say("wrote Required_Reserve and %d values", n);
	}
	{
		cJSON *args = cJSON_CreateObject();

		cJSON_AddStringToObject(args, "summary", "Required_Reserve added in column D");
		res = call_tool(a, "complete_task", args, &r5, &p5);
		if (!res)
			goto done;
		say("task completed");
	}
	rc = 0;
done:
	free(period);
	free(cf);
	free(rate);
	free(known);
	cJSON_Delete(r0);
	cJSON_Delete(r1);
	cJSON_Delete(p1);
	cJSON_Delete(r2);
	cJSON_Delete(p2);
	cJSON_Delete(r3);
	cJSON_Delete(p3);
	cJSON_Delete(r4);
	cJSON_Delete(p4);
	cJSON_Delete(r5);
	cJSON_Delete(p5);
	cJSON_Delete(r6);
	cJSON_Delete(p6);
	return rc;
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
				"Solves banking_reserve through MCP Streamable HTTP; the URL "
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
