/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A strict subset of TOML 1.0, enough for Harbor's task.toml, parsed into
 * the same positioned tree as task.yaml (ytree.h): tables are MAPs, arrays
 * SEQs, [[x]] a SEQ of MAPs, strings non-plain SCALARs, numbers and booleans
 * plain SCALARs (underscores dropped). Debian ships no C TOML library
 * (only C++ ones), hence this; tests/fuzz/fuzz_task_toml.c fuzzes it.
 *
 * Refused (one error, "name:line:col: ..."): dates and times, hex/octal/binary
 * integers, redefined keys or tables, multi-line inline tables, non-UTF-8
 * text, control characters; caps as ytree's (input, depth, nodes, scalar).
 */

#include <stddef.h>

#include "sbx/error.h"
#include "ytree.h"

int sbx_toml__parse(const char *name, const char *text, size_t len, sbx_ynode **out,
		    sbx_error *err);
