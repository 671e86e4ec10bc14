/* SPDX-License-Identifier: MIT */
/*
 * The model agent (`sandboxctl run --agent llm`): a tool-calling loop between
 * a model endpoint (OpenAI Chat Completions or Anthropic Messages) and the
 * sandbox's MCP tools. The two protocols differ only in how a conversation,
 * tools and replies are spelled; each is an llm_api.
 */
#pragma once

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One tool call the model asked for. */
typedef struct llm_call {
	char *id;
	char *name;
	cJSON *args;	/* NULL when the model's arguments were not a JSON object */
	char *bad_args; /* why, when args is NULL */
} llm_call;

/* A reply, in the protocols' common terms. */
typedef struct llm_reply {
	llm_call *calls;
	size_t n_calls;
	char *text; /* what the model said, or NULL */
	char *stop; /* the provider's stop/finish reason */
	uint64_t in_tokens, out_tokens, cached_tokens;
} llm_reply;

/* A tool's answer, as the model will see it. */
typedef struct llm_result {
	char *text;	 /* every text block, joined */
	char *image_b64; /* the first image block (base64), or NULL */
	char *image_mime;
	bool is_error;
} llm_result;

typedef struct llm_api {
	const char *name;	  /* "openai" | "anthropic" */
	const char *path;	  /* appended to the base URL */
	const char *key_env;	  /* the usual variable holding the key */
	const char *default_base; /* when neither --base-url nor the variable is set */
	const char *base_env;	  /* the usual variable holding the base URL, or NULL */
	/* Adds the auth and version headers. */
	struct curl_slist *(*headers)(struct curl_slist *h, const char *key);
	/* MCP tools/list "tools" → the provider's tool list; NULL + why on a tool it cannot take.
	 */
	cJSON *(*tools)(const cJSON *mcp_tools, char *why, size_t why_len);
	/* The request body for the conversation so far (messages is the API's own array). */
	cJSON *(*request)(const char *model, const char *system, cJSON *messages, cJSON *tools,
			  long max_output_tokens, double temperature, bool has_temperature,
			  long long seed, bool has_seed);
	/* Reads a reply; -1 + why when it is not a well-formed reply. */
	int (*parse)(const cJSON *body, llm_reply *r, char *why, size_t why_len);
	/* Appends the model's turn (as it was sent) to messages. */
	void (*add_assistant)(cJSON *messages, const cJSON *body);
	/* Appends the answers to every call of r, in order. */
	void (*add_results)(cJSON *messages, const llm_reply *r, const llm_result *results);
} llm_api;

extern const llm_api llm_openai;
extern const llm_api llm_anthropic;

void llm_reply_clear(llm_reply *r);
void llm_result_clear(llm_result *r);

/*
 * Appends {"role": role, "content": content} to messages, which takes
 * content; returns the message, for a protocol's further fields.
 */
cJSON *llm_add_message(cJSON *messages, const char *role, cJSON *content);

/* A non-negative count from a usage object, 0 when absent. */
uint64_t llm_count(const cJSON *o, const char *key);

/* An MCP tool's name, description and argument schema (a copy the caller owns;
 * an empty object schema when it has none); -1 + why for a tool a provider
 * would refuse. */
int llm_tool_parts(const cJSON *t, const char **name, const char **desc, cJSON **schema, char *why,
		   size_t why_len);

/* A tool name every provider accepts: [A-Za-z0-9_-]{1,64}. */
bool llm_tool_name_ok(const char *name);

/*
 * The conversation's memory bound (llm_budget.c). An upper bound on the JSON
 * values in the len bytes at s (what parsing them would allocate), counted
 * without parsing.
 */
size_t llm_json_values(const char *s, size_t len);

/* v as one raw JSON node holding its printed text (the caller owns it): a
 * reply kept in the conversation costs its bytes, not a tree of nodes. */
cJSON *llm_compact(const cJSON *v);

/* Cuts *text (reallocated) to at most max bytes, ending in a note that says
 * how many bytes went and why; returns its length. */
size_t llm_cut(char **text, size_t max, const char *why);

/*
 * Once messages print to more than budget bytes, the big pieces (strings and
 * tool arguments over 1 KiB, images) of its messages from the second up to
 * keep_from (exclusive) become a marker naming their size, oldest first, until
 * it fits. When many small pieces still do not fit, the oldest turns go whole
 * (an assistant message and the results after it). Returns the printed size
 * left (over budget only when what must be kept is).
 */
size_t llm_trim(cJSON *messages, size_t keep_from, size_t budget);
