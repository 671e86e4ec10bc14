/* SPDX-License-Identifier: MIT */
/*
 * The model agent's flags on `run` (and anything else that starts agents):
 * `--agent llm --model X --base-url U ...` becomes the agent string
 * `llm --model X --base-url U ...`, which lib/run hands to sandbox-llm-agent
 * word by word. So `sweep --agent 'llm --model X'` means the same thing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

char *cli_llm_extra;

static const cli_option llm_limits[] = {
	{"max-turns", .pass = &cli_llm_extra, .usage = "--max-turns N (50)"},
	{"max-output-tokens", .pass = &cli_llm_extra, .usage = "--max-output-tokens N"},
	{"max-total-tokens", .pass = &cli_llm_extra, .usage = "--max-total-tokens N"},
	{"temperature", .pass = &cli_llm_extra, .usage = "--temperature T"},
	{"model-seed", .pass = &cli_llm_extra, .usage = "--model-seed N"},
	{"system-prompt", .pass = &cli_llm_extra, .usage = "--system-prompt FILE"},
	{0},
};

const cli_option cli_llm_options[] = {
	{.usage = "--agent llm",
	 .help = "the built-in model agent: a tool loop with a model endpoint"},
	{"model", .pass = &cli_llm_extra, .usage = "--model NAME", .indent = 2,
	 .help = "the endpoint's model (required)"},
	{"api", .pass = &cli_llm_extra, .usage = "--api openai|anthropic", .indent = 2,
	 .help = "Chat Completions (default) or Messages"},
	{"base-url", .pass = &cli_llm_extra, .usage = "--base-url URL", .indent = 2,
	 .help = "default $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL, else the\n"
		 "provider's; --api-key-env VAR (default OPENAI_API_KEY /\n"
		 "ANTHROPIC_API_KEY; never logged)"},
	{"api-key-env", .pass = &cli_llm_extra},
	{.include = llm_limits,
	 .group = ", ",
	 .indent = 2,
	 .help = "each message once: runs/<run-id>/model.jsonl; a reply\n"
		 "over 4 MiB is refused, the conversation kept within\n"
		 "8 MiB (the oldest turns' tool output elided first)"},
	{0},
};

int cli_llm_agent(const char *agent, const char *extra, char **out)
{
	bool is_llm = agent && (strcmp(agent, "llm") == 0 || strncmp(agent, "llm ", 4) == 0);

	*out = NULL;
	if (!extra)
		return 0;
	if (!is_llm) {
		cli_error("--model, --base-url and the other model flags go with --agent llm");
		return -1;
	}
	if (asprintf(out, "%s%s", agent, extra) < 0) {
		cli_error("out of memory");
		return -1;
	}
	return 0;
}
