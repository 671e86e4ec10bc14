/* SPDX-License-Identifier: MIT */
/*
 * What the test-server files share: their includes, the server in a scratch
 * workspace with cash_flows.ods (test_server.c), the calls through
 * mcp_handle_text, and each file's tests.
 */
#pragma once

#include "check_main.h"
#include "test_files.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "output_capture.h"
#include "resources.h"
#include "tool_schema.h"
#include "server.h"
#include "task_session.h"
#include "wbcache.h"

/* The server under test, its session, its workspace and its status file. */
extern server srv;
extern mcp_session session;
extern char ws[64];
extern char status_path[128];

/* The fixture with a task timeout in seconds (0: none). */
void setup_timeout(double task_timeout);

/* Sends one message; returns the parsed response (NULL for none). */
cJSON *rpc(const char *text);
int error_code(const cJSON *r);
/* Calls a tool; returns the CallToolResult (caller frees via the root in *root). */
const cJSON *call(const char *name, const char *args, cJSON **root);
bool is_error(const cJSON *res);
const char *error_text(const cJSON *res);
const cJSON *structured(const cJSON *res);

#define F "\"file_path\":\"cash_flows.ods\",\"sheet_name\":\"Sheet1\""

/* A call that must fail, and what its error text must contain. */
typedef struct error_case {
	const char *tool, *args, *error;
} error_case;

void check_errors(const error_case *cases, size_t n);

/* Each file's tests, added to the one case "core" in this order. */
void server_protocol_tests(TCase *tc); /* test_server_protocol.c */
void server_tool_tests(TCase *tc);     /* test_server_tools.c */
void server_session_tests(TCase *tc);  /* test_server_session.c */
