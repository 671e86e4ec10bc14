/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * sandbox-mcp internals shared by the transports and the tools.
 *
 * One `server` holds the dispatch table, the workspace and the task session;
 * every transport (stdio, Streamable HTTP, legacy SSE, REST) calls
 * server_call_tool() / mcp_handle() on it, so all of them see the same state.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>

#include "sbx/util.h"
#include "tool.h"

#define SERVER_NAME "sandbox-mcp"

typedef struct task_session task_session;
typedef struct server server;

/*
 * What a tool handler sees. The gui tools read `display`; spreadsheet and
 * file tools resolve every path beneath `workspace_fd`.
 */
struct tool_context {
	int workspace_fd;      /* O_PATH|O_DIRECTORY fd of the workspace */
	const char *workspace; /* its absolute path */
	const char *display;   /* X display name such as ":99", NULL when none */
	task_session *task;    /* the task session (deadline, modified files) */
	server *srv;

	/* Per call. cancelled becomes true when the client cancels the request. */
	const atomic_bool *cancelled;
	/* Reports progress when the client asked for it; may be NULL. */
	void (*progress)(void *payload, double progress, double total, const char *message);
	void *progress_payload;
};

struct server {
	tool_context base;
	const tool_def **tools; /* the dispatch table, sorted by nothing: order of listing */
	cJSON **input_schemas;	/* parsed inputSchema per tool */
	bool *unlisted; /* per tool: callable, but not listed (GUI tools without a display) */
	size_t n_tools;

	char **allowed_hosts; /* extra Host/Origin names accepted over HTTP */
	size_t n_allowed_hosts;
	int exec_timeout_default; /* seconds */

	pthread_mutex_t inflight_lock;
	struct inflight *inflight; /* running requests, for notifications/cancelled */

	/* State of the tools and transports: one per server, nothing in file statics. */
	struct wb_cache *wbcache;	/* parsed workbooks (wbcache.h) */
	struct sse_registry *streams;	/* open SSE streams (sse.h) */
	struct http_sessions *sessions; /* Streamable HTTP and legacy SSE sessions */
	atomic_int http_workers;	/* running HTTP tool-call threads (http_mcp.c) */
	int init_fd; /* SANDBOX_INIT_FD: reset orders to PID 1 (a reused sandbox), else -1 */
};

/* Sets up the server on a workspace directory; returns 0 or a negative errno. */
int server_init(server *srv, const char *workspace, const char *display, double task_timeout,
		const char *status_file, sbx_error *err);
void server_done(server *srv);

/*
 * Narrows the table to a tool set: NULL, "" or "all" keeps every tool; "gui"
 * keeps only the computer-use tools, get_task_status/complete_task and the
 * tools that only read (no cell writing, no execute_*), for a task that must
 * be done on the desktop. The others are gone: not listed, and a call is
 * answered as for an unknown tool. -EINVAL for another name.
 */
int server_restrict_tools(server *srv, const char *toolset, sbx_error *err);

/* Looks a tool up by name; NULL when unknown. */
const tool_def *server_find_tool(const server *srv, const char *name, size_t *index_out);

/*
 * Runs one tool call the same way for every transport: looks the tool up
 * (-ENOENT when unknown, out untouched), checks the task deadline, validates
 * the arguments against the tool's inputSchema, then runs the handler.
 * Every other outcome is reported in out (error_kind != TOOL_OK on failure)
 * and returns 0. args may be NULL (no arguments).
 */
int server_call_tool(server *srv, const char *name, const cJSON *args, tool_context *ctx,
		     tool_result *out);

/*
 * Whether a tool appears in tools/list and GET /tools. The computer-use tools
 * do only when the server has a display; called anyway they say "No display
 * available", so a client that knows them still gets a clear answer.
 */
bool server_tool_listed(const server *srv, size_t index);

/* The tools/list entry for one tool (a new object, caller owns). */
cJSON *server_tool_json(const server *srv, size_t index);

/*
 * The reference's GET /tools entry: {name, description, parameters:[{name,
 * type, description, required}]} (a new object, caller owns).
 */
cJSON *server_tool_json_reference(const server *srv, size_t index);

/* ---- MCP sessions and the JSON-RPC handler (rpc.c) ---- */

typedef struct mcp_session {
	char id[40];		   /* Mcp-Session-Id or legacy SSE session id; "" for stdio */
	char protocol_version[16]; /* negotiated at initialize, or the request's (2026-07-28) */
	atomic_int log_level;	   /* notifications/message at or above this (syslog scale) */
	atomic_bool initialized;
	/* 2026-07-28: this session serves one request at that revision (rpc_modern.c). */
	bool modern;
	/* Whose notifications/cancelled reach this request's calls: a stdio
	 * connection's per-request sessions name the connection. NULL: itself. */
	const struct mcp_session *owner;
	atomic_int era; /* a stream connection's protocol era, MCP_ERA_* (stdio) */
} mcp_session;

#define MCP_MODERN_VERSION "2026-07-28"

enum { MCP_ERA_UNDECIDED, MCP_ERA_LEGACY, MCP_ERA_MODERN };

void mcp_session_init(mcp_session *s);

/* Where a request's notifications (progress, log messages) go. */
typedef struct rpc_sink {
	void (*send)(void *payload, const char *json);
	void *payload;
} rpc_sink;

/*
 * Handles one parsed JSON-RPC message. For a request, *out is the response
 * (malloc'd one-line JSON); for a notification or a response, *out is NULL.
 * sink may be NULL (notifications are dropped). Returns 0, or -ENOMEM.
 */
int mcp_handle(server *srv, mcp_session *s, const cJSON *msg, const rpc_sink *sink, char **out);

/*
 * Parses text and handles it; a parse error yields a -32700 response.
 * The same contract as mcp_handle otherwise.
 */
int mcp_handle_text(server *srv, mcp_session *s, const char *text, size_t len, const rpc_sink *sink,
		    char **out);

/* A JSON-RPC error response (malloc'd) for id (NULL → null id). */
char *mcp_error_response(const cJSON *id, int code, const char *message);

/* The same with error.data (taken, may be NULL). */
char *mcp_error_response_data(const cJSON *id, int code, const char *message, cJSON *data);

/* ---- 2026-07-28, the stateless revision (rpc_modern.c) ---- */

/* The routing headers of an HTTP request (NULL when absent); duplicated names one sent twice. */
typedef struct mcp_route_headers {
	const char *version; /* MCP-Protocol-Version */
	const char *method;  /* Mcp-Method */
	const char *name;    /* Mcp-Name */
	const char *duplicated;
} mcp_route_headers;

/* True when msg's params._meta carries the 2026-07-28 envelope's protocol version key. */
bool mcp_has_envelope(const cJSON *msg);

/*
 * Checks a 2026-07-28 request's envelope (params._meta protocol version and
 * client capabilities) and, over HTTP (h not NULL), that the routing headers
 * agree with the body; then sets s (initialised by the caller) up to serve it.
 * Returns 0 when the request may go to mcp_handle with s; else the JSON-RPC
 * error code, with the error response (malloc'd) in *out.
 */
int mcp_modern_accept(const cJSON *msg, const mcp_route_headers *h, mcp_session *s, char **out);

/* The HTTP status for a response at 2026-07-28: 400/404 for the revision's errors, else 200. */
unsigned mcp_modern_http_status(const char *response);

/*
 * A stream connection (stdio) in the era its first request opens: a request
 * carrying the 2026-07-28 envelope (not initialize) opens a modern one, where
 * each request is checked and served at its own version and initialize gets
 * -32022; anything else a legacy one, where an enveloped request gets -32600.
 * mcp_stream_decide must see each message first, on the reading thread.
 */
void mcp_stream_decide(mcp_session *s, const cJSON *msg);
int mcp_handle_stream(server *srv, mcp_session *s, const cJSON *msg, const rpc_sink *sink,
		      char **out);

/* Marks every running tool call cancelled (shutdown). */
void server_cancel_all(server *srv);

/* True when msg is a request (has a method and an id). */
bool mcp_is_request(const cJSON *msg);

/* A log level's place on the syslog scale (0 emergency … 7 debug), or -EINVAL. */
int mcp_log_level(const char *name);

/* Whether the protocol version string is one we speak. */
bool mcp_version_supported(const char *version);

/* ---- transports ---- */

/* Serves newline-delimited JSON-RPC on in/out until EOF; returns 0 or a negative errno. */
int stdio_serve(server *srv, int in_fd, int out_fd);

typedef struct http_options {
	const char *listen;	/* "ADDR:PORT" or NULL */
	const char *unix_path;	/* unix socket path or NULL */
	const char *ready_file; /* written once listening, or NULL */
	bool listen_any;	/* allow a non-loopback --http address */
	const char *token;	/* required on every --http request; /control refused there */
	size_t max_body;	/* bytes */
	unsigned max_connections;
} http_options;

/* Serves HTTP until SIGTERM/SIGINT; returns 0 or a negative errno. */
int http_serve(server *srv, const http_options *opt, sbx_error *err);

/* ---- tool tables from the tool modules ---- */

const tool_def *file_tools(size_t *n_out);
const tool_def *exec_tools(size_t *n_out);
const tool_def *sheet_cell_tools(size_t *n_out);
const tool_def *sheet_book_tools(size_t *n_out);
const tool_def *recalc_tools(size_t *n_out);
const tool_def *task_tools(size_t *n_out);

/* Limits for execute_python / execute_shell children (exec.c). */
typedef struct exec_limits {
	unsigned memory_mb;	/* RLIMIT_AS */
	unsigned max_processes; /* RLIMIT_NPROC (not enforced for root) */
	unsigned max_file_mb;	/* RLIMIT_FSIZE */
} exec_limits;
extern exec_limits exec_default_limits;
/* Lowers exec_default_limits.memory_mb to 3/4 of /proc/meminfo's MemTotal. */
void exec_limits_fit_memory(void);

/*
 * Before a task completes: recalculates every modified .ods/.xlsx holding
 * formulas without computed values, so a value-based grader sees them:
 * natively, and with LibreOffice (when installed) for a book using what the
 * native evaluator does not compute. Appends the names done to
 * `recalculated`; summary (may be NULL) gets {method: native|libreoffice|
 * native+libreoffice|none, native: cells, libreoffice: cells, unsupported:
 * [reasons]}.
 */
void recalc_pending(tool_context *ctx, cJSON *recalculated, cJSON *summary);

/* Removes recalculate's LibreOffice profile (also registered with atexit). */
void recalc_cleanup(void);

/* Logging to stderr for the program (the library logs through sbx_log_set). */
void server_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
