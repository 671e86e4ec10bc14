/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The run's transcript.jsonl: one JSON object per line for every message
 * that passes the relay, in both directions, with wall-clock and run-relative
 * timestamps. Bodies that parse as JSON are stored as JSON, others as text
 * (capped). Thread-safe. Internal to lib/run.
 */

#include <stddef.h>

#include "sbx/error.h"

typedef struct sbx_transcript sbx_transcript;

/* Bodies larger than this are stored truncated, as text. */
#define SBX_TRANSCRIPT_BODY_MAX (1024 * 1024)
/* Past this size the transcript ends with a {"truncated":true} line; the run goes on. */
#define SBX_TRANSCRIPT_FILE_MAX (512LL * 1024 * 1024)

int sbx_transcript_open(sbx_transcript **out, const char *path, sbx_error *err);

/*
 * Appends one line: {"ts","t_ms","conn","dir","method","path","status",
 * "message"|"body"}. dir is "agent->server" or "server->agent"; status 0
 * for requests. body may be NULL (an empty body is not recorded). Errors
 * writing the file are remembered and reported by sbx_transcript_close.
 */
void sbx_transcript_record(sbx_transcript *t, unsigned conn, const char *dir, const char *method,
			   const char *path, int status, const char *body, size_t len);

/*
 * The same for an MCP exchange, with "mcp_version": the protocol revision the
 * message says it speaks (the 2026-07-28 envelope in params._meta, an
 * initialize request's or result's protocolVersion), else version (the
 * request's MCP-Protocol-Version header, which its answer shares; may be NULL).
 */
void sbx_transcript_record_mcp(sbx_transcript *t, unsigned conn, const char *dir,
			       const char *method, const char *path, int status,
			       const char *version, const char *body, size_t len);

/* The number of lines written so far. */
unsigned long sbx_transcript_count(sbx_transcript *t);

/* Flushes, closes and frees. Returns the first write error. Accepts NULL. */
int sbx_transcript_close(sbx_transcript *t);
