/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * JSON helpers on cJSON. Lookups are case-sensitive and chain safely: every
 * getter accepts NULL and a non-object, and returns the fallback.
 */

#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>

#include "sbx/error.h"
#include "sbx/cleanup.h"

/* Nesting deeper than this is refused by sbx_json_parse. */
#define SBX_JSON_MAX_DEPTH 64

/*
 * Parses exactly len bytes (trailing whitespace allowed, nothing else).
 * Refuses nesting deeper than SBX_JSON_MAX_DEPTH before cJSON recurses.
 * On success *out owns the tree (cJSON_Delete it). Errors say where:
 * "invalid JSON at byte 17".
 */
int sbx_json_parse(const char *text, size_t len, cJSON **out, sbx_error *err);

const char *sbx_json_get_string(const cJSON *obj, const char *key, const char *fallback);
double sbx_json_get_number(const cJSON *obj, const char *key, double fallback);
bool sbx_json_get_bool(const cJSON *obj, const char *key, bool fallback);
const cJSON *sbx_json_get(const cJSON *obj, const char *key);

/* Adds key:value and returns 0, or -ENOMEM. The parent takes ownership at once. */
int sbx_json_add_string(cJSON *obj, const char *key, const char *value);
int sbx_json_add_number(cJSON *obj, const char *key, double value);
int sbx_json_add_bool(cJSON *obj, const char *key, bool value);

/* cJSON_PrintUnformatted, or NULL on OOM; free() the result. */
char *sbx_json_print(const cJSON *item);

SBX_DEFINE_CLEANUP(cJSON, cJSON_Delete)
#define _cleanup_json_ _cleanup_(cJSON_Deletep)
