/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

void llm_reply_clear(llm_reply *r)
{
	for (size_t i = 0; i < r->n_calls; i++) {
		free(r->calls[i].id);
		free(r->calls[i].name);
		cJSON_Delete(r->calls[i].args);
		free(r->calls[i].bad_args);
	}
	free(r->calls);
	free(r->text);
	free(r->stop);
	memset(r, 0, sizeof(*r));
}

void llm_result_clear(llm_result *r)
{
	free(r->text);
	free(r->image_b64);
	free(r->image_mime);
	memset(r, 0, sizeof(*r));
}

cJSON *llm_add_message(cJSON *messages, const char *role, cJSON *content)
{
	cJSON *m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "role", role);
	cJSON_AddItemToObject(m, "content", content);
	cJSON_AddItemToArray(messages, m);
	return m;
}

uint64_t llm_count(const cJSON *o, const char *key)
{
	double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));

	return v > 0 && v < 1e18 ? (uint64_t)v : 0;
}

int llm_tool_parts(const cJSON *t, const char **name, const char **desc, cJSON **schema, char *why,
		   size_t why_len)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "inputSchema");
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "type"));

	*name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "name"));
	*desc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "description"));
	if (!*desc)
		*desc = "";
	if (!llm_tool_name_ok(*name)) {
		snprintf(why, why_len, "tool name '%.80s' is not [A-Za-z0-9_-]{1,64}",
			 *name ? *name : "(none)");
		return -1;
	}
	/* Both providers take only an object schema for a tool's arguments. */
	if (s && (!cJSON_IsObject(s) || !type || strcmp(type, "object") != 0)) {
		snprintf(why, why_len, "tool '%s': inputSchema is not an object schema", *name);
		return -1;
	}
	*schema =
		s ? cJSON_Duplicate(s, 1) : cJSON_Parse("{\"type\":\"object\",\"properties\":{}}");
	return 0;
}

bool llm_tool_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 64)
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
	       n;
}
