/* SPDX-License-Identifier: MIT */
/*
 * The in-memory workbook image the ODS and XLSX tests build, save and open:
 * img, emptied around each test by the checked fixture setup/teardown.
 */
#pragma once

#include "sbx/buf.h"

static sbx_buf img;

static void setup(void)
{
	sbx_buf_init(&img, (size_t)1 << 30);
}

static void teardown(void)
{
	sbx_buf_free(&img);
}
