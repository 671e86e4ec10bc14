/* SPDX-License-Identifier: MIT */
#pragma once

/* What lib/sweep's files share. */

#include <stddef.h>

#include "sbx/error.h"
#include "sbx/sweep.h"

/* Writes dir/name atomically: a temporary file beside it, fsync, rename, fsync of dir. */
int sbx_sweep__write_atomic(const char *dir, const char *name, const char *data, size_t len,
			    sbx_error *err);

/* strdup that accepts NULL. */
char *sbx_sweep__strdup0(const char *s);

/* The results.jsonl lines a record stands for (a record built by hand has 0: one). */
static inline unsigned sbx_sweep__lines(const sbx_sweep_record *r)
{
	return r->lines ? r->lines : 1;
}
