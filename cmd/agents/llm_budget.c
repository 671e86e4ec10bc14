/* SPDX-License-Identifier: MIT */
/*
 * What the model agent keeps of a conversation: a reply is held as its
 * printed JSON (one byte per byte, where a parsed tree costs ~40x), and once
 * the conversation passes its budget the oldest turns' big pieces (tool
 * output, the model's text and arguments, images) are replaced by a marker
 * saying how many bytes went, oldest first, never the task prompt or the
 * turn just taken.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

/* A string or argument object up to this size is kept whole: ids, names, short answers. */
#define ELIDE_MIN 1024

size_t llm_json_values(const char *s, size_t len)
{
	size_t n = 1;
	bool in_str = false;

	/* Every value but a container's first follows a ',', the first follows '[' or '{'. */
	for (size_t i = 0; i < len; i++) {
		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = false;
		} else if (s[i] == '"') {
			in_str = true;
		} else if (s[i] == ',' || s[i] == '[' || s[i] == '{') {
			n++;
		}
	}
	return n;
}

cJSON *llm_compact(const cJSON *v)
{
	char *text = cJSON_PrintUnformatted(v);
	cJSON *raw = text ? cJSON_CreateRaw(text) : cJSON_CreateNull();

	free(text);
	return raw;
}

size_t llm_cut(char **text, size_t max, const char *why)
{
	size_t len = *text ? strlen(*text) : 0, cut;
	char note[160], *t;

	if (len <= max)
		return len;
	snprintf(note, sizeof(note), "\n[%zu bytes cut by sandbox-llm-agent: %s]", len, why);
	cut = max > strlen(note) ? max - strlen(note) : 0;
	/* Never half a UTF-8 character: the provider would refuse the request. */
	while (cut > 0 && ((unsigned char)(*text)[cut] & 0xc0) == 0x80)
		cut--;
	snprintf(note, sizeof(note), "\n[%zu bytes cut by sandbox-llm-agent: %s]", len - cut, why);
	t = realloc(*text, cut + strlen(note) + 1);
	if (!t)
		return len;
	strcpy(t + cut, note);
	*text = t;
	return strlen(t);
}

static size_t printed_len(const cJSON *v)
{
	char *text = cJSON_PrintUnformatted(v);
	size_t n = text ? strlen(text) : 0;

	free(text);
	return n;
}

static void marker(char *out, size_t size, size_t bytes, size_t budget)
{
	snprintf(out, size,
		 "[%zu bytes elided by sandbox-llm-agent: the conversation is kept within %zu %s]",
		 bytes, budget >= (1 << 20) ? budget >> 20 : budget >> 10,
		 budget >= (1 << 20) ? "MiB" : "KiB");
}

static void shrink(cJSON *node, size_t budget);

/* Puts with where c was, under c's key if it had one; returns with. */
static cJSON *replace(cJSON *node, cJSON *c, cJSON *with)
{
	if (c->string)
		cJSON_ReplaceItemInObjectCaseSensitive(node, c->string, with);
	else
		cJSON_ReplaceItemViaPointer(node, c, with);
	return with;
}

/* A reply kept as printed JSON: parsed, shrunk and printed again. */
static void shrink_raw(cJSON *raw, size_t budget)
{
	cJSON *holder = cJSON_CreateArray(), *tree = cJSON_Parse(raw->valuestring);
	char *text;

	if (!holder || !tree) {
		cJSON_Delete(holder);
		cJSON_Delete(tree);
		return;
	}
	cJSON_AddItemToArray(holder, tree); /* so that a top-level string can be replaced */
	shrink(holder, budget);
	text = cJSON_PrintUnformatted(holder->child);
	if (text) {
		free(raw->valuestring);
		raw->valuestring = text;
	}
	cJSON_Delete(holder);
}

static void shrink(cJSON *node, size_t budget)
{
	char m[160];

	for (cJSON *c = node ? node->child : NULL; c; c = c->next) {
		const char *type =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
		size_t n;

		if (cJSON_IsRaw(c)) {
			shrink_raw(c, budget);
		} else if (cJSON_IsString(c) && (n = strlen(c->valuestring)) > ELIDE_MIN) {
			marker(m, sizeof(m), n, budget);
			if (c->string && strcmp(c->string, "arguments") == 0) {
				/* OpenAI's arguments are JSON text; they stay JSON. */
				cJSON *o = cJSON_CreateObject();
				char *text;

				cJSON_AddStringToObject(o, "elided", m);
				text = cJSON_PrintUnformatted(o);
				cJSON_Delete(o);
				if (text)
					cJSON_SetValuestring(c, text);
				free(text);
			} else {
				cJSON_SetValuestring(c, m);
			}
		} else if (cJSON_IsObject(c) && type &&
			   (strcmp(type, "image") == 0 || strcmp(type, "image_url") == 0)) {
			/* An image becomes a text part: both protocols take one where an image was.
			 */
			cJSON *text = cJSON_CreateObject();

			marker(m, sizeof(m), printed_len(c), budget);
			cJSON_AddStringToObject(text, "type", "text");
			cJSON_AddStringToObject(text, "text", m);
			c = replace(node, c, text);
		} else if (cJSON_IsObject(c) && c->string && strcmp(c->string, "input") == 0 &&
			   (n = printed_len(c)) > ELIDE_MIN) {
			/* Anthropic's tool_use arguments: an object, which must stay one. */
			cJSON *o = cJSON_CreateObject();

			marker(m, sizeof(m), n, budget);
			cJSON_AddStringToObject(o, "elided", m);
			c = replace(node, c, o);
		} else {
			shrink(c, budget);
		}
	}
}

static bool is_assistant(const cJSON *m)
{
	const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "role"));

	return role && strcmp(role, "assistant") == 0;
}

/*
 * Thousands of pieces under ELIDE_MIN each escape shrink(): then the oldest
 * turns go whole, from the second message on, each an assistant message with
 * the results that follow it, so what is left is still an exchange both
 * protocols accept (the prompt, then an assistant message).
 */
static size_t drop_turns(cJSON *messages, size_t keep_from, size_t budget, size_t total)
{
	while (total > budget && keep_from > 1 && messages && messages->child &&
	       messages->child->next) {
		cJSON *m = messages->child->next;
		size_t n = 0;

		do {
			cJSON *next = m->next;

			total -= printed_len(m);
			cJSON_Delete(cJSON_DetachItemViaPointer(messages, m));
			m = next;
			n++;
		} while (m && n + 1 < keep_from && !is_assistant(m));
		keep_from -= n;
	}
	return total;
}

size_t llm_trim(cJSON *messages, size_t keep_from, size_t budget)
{
	size_t total = 0, i = 0;

	for (const cJSON *m = messages ? messages->child : NULL; m; m = m->next)
		total += printed_len(m);
	/* The first message is the task's prompt: the model needs it whatever else goes. */
	for (cJSON *m = messages && messages->child ? messages->child->next : NULL;
	     m && total > budget && ++i < keep_from; m = m->next) {
		size_t before = printed_len(m);

		shrink(m, budget);
		total -= before - printed_len(m);
	}
	return drop_turns(messages, keep_from, budget, total);
}
