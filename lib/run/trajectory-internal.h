/* SPDX-License-Identifier: MIT */
/* trajectory.c and trajectory_transcript.c: what building trajectory.json shares. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "sbx/json.h"
#include "sbx/result.h"

typedef struct call {
	unsigned conn;
	cJSON *id; /* the JSON-RPC id; NULL for a REST call (paired by connection) */
	char *name;
	cJSON *args;
	double ms;    /* unix ms of the request */
	char *result; /* the observation's content; NULL while unanswered */
	bool used;    /* claimed by a model turn's tool call */
	bool cut;     /* the transcript kept only the request's head */
} call;

typedef struct traj {
	const sbx_trajectory_info *info;
	size_t content_max, budget, spent;
	call *calls;
	size_t n_calls, cap_calls;
	cJSON *steps_tmp; /* [ [sort key, step], ... ] until sorted */
	cJSON *methods;	  /* other MCP methods: name → count */
	char *client_name, *client_version;
	char *model; /* info->model, or agent-llm.json's */
	unsigned long clipped, omitted, skipped_lines, unreadable_lines;
	double prompt_tokens, completion_tokens, cached_tokens;
	unsigned turns_with_usage;
	bool model_log;
	double now_ms; /* when the trajectory is written */
} traj;

/* trajectory.c */
void sbx_run__traj_iso(double unix_ms, char out[64]);
double sbx_run__traj_in_run(const traj *t, double unix_ms);
/* s clipped to valid UTF-8 of at most max bytes, with a marker when cut (malloc'd). */
char *sbx_run__traj_clip(traj *t, const char *s, size_t len, size_t max);
cJSON *sbx_run__traj_string(traj *t, const char *s, size_t max);
cJSON *sbx_run__traj_args(traj *t, const cJSON *args);
/* Takes step; key orders the steps (unix ms; < 0: last). */
void sbx_run__traj_add_step(traj *t, double key, cJSON *step);

/* trajectory_transcript.c: one transcript.jsonl line into t->calls. */
void sbx_run__traj_transcript_line(traj *t, cJSON *o);
