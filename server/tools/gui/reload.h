/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "sbx/error.h"
#include "session.h"

/*
 * When the file at path changed after LibreOffice started, stops every
 * LibreOffice process (PID 1 starts Calc again on the file) and sets
 * *reloaded once they are gone. Nothing is done when Calc is not running
 * or already shows the file as saved.
 */
int gui_office_reload(const char *path, bool *reloaded, sbx_error *err);

/* True when a window (two levels below the root) has a title containing needle. */
bool gui_window_named(gui_session *s, const char *needle);
