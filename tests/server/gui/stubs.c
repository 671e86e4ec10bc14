/* SPDX-License-Identifier: MIT */
/*
 * What the GUI tools need from the server, for linking them alone: the
 * display lookup, which here reads test_display. tool_fail and
 * tool_result_clear come from the server's own tool_result.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gui-test.h"
#include "tool-util.h"
#include "sbx/base64.h"

const char *test_display;

const char *gui__display(tool_context *ctx)
{
	(void)ctx;
	return test_display;
}

bool gui__cancelled(tool_context *ctx)
{
	(void)ctx;
	return false;
}

const tool_def *test_tool(const char *name)
{
	size_t n;
	const tool_def *t = gui_tools(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

int test_call(const char *name, const char *args_json, tool_result *out)
{
	const tool_def *t = test_tool(name);
	cJSON *args = args_json ? cJSON_Parse(args_json) : NULL;
	int r;

	*out = (tool_result){0};
	if (!t || (args_json && !args)) {
		cJSON_Delete(args);
		return -1;
	}
	r = t->fn(NULL, args, out);
	cJSON_Delete(args);
	return r;
}

int test_png_decode(const void *data, size_t len, uint32_t *w, uint32_t *h, uint8_t **rgb)
{
	png_image img;

	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&img, data, len))
		return -1;
	img.format = PNG_FORMAT_RGB;
	*rgb = malloc(PNG_IMAGE_SIZE(img));
	if (!*rgb || !png_image_finish_read(&img, NULL, *rgb, 0, NULL)) {
		free(*rgb);
		*rgb = NULL;
		png_image_free(&img);
		return -1;
	}
	*w = img.width;
	*h = img.height;
	return 0;
}

int test_base64_decode(const char *s, uint8_t **out, size_t *len)
{
	char *buf = strdup(s);
	ssize_t n = buf ? sbx_base64_decode(buf) : -1;

	if (n < 0) {
		free(buf);
		return -1;
	}
	*out = (uint8_t *)buf;
	*len = (size_t)n;
	return 0;
}
