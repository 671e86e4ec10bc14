/* SPDX-License-Identifier: MIT */
#pragma once

/* Small helpers for the XML writers: escaping that always yields valid XML 1.0. */

#include <stddef.h>

#include "sbx/buf.h"

/*
 * Appends s escaped for XML text (attr false) or a double-quoted attribute
 * (attr true). Invalid UTF-8 becomes U+FFFD; control characters XML cannot
 * carry are dropped; in attributes TAB/LF/CR become character references.
 */
int sbx_sheet__xml_escape(sbx_buf *b, const char *s, size_t len, int attr);
