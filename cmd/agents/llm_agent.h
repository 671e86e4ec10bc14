/* SPDX-License-Identifier: MIT */
/*
 * sandbox-llm-agent's command line (llm_agent_options.c), shared with the
 * loop in llm_agent.c.
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>

typedef struct options {
	const char *model, *base_url, *api_name, *key_env, *system_file, *log_path, *summary_path,
		*mcp_url;
	long max_turns, max_output_tokens, max_total_tokens;
	double temperature;
	bool has_temperature, has_seed, check;
	long long seed;
} options;

/* The usage text, on to. */
void llm_agent_usage(FILE *to);
/* argv into *o: 0, or -1 on a usage error (said); --help prints the usage and exits 0. */
int llm_agent_parse_args(int argc, char **argv, options *o);
/* The endpoint a base URL names: an http or https URL with a host; 0, or -1 said. */
int llm_agent_check_base_url(const char *base);
