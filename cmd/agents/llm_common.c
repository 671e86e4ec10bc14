/* SPDX-License-Identifier: MIT */
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

cJSON *llm_user_text(const char *text)
{
	cJSON *m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "role", "user");
	cJSON_AddStringToObject(m, "content", text);
	return m;
}

bool llm_tool_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 64)
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
	       n;
}
