/* SPDX-License-Identifier: MIT */
/* Anthropic Messages with tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

static struct curl_slist *headers(struct curl_slist *h, const char *key)
{
	char line[1024];

	if (key && *key) {
		snprintf(line, sizeof(line), "x-api-key: %s", key);
		h = curl_slist_append(h, line);
	}
	return curl_slist_append(h, "anthropic-version: 2023-06-01");
}

static cJSON *tools(const cJSON *mcp_tools, char *why, size_t why_len)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *t;

	cJSON_ArrayForEach (t, mcp_tools) {
		const char *name, *desc;
		cJSON *item, *schema;

		if (llm_tool_parts(t, &name, &desc, &schema, why, why_len) < 0) {
			cJSON_Delete(out);
			return NULL;
		}
		item = cJSON_CreateObject();
		cJSON_AddStringToObject(item, "name", name);
		cJSON_AddStringToObject(item, "description", desc);
		cJSON_AddItemToObject(item, "input_schema", schema);
		cJSON_AddItemToArray(out, item);
	}
	return out;
}

static cJSON *request(const char *model, const char *system, cJSON *messages, cJSON *tool_list,
		      long max_output_tokens, double temperature, bool has_temperature,
		      long long seed, bool has_seed)
{
	cJSON *b = cJSON_CreateObject();

	(void)seed;
	(void)has_seed; /* the Messages API has no seed */
	cJSON_AddStringToObject(b, "model", model);
	/* max_tokens is required by the Messages API. */
	cJSON_AddNumberToObject(b, "max_tokens",
				(double)(max_output_tokens > 0 ? max_output_tokens : 4096));
	cJSON_AddStringToObject(b, "system", system);
	cJSON_AddItemReferenceToObject(b, "messages", messages); /* not a copy */
	if (cJSON_GetArraySize(tool_list) > 0)
		cJSON_AddItemReferenceToObject(b, "tools", tool_list);
	if (has_temperature)
		cJSON_AddNumberToObject(b, "temperature", temperature);
	return b;
}

static int parse(const cJSON *body, llm_reply *r, char *why, size_t why_len)
{
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(body, "content"), *b;
	const cJSON *usage = cJSON_GetObjectItemCaseSensitive(body, "usage");
	const char *stop =
		cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "stop_reason"));
	size_t text_len = 0;

	if (!cJSON_IsArray(content)) {
		snprintf(why, why_len, "reply has no content list");
		return -1;
	}
	r->stop = strdup(stop ? stop : "unknown");
	r->in_tokens = llm_count(usage, "input_tokens");
	r->out_tokens = llm_count(usage, "output_tokens");
	r->cached_tokens = llm_count(usage, "cache_read_input_tokens");
	r->calls = calloc((size_t)cJSON_GetArraySize(content) + 1, sizeof(*r->calls));
	if (!r->calls)
		return -1;
	cJSON_ArrayForEach (b, content) {
		const char *type =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "type"));

		if (type && strcmp(type, "text") == 0) {
			const char *t =
				cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "text"));
			size_t n = t ? strlen(t) : 0;
			char *joined = realloc(r->text, text_len + n + 2);

			if (!joined)
				return -1;
			r->text = joined;
			memcpy(r->text + text_len, t ? t : "", n);
			text_len += n;
			r->text[text_len] = '\0';
		} else if (type && strcmp(type, "tool_use") == 0) {
			const char *id =
				cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "id"));
			const char *name =
				cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "name"));
			const cJSON *input = cJSON_GetObjectItemCaseSensitive(b, "input");
			llm_call *call = &r->calls[r->n_calls];

			if (!id || !name) {
				snprintf(why, why_len, "tool_use block without id or name");
				return -1;
			}
			r->n_calls++;
			call->id = strdup(id);
			call->name = strdup(name);
			if (cJSON_IsObject(input))
				call->args = cJSON_Duplicate(input, 1);
			else
				call->bad_args = strdup("the input is not a JSON object");
		}
	}
	return 0;
}

static void add_assistant(cJSON *messages, const cJSON *body)
{
	llm_add_message(messages, "assistant",
			llm_compact(cJSON_GetObjectItemCaseSensitive(body, "content")));
}

static void add_results(cJSON *messages, const llm_reply *r, const llm_result *results)
{
	cJSON *blocks = cJSON_CreateArray();

	/* Every tool_result of a turn goes in one user message, in call order. */
	for (size_t i = 0; i < r->n_calls; i++) {
		cJSON *b = cJSON_CreateObject(), *content = cJSON_CreateArray(), *part;

		cJSON_AddStringToObject(b, "type", "tool_result");
		cJSON_AddStringToObject(b, "tool_use_id", r->calls[i].id);
		part = cJSON_CreateObject();
		cJSON_AddStringToObject(part, "type", "text");
		cJSON_AddStringToObject(part, "text",
					results[i].text && *results[i].text ? results[i].text
									    : "(no output)");
		cJSON_AddItemToArray(content, part);
		if (results[i].image_b64) {
			cJSON *src;

			part = cJSON_CreateObject();
			cJSON_AddStringToObject(part, "type", "image");
			src = cJSON_AddObjectToObject(part, "source");
			cJSON_AddStringToObject(src, "type", "base64");
			cJSON_AddStringToObject(src, "media_type", results[i].image_mime);
			cJSON_AddStringToObject(src, "data", results[i].image_b64);
			cJSON_AddItemToArray(content, part);
		}
		cJSON_AddItemToObject(b, "content", content);
		if (results[i].is_error)
			cJSON_AddTrueToObject(b, "is_error");
		cJSON_AddItemToArray(blocks, b);
	}
	llm_add_message(messages, "user", blocks);
}

const llm_api llm_anthropic = {
	.name = "anthropic",
	.path = "/messages",
	.key_env = "ANTHROPIC_API_KEY",
	.default_base = "https://api.anthropic.com/v1",
	.base_env = "ANTHROPIC_BASE_URL",
	.headers = headers,
	.tools = tools,
	.request = request,
	.parse = parse,
	.add_assistant = add_assistant,
	.add_results = add_results,
};
