/* SPDX-License-Identifier: MIT */
/* Workspace listing: the list_files tool and MCP resources. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resources.h"
#include "sbx/base64.h"
#include "workspace.h"

#define MAX_LISTED 10000

struct list_ctx {
	cJSON *arr;
	const tool_context *ctx;
	bool resources;
	bool relative_uris; /* file://<rel>, as the reference names them */
};

static bool unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == '~' || c == '/';
}

static int uri_for(const tool_context *ctx, const char *rel, bool relative, sbx_buf *b)
{
	const char *parts[2] = {ctx->workspace, rel};
	int r = sbx_buf_puts(b, "file://");

	for (int k = relative ? 1 : 0; k < 2 && r == 0; k++) {
		if (k == 1 && !relative)
			r = sbx_buf_putc(b, '/');
		for (const unsigned char *p = (const unsigned char *)parts[k]; *p && r == 0; p++)
			r = unreserved(*p) ? sbx_buf_putc(b, (char)*p)
					   : sbx_buf_printf(b, "%%%02X", *p);
	}
	return r;
}

static int list_one(const char *rel, const struct stat *st, void *payload)
{
	struct list_ctx *c = payload;
	cJSON *o;
	sbx_buf uri = SBX_BUF_INIT(16384);

	if (!c->resources) {
		cJSON_AddItemToArray(c->arr, cJSON_CreateString(rel));
		return 0;
	}
	o = cJSON_CreateObject();
	if (!o || uri_for(c->ctx, rel, c->relative_uris, &uri) < 0) {
		cJSON_Delete(o);
		sbx_buf_free(&uri);
		return -ENOMEM;
	}
	cJSON_AddItemToArray(c->arr, o);
	cJSON_AddStringToObject(o, "uri", sbx_buf_str(&uri));
	cJSON_AddStringToObject(o, "name", rel);
	cJSON_AddStringToObject(o, "mimeType", workspace_mime_type(rel));
	cJSON_AddNumberToObject(o, "size", (double)st->st_size);
	sbx_buf_free(&uri);
	return 0;
}

static int cmp_strings(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	return strcmp(x->valuestring, y->valuestring);
}

/* Sorts an array of strings in place so listings are stable. */
static void sort_strings(cJSON *arr)
{
	int n = arr ? cJSON_GetArraySize(arr) : 0, i = 0;
	cJSON **items, *it;

	if (n < 2 || !(items = calloc((size_t)n, sizeof(*items))))
		return;
	cJSON_ArrayForEach (it, arr)
		items[i++] = it;
	qsort(items, (size_t)n, sizeof(*items), cmp_strings);
	for (i = 0; i < n; i++) {
		items[i]->prev = i ? items[i - 1] : items[n - 1];
		items[i]->next = i + 1 < n ? items[i + 1] : NULL;
	}
	arr->child = items[0];
	free(items);
}

cJSON *resources_list(const tool_context *ctx)
{
	cJSON *r = cJSON_CreateObject();
	struct list_ctx c = {NULL, ctx, true, false};

	if (!r)
		return NULL;
	c.arr = cJSON_AddArrayToObject(r, "resources");
	if (!c.arr || workspace_walk(ctx->workspace_fd, list_one, &c, MAX_LISTED) == -ENOMEM) {
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

cJSON *resources_list_reference(const tool_context *ctx)
{
	struct list_ctx c = {cJSON_CreateArray(), ctx, true, true};

	if (c.arr && workspace_walk(ctx->workspace_fd, list_one, &c, MAX_LISTED) == -ENOMEM) {
		cJSON_Delete(c.arr);
		return NULL;
	}
	return c.arr;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes s into a new string; NULL on a bad escape or an embedded NUL. */
static char *percent_decode(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == '%') {
			int hi = hexval(s[1]), lo = hi >= 0 ? hexval(s[2]) : -1;
			if (lo < 0 || (hi == 0 && lo == 0)) {
				free(out);
				return NULL;
			}
			*o++ = (char)(hi * 16 + lo);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

static bool is_text(const char *mime)
{
	return strncmp(mime, "text/", 5) == 0 || strcmp(mime, "application/json") == 0 ||
	       strcmp(mime, "application/yaml") == 0;
}

int resources_read_bytes(const tool_context *ctx, const char *path, char **data, size_t *len,
			 sbx_error *err)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	tool_result tr = {0};
	struct stat st;
	size_t got = 0;

	fd = workspace_open_regular(ctx, path, &st, &tr);
	if (fd < 0) {
		int r = fd == -ENOENT || fd == -ENOTDIR ? -ENOENT : -EPERM;

		sbx_error_set(err, r, "%s", tr.error ? tr.error : "cannot open");
		tool_result_clear(&tr);
		return r;
	}
	if ((size_t)st.st_size > MAX_RESOURCE_BYTES)
		return sbx_error_set(err, -EFBIG, "'%s' is too large (%lld bytes, limit %u)", path,
				     (long long)st.st_size, MAX_RESOURCE_BYTES);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	/* At most the size it had when opened: a file that grows is cut there. */
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*data = TAKE_PTR(buf);
	*len = got;
	return 0;
}

int resources_read(const tool_context *ctx, const char *uri, cJSON **out, sbx_error *err)
{
	_cleanup_free_ char *path = NULL, *data = NULL;
	sbx_error e = SBX_ERROR_INIT;
	const char *mime;
	size_t got = 0;
	cJSON *r, *item;
	int k;

	if (strncmp(uri, "file://", 7) != 0)
		return sbx_error_set(err, -ENOENT, "Resource not found: %s", uri);
	path = percent_decode(uri + 7);
	if (!path)
		return sbx_error_set(err, -ENOENT, "Resource not found: %s", uri);
	k = resources_read_bytes(ctx, path, &data, &got, &e);
	if (k == -EFBIG)
		return sbx_error_set(err, -EFBIG, "Resource too large: %s (limit %u bytes)", uri,
				     MAX_RESOURCE_BYTES);
	if (k == -ENOMEM)
		return sbx_error_set(err, k, "out of memory");
	if (k < 0)
		return sbx_error_set(err, -ENOENT, "Resource not found: %s", uri);
	mime = workspace_mime_type(path);
	r = cJSON_CreateObject();
	if (!r)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	item = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "contents"), item);
	cJSON_AddStringToObject(item, "uri", uri);
	cJSON_AddStringToObject(item, "mimeType", mime);
	if (is_text(mime) && strlen(data) == got) {
		cJSON_AddStringToObject(item, "text", data);
	} else {
		_cleanup_free_ char *b64 = sbx_base64_encode(data, got);
		if (!b64) {
			cJSON_Delete(r);
			return sbx_error_set(err, -ENOMEM, "out of memory");
		}
		cJSON_AddStringToObject(item, "blob", b64);
	}
	*out = r;
	return 0;
}

static int list_files(tool_context *ctx, const cJSON *args, tool_result *out)
{
	struct list_ctx c = {NULL, ctx, false, false};

	out->structured = cJSON_CreateObject();
	if (!out->structured)
		return -ENOMEM;
	c.arr = cJSON_AddArrayToObject(out->structured, "files");
	if (!c.arr)
		return -ENOMEM;
	if (workspace_walk(ctx->workspace_fd, list_one, &c, MAX_LISTED) < 0)
		return tool_fail(out, TOOL_E_INTERNAL, "Cannot list the workspace");
	sort_strings(c.arr);
	return 0;
}

static const tool_def tools[] = {
	TOOL_DEF(list_files, .title = "List workspace files",
		 .description = "Lists every regular file in the workspace, as paths relative to "
				"it (sorted). Pass these paths to the other tools.",
		 .input_schema = TOOL_NO_ARGS,
		 .output_schema = "{\"type\":\"object\",\"properties\":{\"files\":{\"type\":"
				  "\"array\",\"items\":{\"type\":\"string\"}}},"
				  "\"required\":[\"files\"]}",
		 .annotations = TOOL_READ_ONLY | TOOL_IDEMPOTENT),
};

const tool_def *file_tools(size_t *n_out)
{
	*n_out = SBX_ELEMENTSOF(tools);
	return tools;
}
