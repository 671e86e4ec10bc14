/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A validator for the subset of JSON Schema our tool schemas use: type (a
 * name or a list of names), required, properties, additionalProperties
 * (false or a schema), enum, minimum, maximum, items, minItems, maxItems,
 * minLength, maxLength. Anything else in a schema is ignored.
 */

#include <cjson/cJSON.h>

#include "sbx/error.h"

/*
 * Checks value against schema. Returns 0, or -EINVAL with a one-line message
 * naming the offending argument: "argument 'row': expected integer, got string".
 */
int schema_validate(const cJSON *schema, const cJSON *value, sbx_error *err);
