/* SPDX-License-Identifier: MIT */
#pragma once

/* Screenshot encoding: RGB rows to PNG (fast settings); base64 is sbx/base64.h. */

#include <stddef.h>
#include <stdint.h>

#include "sbx/buf.h"
#include "sbx/error.h"

/* Largest PNG we produce; a 1280x720 screen compresses far below this. */
#define GUI_PNG_MAX (64u * 1024 * 1024)

/*
 * Encodes a width x height RGB image (3 bytes a pixel, rows stride bytes
 * apart) as an 8-bit RGB PNG with zlib level 1 and no row filter: a
 * screenshot is mostly flat areas, where speed beats the last few percent.
 * Appends to out (whose own maximum also applies). Returns 0, -EINVAL for a
 * bad size, -ENOBUFS/-ENOMEM when out cannot hold it, -EIO on a libpng error.
 */
int gui_png_encode_rgb(const uint8_t *rgb, uint32_t width, uint32_t height, size_t stride,
		       sbx_buf *out, sbx_error *err);
