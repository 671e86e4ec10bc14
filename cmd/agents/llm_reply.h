/* SPDX-License-Identifier: MIT */
/*
 * A provider's reply as it comes, within bounds. The agent never asks for a
 * stream, so a reply is one JSON body: refused while it comes when it is over
 * LLM_REPLY_MAX bytes (said or not), an event stream, or still coming
 * LLM_REPLY_SECONDS after its JSON began; refused before parsing when it
 * holds over LLM_REPLY_VALUES values (each costs ~80 bytes parsed).
 */
#pragma once

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stddef.h>

#include "mcp_client.h"

#define LLM_REPLY_MAX	  (4L << 20)
#define LLM_REPLY_VALUES  262144
#define LLM_REPLY_SECONDS 30

/* Why a reply was cut off while it came (none: it was not). */
typedef enum llm_refusal {
	LLM_REFUSED_NONE,
	LLM_REFUSED_SIZE,
	LLM_REFUSED_STREAM,
	LLM_REFUSED_SLOW,
} llm_refusal;

typedef struct llm_body {
	agent_body b;	   /* first: the write callback's view; the caller frees b.data */
	long retry_after;  /* seconds, -1 when absent */
	long long length;  /* Content-Length, -1 when absent */
	double json_began; /* CLOCK_MONOTONIC when its first byte that is not white space came */
	size_t received;   /* bytes, kept or not */
	llm_refusal refused;
} llm_body;

/* Empties b and points curl's body, header and progress callbacks at it. */
void llm_body_init(llm_body *b, CURL *curl);

/* Why b was refused while it came, naming url, in why. */
void llm_body_refusal(const llm_body *b, const char *url, char *why, size_t why_len);

/* b's JSON (the caller owns it), or NULL and why: over LLM_REPLY_VALUES, or not JSON. */
cJSON *llm_body_parse(const llm_body *b, const char *url, char *why, size_t why_len);
