/* SPDX-License-Identifier: MIT */
/* sandbox-llm-agent's options: the usage text, parsing, the base URL's check. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "llm.h"
#include "llm_agent.h"
#include "say.h"
#include "sbx/suggest.h"

void llm_agent_usage(FILE *to)
{
	fprintf(to,
		"Usage: sandbox-llm-agent --model NAME [options]\n"
		"The model agent of `sandboxctl run --agent llm`: a tool-calling loop between a\n"
		"model endpoint and the sandbox's MCP tools ($SANDBOX_MCP_URL).\n"
		"  --api openai|anthropic   protocol (default openai: Chat Completions)\n"
		"  --base-url URL           endpoint (default $OPENAI_BASE_URL or "
		"$ANTHROPIC_BASE_URL,\n"
		"                           else the provider's own)\n"
		"  --api-key-env VAR        the variable holding the key (default OPENAI_API_KEY "
		"or\n"
		"                           ANTHROPIC_API_KEY); the key is never logged\n"
		"  --max-turns N            model replies at most (default 50)\n"
		"  --max-output-tokens N    per reply (anthropic default 4096)\n"
		"  --max-total-tokens N     input + output over the episode\n"
		"  --temperature T, --model-seed N, --system-prompt FILE\n"
		"  --log FILE               model.jsonl, each message once (default\n"
		"                           $SANDBOX_RUN_DIR/model.jsonl)\n"
		"  --summary FILE           the summary JSON (default "
		"$SANDBOX_RUN_DIR/agent-llm.json)\n"
		"  --check                  check the options (model, api, base URL, system\n"
		"                           prompt) and exit: sandboxctl does before any sandbox\n"
		"Limits: a reply over 4 MiB or 262144 JSON values or 256 tool calls, an event\n"
		"stream, a body not ended 30 s after it began: refused (exit 3). A tool result\n"
		"is kept to 1 MiB, a turn's to 4 MiB; past 8 MiB of conversation the oldest\n"
		"turns' big pieces (tool output, text, arguments, images) become a note of\n"
		"their size, then whole turns go. Nothing listening at the base URL: 3 tries\n"
		"over 1.5 s. Peak RSS stays under 128 MiB.\n"
		"Exit: 0 the attempt ran, 3 the provider failed it, 2 usage.\n");
}

static int parse_long(const char *opt, const char *v, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(v, &end, 10);
	if (errno || end == v || *end || *out < 0) {
		say("%s: '%s' is not a whole number >= 0", opt, v);
		return -1;
	}
	return 0;
}

/* --model-seed and --temperature, the two options that are neither a text nor a count. */
static int parse_model_number(const char *name, const char *v, options *o)
{
	char *end;

	if (strcmp(name, "model-seed") == 0) {
		o->seed = strtoll(v, &end, 10);
		if (end == v || *end) {
			say("--model-seed: '%s' is not a whole number", v);
			return -1;
		}
		o->has_seed = true;
		return 0;
	}
	o->temperature = strtod(v, &end);
	if (end == v || *end || o->temperature < 0 || o->temperature > 2) {
		say("--temperature: '%s' is not a number from 0 to 2", v);
		return -1;
	}
	o->has_temperature = true;
	return 0;
}

int llm_agent_parse_args(int argc, char **argv, options *o)
{
	/* Each option's field: a text, or a count (whole number >= 0). */
	const struct {
		const char *name;
		const char **text;
		long *count;
	} fields[] = {
		{"model", .text = &o->model},
		{"base-url", .text = &o->base_url},
		{"api", .text = &o->api_name},
		{"api-key-env", .text = &o->key_env},
		{"max-turns", .count = &o->max_turns},
		{"max-output-tokens", .count = &o->max_output_tokens},
		{"max-total-tokens", .count = &o->max_total_tokens},
		{"temperature", NULL, NULL},
		{"model-seed", NULL, NULL},
		{"system-prompt", .text = &o->system_file},
		{"log", .text = &o->log_path},
		{"summary", .text = &o->summary_path},
	};
	enum { N = sizeof(fields) / sizeof(fields[0]) };
	struct option longs[N + 3];
	int c, idx;

	for (size_t i = 0; i < N; i++)
		longs[i] = (struct option){fields[i].name, required_argument, NULL, 256};
	longs[N] = (struct option){"help", no_argument, NULL, 'h'};
	longs[N + 1] = (struct option){"check", no_argument, NULL, 'c'};
	longs[N + 2] = (struct option){0};
	o->max_turns = 50;
	o->api_name = "openai";
	while ((c = getopt_long(argc, argv, "", longs, &idx)) != -1) {
		char opt[64];

		if (c == 'h') {
			llm_agent_usage(stdout);
			exit(0);
		}
		if (c == 'c') {
			o->check = true;
			continue;
		}
		if (c != 256)
			return -1;
		snprintf(opt, sizeof(opt), "--%s", fields[idx].name);
		if (fields[idx].text)
			*fields[idx].text = optarg;
		else if (fields[idx].count && parse_long(opt, optarg, fields[idx].count) < 0)
			return -1;
		else if (!fields[idx].count && parse_model_number(fields[idx].name, optarg, o) < 0)
			return -1;
	}
	if (optind < argc) {
		say("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (!o->model || !*o->model) {
		say("--model is required (the endpoint's model name, e.g. gpt-4o-mini)");
		return -1;
	}
	return 0;
}

/* The endpoint a base URL names: an http or https URL with a host; 0, or -1 said. */
int llm_agent_check_base_url(const char *base)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL;
	CURLUcode rc;
	int r = -1;

	if (!u)
		return -1;
	rc = curl_url_set(u, CURLUPART_URL, base, 0);
	if (rc != CURLUE_OK)
		say("--base-url '%s': not a URL (%s)", base, curl_url_strerror(rc));
	else if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
		 (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
		say("--base-url '%s': not an http or https URL", base);
	else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
		say("--base-url '%s': no host", base);
	else
		r = 0;
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return r;
}
