/* SPDX-License-Identifier: MIT */
/* OpenAI Chat Completions with tools: OpenAI, vLLM, llama.cpp, Ollama, OpenRouter. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

static struct curl_slist *headers(struct curl_slist *h, const char *key)
{
	char line[1024];

	if (key && *key) {
		snprintf(line, sizeof(line), "Authorization: Bearer %s", key);
		h = curl_slist_append(h, line);
	}
	return h;
}

static cJSON *tools(const cJSON *mcp_tools, char *why, size_t why_len)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *t;

	cJSON_ArrayForEach (t, mcp_tools) {
		const char *name, *desc;
		cJSON *fn, *item, *schema;

		if (llm_tool_parts(t, &name, &desc, &schema, why, why_len) < 0) {
			cJSON_Delete(out);
			return NULL;
		}
		item = cJSON_CreateObject();
		cJSON_AddStringToObject(item, "type", "function");
		fn = cJSON_AddObjectToObject(item, "function");
		cJSON_AddStringToObject(fn, "name", name);
		cJSON_AddStringToObject(fn, "description", desc);
		cJSON_AddItemToObject(fn, "parameters", schema);
		cJSON_AddItemToArray(out, item);
	}
	return out;
}

static cJSON *request(const char *model, const char *system, cJSON *messages, cJSON *tool_list,
		      long max_output_tokens, double temperature, bool has_temperature,
		      long long seed, bool has_seed)
{
	cJSON *b = cJSON_CreateObject(), *msgs = cJSON_CreateArray();

	cJSON_AddStringToObject(b, "model", model);
	llm_add_message(msgs, "system", cJSON_CreateString(system));
	/* References, not copies: the conversation grows every turn. */
	for (const cJSON *m = messages->child; m; m = m->next)
		cJSON_AddItemToArray(msgs, cJSON_CreateObjectReference(m->child));
	cJSON_AddItemToObject(b, "messages", msgs);
	if (cJSON_GetArraySize(tool_list) > 0)
		cJSON_AddItemReferenceToObject(b, "tools", tool_list);
	if (max_output_tokens > 0)
		cJSON_AddNumberToObject(b, "max_tokens", (double)max_output_tokens);
	if (has_temperature)
		cJSON_AddNumberToObject(b, "temperature", temperature);
	if (has_seed)
		cJSON_AddNumberToObject(b, "seed", (double)seed);
	return b;
}

static int parse(const cJSON *body, llm_reply *r, char *why, size_t why_len)
{
	const cJSON *choice =
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(body, "choices"), 0);
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(choice, "message");
	const cJSON *usage = cJSON_GetObjectItemCaseSensitive(body, "usage");
	const cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls"), *c;
	const char *content =
		cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "content"));
	const char *finish =
		cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(choice, "finish_reason"));

	if (!cJSON_IsObject(msg)) {
		snprintf(why, why_len, "reply has no choices[0].message");
		return -1;
	}
	if (calls && !cJSON_IsNull(calls) && !cJSON_IsArray(calls)) {
		snprintf(why, why_len, "choices[0].message.tool_calls is not a list");
		return -1;
	}
	r->text = content ? strdup(content) : NULL;
	r->stop = strdup(finish ? finish : "unknown");
	r->in_tokens = llm_count(usage, "prompt_tokens");
	r->out_tokens = llm_count(usage, "completion_tokens");
	r->cached_tokens = llm_count(
		cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens_details"), "cached_tokens");
	r->calls = calloc((size_t)cJSON_GetArraySize(calls) + 1, sizeof(*r->calls));
	if (!r->calls)
		return -1;
	cJSON_ArrayForEach (c, calls) {
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(c, "function");
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "id"));
		const char *name =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fn, "name"));
		const char *args =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(fn, "arguments"));
		llm_call *call = &r->calls[r->n_calls];

		if (!id || !name) {
			snprintf(why, why_len, "tool_calls[%zu] has no id or function.name",
				 r->n_calls);
			return -1;
		}
		r->n_calls++;
		call->id = strdup(id);
		call->name = strdup(name);
		call->args = args ? cJSON_Parse(args) : cJSON_CreateObject();
		if (!cJSON_IsObject(call->args)) {
			cJSON_Delete(call->args);
			call->args = NULL;
			call->bad_args = strdup("the arguments are not a JSON object");
		}
	}
	return 0;
}

static void add_assistant(cJSON *messages, const cJSON *body)
{
	const cJSON *choice =
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(body, "choices"), 0);
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(choice, "message");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
	const cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
	cJSON *m;

	/* Only the fields a request may carry back: role, content, tool_calls; as text. */
	m = llm_add_message(messages, "assistant",
			    cJSON_IsString(content) ? cJSON_Duplicate(content, 1)
			    : content		    ? llm_compact(content)
						    : cJSON_CreateNull());
	if (cJSON_GetArraySize(calls) > 0)
		cJSON_AddItemToObject(m, "tool_calls", llm_compact(calls));
}

static void add_results(cJSON *messages, const llm_reply *r, const llm_result *results)
{
	cJSON *images = NULL;

	for (size_t i = 0; i < r->n_calls; i++) {
		cJSON *m = cJSON_CreateObject();

		cJSON_AddStringToObject(m, "role", "tool");
		cJSON_AddStringToObject(m, "tool_call_id", r->calls[i].id);
		cJSON_AddStringToObject(m, "content", results[i].text ? results[i].text : "");
		cJSON_AddItemToArray(messages, m);
		if (results[i].image_b64) {
			/* Tool messages carry text only: images follow as one user message. */
			size_t n = strlen(results[i].image_b64) + 64;
			char *url = malloc(n);
			cJSON *part, *iu;

			if (!url)
				continue;
			if (!images) {
				images = cJSON_CreateArray();
				part = cJSON_CreateObject();
				cJSON_AddStringToObject(part, "type", "text");
				cJSON_AddStringToObject(part, "text",
							"Images returned by the tools above:");
				cJSON_AddItemToArray(images, part);
			}
			snprintf(url, n, "data:%s;base64,%s", results[i].image_mime,
				 results[i].image_b64);
			part = cJSON_CreateObject();
			cJSON_AddStringToObject(part, "type", "image_url");
			iu = cJSON_AddObjectToObject(part, "image_url");
			cJSON_AddStringToObject(iu, "url", url);
			cJSON_AddItemToArray(images, part);
			free(url);
		}
	}
	if (images)
		llm_add_message(messages, "user", images);
}

const llm_api llm_openai = {
	.name = "openai",
	.path = "/chat/completions",
	.key_env = "OPENAI_API_KEY",
	.default_base = "https://api.openai.com/v1",
	.base_env = "OPENAI_BASE_URL",
	.headers = headers,
	.tools = tools,
	.request = request,
	.parse = parse,
	.add_assistant = add_assistant,
	.add_results = add_results,
};
