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

const char *const cli_llm_options[] = {
	"model=",
	"base-url=",
	"api=",
	"api-key-env=",
	"max-turns=",
	"max-output-tokens=",
	"max-total-tokens=",
	"temperature=",
	"model-seed=",
	"system-prompt=",
	NULL,
};

bool cli_llm_is_option(const char *name)
{
	return cli_name_in(name, cli_llm_options);
}

int cli_llm_add_option(char **extra, const char *name, const char *value)
{
	char *n;

	if (!*value || strpbrk(value, " \t\n'\"")) {
		cli_error("--%s: '%s' must be one word (no spaces or quotes)", name, value);
		return -1;
	}
	if (asprintf(&n, "%s --%s %s", *extra ? *extra : "", name, value) < 0) {
		cli_error("out of memory");
		return -1;
	}
	free(*extra);
	*extra = n;
	return 0;
}

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
