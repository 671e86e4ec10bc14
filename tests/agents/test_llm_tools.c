/* SPDX-License-Identifier: MIT */
/*
 * The model agent turns the sandbox's tools/list into each provider's
 * function schema. A tool a provider cannot take (a name outside its
 * alphabet, arguments that are not an object schema) is refused with one
 * line naming the tool, before any request is sent.
 */
#include "check_main.h"
#include <string.h>

#include "llm.h"

static int parts(const char *tool_json, char *why, size_t why_len, cJSON **schema)
{
	cJSON *t = cJSON_Parse(tool_json);
	const char *name, *desc;
	int r;

	ck_assert_ptr_nonnull(t);
	*schema = NULL;
	r = llm_tool_parts(t, &name, &desc, schema, why, why_len);
	if (r == 0) {
		ck_assert_str_eq(name, cJSON_GetStringValue(cJSON_GetObjectItem(t, "name")));
		ck_assert_ptr_nonnull(desc);
	}
	/* schema is a copy: it outlives the tool list it came from */
	cJSON_Delete(t);
	return r;
}

START_TEST(object_schemas_are_taken)
{
	char why[256] = "";
	cJSON *s;

	ck_assert_int_eq(parts("{\"name\":\"read_cell\",\"description\":\"Reads\","
			       "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"cell\":"
			       "{\"type\":\"string\"}},\"required\":[\"cell\"]}}",
			       why, sizeof(why), &s),
			 0);
	ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(s, "type")), "object");
	ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(s, "properties"), "cell"));
	cJSON_Delete(s);
	/* No inputSchema: an empty object schema, which both providers accept. */
	ck_assert_int_eq(parts("{\"name\":\"ping\"}", why, sizeof(why), &s), 0);
	ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(s, "type")), "object");
	cJSON_Delete(s);
}
END_TEST

START_TEST(schemas_a_provider_refuses_are_named)
{
	static const struct {
		const char *tool, *why;
	} bad[] = {
		{"{\"name\":\"t\",\"inputSchema\":{\"type\":\"array\",\"items\":{}}}",
		 "tool 't': inputSchema is not an object schema"},
		{"{\"name\":\"t\",\"inputSchema\":\"object\"}",
		 "tool 't': inputSchema is not an object schema"},
		{"{\"name\":\"t\",\"inputSchema\":{\"properties\":{}}}",
		 "tool 't': inputSchema is not an object schema"},
		{"{\"name\":\"has space\"}", "tool name 'has space' is not [A-Za-z0-9_-]{1,64}"},
		{"{\"name\":\"\"}", "tool name '' is not [A-Za-z0-9_-]{1,64}"},
		{"{\"description\":\"no name\"}", "tool name '(none)' is not [A-Za-z0-9_-]{1,64}"},
		{"{\"name\":\"x1234567890123456789012345678901234567890123456789012345678901234\"}",
		 "tool name 'x1234567890123456789012345678901234567890123456789012345678901234' is "
		 "not [A-Za-z0-9_-]{1,64}"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[256] = "";
		cJSON *s;

		ck_assert_msg(parts(bad[i].tool, why, sizeof(why), &s) < 0, "%s taken",
			      bad[i].tool);
		ck_assert_ptr_null(s);
		ck_assert_str_eq(why, bad[i].why);
		ck_assert_ptr_null(strchr(why, '\n'));
	}
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "schemas", NULL, NULL, 0, object_schemas_are_taken,
		      schemas_a_provider_refuses_are_named);
}

SBX_TEST_MAIN("llm-tools", add_cases)
