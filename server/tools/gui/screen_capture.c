/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include "screen_capture.h"
#include "sbx/clock.h"
#include "encode.h"
#include "sbx/base64.h"
#include "sbx/cleanup.h"

static int mask_shift(unsigned long mask)
{
	int shift = 0;

	if (!mask)
		return 0;
	while (!(mask & 1)) {
		mask >>= 1;
		shift++;
	}
	return shift;
}

/* Scales a masked channel to 0..255 whatever its width (5/6-bit visuals too). */
static uint8_t channel(unsigned long pixel, unsigned long mask, int shift)
{
	unsigned long max = mask >> shift, v = (pixel & mask) >> shift;

	return max ? (uint8_t)(v * 255 / max) : 0;
}

/* XImage rows to packed RGB; a fast path for the usual 24-bit-in-32 little-endian layout. */
static void image_to_rgb(XImage *img, uint8_t *rgb)
{
	int w = img->width, h = img->height;

	if (img->bits_per_pixel == 32 && img->byte_order == LSBFirst && img->red_mask == 0xff0000 &&
	    img->green_mask == 0xff00 && img->blue_mask == 0xff) {
		for (int y = 0; y < h; y++) {
			const uint8_t *src =
				(const uint8_t *)img->data + (size_t)y * img->bytes_per_line;
			uint8_t *dst = rgb + (size_t)y * (size_t)w * 3;

			for (int x = 0; x < w; x++) {
				dst[0] = src[2];
				dst[1] = src[1];
				dst[2] = src[0];
				src += 4;
				dst += 3;
			}
		}
		return;
	}

	int rs = mask_shift(img->red_mask), gs = mask_shift(img->green_mask),
	    bs = mask_shift(img->blue_mask);

	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			unsigned long p = XGetPixel(img, x, y);
			uint8_t *dst = rgb + ((size_t)y * (size_t)w + (size_t)x) * 3;

			dst[0] = channel(p, img->red_mask, rs);
			dst[1] = channel(p, img->green_mask, gs);
			dst[2] = channel(p, img->blue_mask, bs);
		}
}

/* XGetImage of the region as packed RGB (malloc'd, w * h * 3 bytes). */
static int grab_rgb(gui_session *s, int x, int y, int w, int h, uint8_t **out, sbx_error *err)
{
	XImage *img;
	uint8_t *rgb;
	int r;

	img = XGetImage(s->dpy, s->root, x, y, (unsigned)w, (unsigned)h, AllPlanes, ZPixmap);
	if (!img) {
		r = gui_session_check_errors(s, "screenshot", err);
		return r < 0 ? r : sbx_error_set(err, -EIO, "screenshot: XGetImage failed");
	}
	if (img->red_mask == 0 || img->green_mask == 0 || img->blue_mask == 0) {
		XDestroyImage(img);
		return sbx_error_set(err, -ENOTSUP,
				     "screenshot: X server '%s' has no TrueColor root visual",
				     s->name);
	}
	rgb = malloc((size_t)w * (size_t)h * 3);
	if (!rgb) {
		XDestroyImage(img);
		return sbx_error_set(err, -ENOMEM, "screenshot: out of memory");
	}
	image_to_rgb(img, rgb);
	XDestroyImage(img);
	*out = rgb;
	return 0;
}

static int encode(const uint8_t *rgb, int w, int h, double grab_ms, gui_capture *out,
		  sbx_error *err)
{
	sbx_buf png = SBX_BUF_INIT(GUI_PNG_MAX);
	double t1 = sbx_now_msf();
	char *b64;
	int r;

	r = gui_png_encode_rgb(rgb, (uint32_t)w, (uint32_t)h, (size_t)w * 3, &png, err);
	if (r < 0)
		return r;
	b64 = sbx_base64_encode(png.data, png.len);
	if (!b64) {
		sbx_buf_free(&png);
		return sbx_error_set(err, -ENOMEM, "screenshot: out of memory");
	}
	*out = (gui_capture){
		.png_b64 = b64,
		.width = (uint32_t)w,
		.height = (uint32_t)h,
		.png_bytes = png.len,
		.grab_ms = grab_ms,
		.encode_ms = sbx_now_msf() - t1,
	};
	sbx_buf_free(&png);
	return 0;
}

int gui_capture_region(gui_session *s, int x, int y, int w, int h, gui_capture *out, sbx_error *err)
{
	_cleanup_free_ uint8_t *rgb = NULL;
	double t0 = sbx_now_msf();
	int r;

	if (w <= 0 || h <= 0)
		return sbx_error_set(err, -EINVAL, "screenshot: empty region");
	r = grab_rgb(s, x, y, w, h, &rgb, err);
	if (r < 0)
		return r;
	return encode(rgb, w, h, sbx_now_msf() - t0, out, err);
}

int gui_capture_settled(gui_session *s, int min_ms, int max_ms, gui_capture *out, sbx_error *err)
{
	_cleanup_free_ uint8_t *prev = NULL;
	double t0 = sbx_now_msf(), deadline = t0 + max_ms;
	size_t size = (size_t)s->width * (size_t)s->height * 3;
	int r;

	XSync(s->dpy, False);
	sbx_sleep_ms(min_ms);
	for (;;) {
		_cleanup_free_ uint8_t *rgb = NULL;

		r = grab_rgb(s, 0, 0, s->width, s->height, &rgb, err);
		if (r < 0)
			return r;
		if ((prev && memcmp(prev, rgb, size) == 0) || sbx_now_msf() >= deadline)
			return encode(rgb, s->width, s->height, sbx_now_msf() - t0, out, err);
		free(prev);
		prev = TAKE_PTR(rgb);
		sbx_sleep_ms(GUI_SETTLE_POLL_MS);
	}
}

void gui_capture_clear(gui_capture *c)
{
	if (!c)
		return;
	free(c->png_b64);
	c->png_b64 = NULL;
}
