/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <png.h>
#include <stdlib.h>
#include <zlib.h>

#include "encode.h"

typedef struct png_sink {
	sbx_buf *out;
	int r;
} png_sink;

static void sink_write(png_structp png, png_bytep data, size_t len)
{
	png_sink *sink = png_get_io_ptr(png);

	if (sink->r < 0)
		return;
	sink->r = sbx_buf_append(sink->out, data, len);
	if (sink->r < 0)
		png_error(png, "output buffer full");
}

static void sink_flush(png_structp png)
{
	(void)png;
}

/* libpng reports through longjmp; keep its own printing quiet. */
static void png_quiet_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

static void png_fail(png_structp png, png_const_charp msg)
{
	(void)msg;
	png_longjmp(png, 1);
}

/* Everything libpng may longjmp out of; no local is changed after setjmp. */
static int write_png(png_structp png, png_infop info, png_sink *sink, const uint8_t *rgb,
		     uint32_t width, uint32_t height, size_t stride)
{
	if (setjmp(png_jmpbuf(png)))
		return sink->r < 0 ? sink->r : -EIO;
	png_set_write_fn(png, sink, sink_write, sink_flush);
	png_set_compression_level(png, Z_BEST_SPEED);
	png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
	png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (uint32_t y = 0; y < height; y++)
		png_write_row(png, rgb + (size_t)y * stride);
	png_write_end(png, NULL);
	return 0;
}

int gui_png_encode_rgb(const uint8_t *rgb, uint32_t width, uint32_t height, size_t stride,
		       sbx_buf *out, sbx_error *err)
{
	png_structp png;
	png_infop info;
	png_sink sink = {out, 0};
	int r;

	if (width == 0 || height == 0 || width > PNG_USER_WIDTH_MAX ||
	    height > PNG_USER_HEIGHT_MAX || stride < (size_t)width * 3)
		return sbx_error_set(err, -EINVAL, "PNG: bad image size %ux%u", width, height);

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_fail, png_quiet_warning);
	if (!png)
		return sbx_error_set(err, -ENOMEM, "PNG: out of memory");
	info = png_create_info_struct(png);
	if (!info) {
		png_destroy_write_struct(&png, NULL);
		return sbx_error_set(err, -ENOMEM, "PNG: out of memory");
	}
	r = write_png(png, info, &sink, rgb, width, height, stride);
	png_destroy_write_struct(&png, &info);
	if (r == -ENOBUFS)
		return sbx_error_set(err, r, "PNG: image larger than the output limit");
	if (r == -ENOMEM)
		return sbx_error_set(err, r, "PNG: out of memory");
	if (r < 0)
		return sbx_error_set(err, r, "PNG: encoding failed");
	return 0;
}
