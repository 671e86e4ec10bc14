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
/* Appends ` name="value"`, value escaped. */
int sbx_sheet__xml_attr(sbx_buf *b, const char *name, const char *value);
/* Appends <tag attrs>text</tag>, text escaped; attrs is markup ("" for none). */
int sbx_sheet__xml_element(sbx_buf *b, const char *tag, const char *attrs, const char *text);
