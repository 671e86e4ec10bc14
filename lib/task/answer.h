/* SPDX-License-Identifier: MIT */
#pragma once

/* The cells an agent must produce (lib/task internal; see answer.c). */

#include "sbx/error.h"

/*
 * Compares a starting file with its oracle, sheet by sheet (only the sheets
 * named in sheets, a NULL-terminated list, when it is not NULL). Every cell
 * in the starting file's used range must be the same in the oracle, else
 * -EINVAL naming the first that differs. *answer_out: ranges ("Sheet1!D1:D101")
 * the oracle adds beyond it (at least one); *inputs_out: the given ranges, or
 * NULL when there are none. Both NULL-terminated, malloc'd (free each, then
 * the array).
 */
int sbx_task__answer_ranges(const char *start_path, const char *oracle_path, char **sheets,
			    char ***answer_out, char ***inputs_out, sbx_error *err);
