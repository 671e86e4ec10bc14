/* SPDX-License-Identifier: MIT */
/*
 * sandbox-mcp: the MCP server inside the sandbox container. It serves one
 * workspace over stdio, or over HTTP (Streamable HTTP /mcp, legacy SSE
 * /mcp/sse, REST) on a loopback port or a unix socket.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbx-config.h"
#include "server.h"
#include "task_session.h"

static const char *arg_workspace;
static const char *arg_http;
static const char *arg_unix;
static const char *arg_display;
static const char *arg_ready_file;
static const char *arg_status_file;
static double arg_task_timeout;
static bool arg_task_timeout_set;
static int arg_exec_timeout = 30;
static size_t arg_max_body = 16u << 20;
static unsigned arg_max_connections = 64;
static bool arg_stdio;
static bool arg_listen_any;

static void help(void)
{
	printf("Usage: sandbox-mcp --workspace DIR [--stdio | --http ADDR:PORT | --unix PATH] "
	       "[OPTIONS]\n"
	       "\n"
	       "The MCP server inside a sandboxctl container: spreadsheet, code and task tools\n"
	       "on one workspace directory.\n"
	       "\n"
	       "Transports (default --stdio):\n"
	       "  --stdio                 newline-delimited JSON-RPC on stdin/stdout\n"
	       "  --http ADDR:PORT        HTTP on a loopback address, e.g. 127.0.0.1:8765\n"
	       "  --unix PATH             HTTP on a unix socket (the host reaches it through a\n"
	       "                          Docker exec relay); same endpoints as --http\n"
	       "                          (--unix with --http: both, /control on the socket only)\n"
	       "$SANDBOX_HTTP_TOKEN (16-64 URL-safe bytes, removed from the environment at\n"
	       "start): every --http request must carry it, as its first path segment\n"
	       "(/TOKEN/mcp) or as Authorization: Bearer TOKEN (401 otherwise), and\n"
	       "/control/... is refused there (403).\n"
	       "HTTP endpoints: POST/DELETE /mcp (Streamable HTTP), GET /mcp/sse + POST\n"
	       "/mcp/messages (legacy SSE), GET /health, GET /tools, POST /tools/call,\n"
	       "GET /resources, POST /task/start, GET /task/status, POST /task/complete\n"
	       "(the reference system's shapes), the same under /v1/ in ours.\n"
	       "Requests must carry Host localhost, 127.0.0.1 or [::1] (any port), or a\n"
	       "name given with --allowed-host; a present Origin must name one of them.\n"
	       "\n"
	       "Options:\n"
	       "  --workspace DIR         the task's files; every path is confined to it\n"
	       "  --display :N            X display for the computer-use tools\n"
	       "  --task-timeout SECONDS  task deadline, from task/start or the first tool\n"
	       "                          call (default: $SANDBOX_TASK_TIMEOUT, else the\n"
	       "                          time left until $SANDBOX_TASK_DEADLINE, unix\n"
	       "                          seconds, which sandboxctl sets; else none)\n"
	       "  --exec-timeout SECONDS  default execute_python/execute_shell timeout (30)\n"
	       "  --exec-memory-mb MB     address-space limit of code children (default 2048)\n"
	       "  --exec-max-processes N  process limit for the code's user (RLIMIT_NPROC,\n"
	       "                          default: $SANDBOX_EXEC_MAX_PROCESSES, else 256;\n"
	       "                          not enforced when running as root)\n"
	       "  --status-file PATH      JSON task state, written atomically when the task\n"
	       "                          completes or times out\n"
	       "  --ready-file PATH       written atomically once the server accepts requests:\n"
	       "                          its URL (http://127.0.0.1:PORT, unix:PATH) or\n"
	       "                          \"stdio PID\"; stderr also gets a line with \"ready\"\n"
	       "  --allowed-host HOST     accept this Host/Origin name too (repeatable)\n"
	       "  --listen-any            allow a non-loopback --http address (for Docker port\n"
	       "                          publishing; the container must have no egress);\n"
	       "                          needs $SANDBOX_HTTP_TOKEN\n"
	       "  --max-body BYTES        largest HTTP request body (default 16 MiB)\n"
	       "  --max-connections N     concurrent HTTP connections (default 64)\n"
	       "  -h, --help              this text\n"
	       "  --version               the version\n"
	       "\n"
	       "$SANDBOX_TOOLSET=gui (set by sandboxctl for a task with 'tools: gui') offers\n"
	       "only the computer-use tools, get_task_status, complete_task and the tools\n"
	       "that only read; any other name but 'all' is refused at start.\n"
	       "\n"
	       "Exit status: 0 after a clean shutdown (EOF on stdio, SIGTERM), 2 on a usage\n"
	       "error, 1 when the server cannot start.\n");
}

enum {
	OPT_WORKSPACE = 0x100,
	OPT_STDIO,
	OPT_HTTP,
	OPT_UNIX,
	OPT_DISPLAY,
	OPT_TASK_TIMEOUT,
	OPT_EXEC_TIMEOUT,
	OPT_STATUS_FILE,
	OPT_READY_FILE,
	OPT_ALLOWED_HOST,
	OPT_MAX_BODY,
	OPT_MAX_CONNECTIONS,
	OPT_LISTEN_ANY,
	OPT_EXEC_MEMORY,
	OPT_EXEC_PROCESSES,
	OPT_VERSION,
};

static int parse_number(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max)) /* NaN is in no range */
		return -EINVAL;
	*out = v;
	return 0;
}

/* The options that take a number in a range, and where each one goes. */
typedef struct number_option {
	int id;
	const char *name;
	double min, max;
	const char *expected; /* the range, as the error message puts it */
	int *as_int;
	unsigned *as_unsigned;
	size_t *as_size;
} number_option;

static const number_option number_options[] = {
	{OPT_EXEC_TIMEOUT, "--exec-timeout", 1, 1200, "1..1200", .as_int = &arg_exec_timeout},
	{OPT_MAX_BODY, "--max-body", 1024, 1u << 30, "1024..1GiB", .as_size = &arg_max_body},
	{OPT_MAX_CONNECTIONS, "--max-connections", 1, 4096, "1..4096",
	 .as_unsigned = &arg_max_connections},
	{OPT_EXEC_MEMORY, "--exec-memory-mb", 64, 1 << 20, "64..1048576",
	 .as_unsigned = &exec_default_limits.memory_mb},
	{OPT_EXEC_PROCESSES, "--exec-max-processes", 1, 65536, "1..65536",
	 .as_unsigned = &exec_default_limits.max_processes},
};

/*
 * Stores optarg for the numeric option id. Returns 0, -EINVAL after saying on
 * stderr what it expects, or -ENOENT when id is not a numeric option.
 */
static int set_number_option(int id)
{
	for (size_t i = 0; i < SBX_ELEMENTSOF(number_options); i++) {
		const number_option *o = &number_options[i];
		double v;

		if (o->id != id)
			continue;
		if (parse_number(optarg, o->min, o->max, &v) < 0) {
			fprintf(stderr, "sandbox-mcp: %s: expected %s\n", o->name, o->expected);
			return -EINVAL;
		}
		if (o->as_int)
			*o->as_int = (int)v;
		else if (o->as_unsigned)
			*o->as_unsigned = (unsigned)v;
		else
			*o->as_size = (size_t)v;
		return 0;
	}
	return -ENOENT;
}

static int parse_args(int argc, char **argv, char ***hosts, size_t *n_hosts)
{
	static const struct option opts[] = {
		{"workspace", required_argument, NULL, OPT_WORKSPACE},
		{"stdio", no_argument, NULL, OPT_STDIO},
		{"http", required_argument, NULL, OPT_HTTP},
		{"unix", required_argument, NULL, OPT_UNIX},
		{"display", required_argument, NULL, OPT_DISPLAY},
		{"task-timeout", required_argument, NULL, OPT_TASK_TIMEOUT},
		{"exec-timeout", required_argument, NULL, OPT_EXEC_TIMEOUT},
		{"status-file", required_argument, NULL, OPT_STATUS_FILE},
		{"ready-file", required_argument, NULL, OPT_READY_FILE},
		{"allowed-host", required_argument, NULL, OPT_ALLOWED_HOST},
		{"max-body", required_argument, NULL, OPT_MAX_BODY},
		{"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
		{"listen-any", no_argument, NULL, OPT_LISTEN_ANY},
		{"exec-memory-mb", required_argument, NULL, OPT_EXEC_MEMORY},
		{"exec-max-processes", required_argument, NULL, OPT_EXEC_PROCESSES},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{0},
	};
	int c, transports = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) >= 0) {
		switch (c) {
		case OPT_WORKSPACE:
			arg_workspace = optarg;
			break;
		case OPT_STDIO:
			arg_stdio = true;
			transports++;
			break;
		case OPT_HTTP:
			arg_http = optarg;
			transports++;
			break;
		case OPT_UNIX:
			arg_unix = optarg;
			transports++;
			break;
		case OPT_DISPLAY:
			arg_display = optarg;
			break;
		case OPT_TASK_TIMEOUT:
			arg_task_timeout_set = true;
			if (parse_number(optarg, 0, 86400 * 7, &arg_task_timeout) < 0) {
				fprintf(stderr,
					"sandbox-mcp: --task-timeout: '%s' is not a "
					"number of seconds\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_STATUS_FILE:
			arg_status_file = optarg;
			break;
		case OPT_READY_FILE:
			arg_ready_file = optarg;
			break;
		case OPT_ALLOWED_HOST: {
			char **grown = realloc(*hosts, (*n_hosts + 1) * sizeof(char *));
			if (!grown)
				return -ENOMEM;
			*hosts = grown;
			(*hosts)[(*n_hosts)++] = optarg;
			break;
		}
		case OPT_LISTEN_ANY:
			arg_listen_any = true;
			break;
		case 'h':
			help();
			return 1;
		case OPT_VERSION:
			printf("sandbox-mcp %s\n", SBX_VERSION);
			return 1;
		default:
			/* The numeric options; anything else is unknown. */
			if (set_number_option(c) < 0)
				return -EINVAL;
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sandbox-mcp: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!arg_workspace) {
		fprintf(stderr, "sandbox-mcp: --workspace DIR is required (see --help)\n");
		return -EINVAL;
	}
	/* --unix with --http: the host's socket and a published port (sandboxctl's
	 * --network published). */
	if (transports > 1 && !(transports == 2 && arg_http && arg_unix)) {
		fprintf(stderr, "sandbox-mcp: choose one of --stdio, --http, --unix "
				"(or --unix with --http)\n");
		return -EINVAL;
	}
	if (transports == 0)
		arg_stdio = true;
	return 0;
}

/*
 * $SANDBOX_HTTP_TOKEN: the run's token, required on every --http request.
 * Taken out of the environment before anything starts, so code the tools
 * run (which inherits the server's environment) never sees it. NULL: none;
 * -EINVAL when set but not 16-64 URL-safe bytes, or missing with --listen-any.
 */
static int take_http_token(char **out)
{
	const char *v = getenv("SANDBOX_HTTP_TOKEN");
	size_t n = v ? strlen(v) : 0;

	*out = NULL;
	if (v &&
	    (n < 16 || n > 64 ||
	     strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != n)) {
		fprintf(stderr, "sandbox-mcp: $SANDBOX_HTTP_TOKEN: expected 16-64 URL-safe "
				"bytes\n");
		return -EINVAL;
	}
	if (!v && arg_listen_any) {
		fprintf(stderr, "sandbox-mcp: --listen-any needs $SANDBOX_HTTP_TOKEN: a port "
				"others can reach must not serve without one\n");
		return -EINVAL;
	}
	if (v) {
		*out = strdup(v);
		if (!*out)
			return -ENOMEM;
		/* unsetenv only drops the pointer: /proc/self/environ would still show the bytes.
		 */
		explicit_bzero((char *)v, n);
		unsetenv("SANDBOX_HTTP_TOKEN");
	}
	return 0;
}

static void write_ready_file(void)
{
	sbx_error err = SBX_ERROR_INIT;
	char text[64];

	snprintf(text, sizeof(text), "stdio %ld\n", (long)getpid());
	if (arg_ready_file && sbx_path_write_atomic(arg_ready_file, text, strlen(text), &err) < 0)
		server_log(SBX_LOG_WARNING, "ready file: %s", sbx_error_message(&err));
}

/*
 * The deadline sandboxctl gives the task, from the container's environment,
 * so get_task_status reports it without a --task-timeout in the image's
 * command line. A bad value is logged and ignored: the host enforces it anyway.
 */
static double task_deadline_from_env(void)
{
	const char *timeout = getenv("SANDBOX_TASK_TIMEOUT"), *deadline;
	double v;

	if (!arg_task_timeout_set && timeout && *timeout) {
		if (parse_number(timeout, 0, 86400 * 7, &v) == 0)
			arg_task_timeout = v;
		else
			server_log(SBX_LOG_WARNING,
				   "SANDBOX_TASK_TIMEOUT='%s': not seconds; ignored", timeout);
	}
	deadline = getenv("SANDBOX_TASK_DEADLINE");
	if (arg_task_timeout_set || arg_task_timeout > 0 || !deadline || !*deadline)
		return 0;
	if (parse_number(deadline, 0, 1e11, &v) == 0)
		return v; /* 0: none */
	server_log(SBX_LOG_WARNING, "SANDBOX_TASK_DEADLINE='%s': not a unix time; ignored",
		   deadline);
	return 0;
}

/*
 * $SANDBOX_EXEC_MAX_PROCESSES: the default of --exec-max-processes, which
 * sandboxctl sets under gVisor, where the engine's pids limit counts the
 * Sentry's host tasks and this limit is what stops a fork bomb inside. A bad
 * value is refused: it is a security limit.
 */
static int exec_limits_from_env(void)
{
	const char *s = getenv("SANDBOX_EXEC_MAX_PROCESSES");
	double v;

	if (!s)
		return 0;
	if (parse_number(s, 1, 65536, &v) < 0) {
		fprintf(stderr, "sandbox-mcp: SANDBOX_EXEC_MAX_PROCESSES='%s': expected 1..65536\n",
			s);
		return -EINVAL;
	}
	exec_default_limits.max_processes = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	double deadline;
	sbx_error err = SBX_ERROR_INIT;
	char **hosts = NULL;
	_cleanup_free_ char *token = NULL;
	size_t n_hosts = 0;
	sigset_t mask;
	server srv;
	int r;

	r = exec_limits_from_env();
	if (r == 0)
		r = parse_args(argc, argv, &hosts, &n_hosts);
	if (r == 0) {
		exec_limits_fit_memory();
		r = take_http_token(&token);
	}
	if (r != 0) {
		free(hosts);
		return r > 0 ? 0 : 2;
	}
	signal(SIGPIPE, SIG_IGN);
	/* Before any thread starts: only the transports' signal waiters take these. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	deadline = task_deadline_from_env();
	r = server_init(&srv, arg_workspace, arg_display, arg_task_timeout, arg_status_file, &err);
	if (r < 0) {
		server_log(SBX_LOG_ERROR, "%s", sbx_error_message(&err));
		free(hosts);
		return 1;
	}
	r = server_restrict_tools(&srv, getenv("SANDBOX_TOOLSET"), &err);
	if (r < 0) {
		server_log(SBX_LOG_ERROR, "SANDBOX_TOOLSET: %s", sbx_error_message(&err));
		server_done(&srv);
		free(hosts);
		return 1;
	}
	if (deadline > 0)
		task_session_set_deadline(srv.base.task, deadline);
	srv.allowed_hosts = hosts;
	srv.n_allowed_hosts = n_hosts;
	srv.exec_timeout_default = arg_exec_timeout;
	if (geteuid() == 0)
		server_log(SBX_LOG_WARNING,
			   "running as root: execute_python's process limit "
			   "(RLIMIT_NPROC) does not apply; run as the sandbox user");
	if (arg_stdio) {
		write_ready_file();
		server_log(SBX_LOG_INFO, "ready (stdio, workspace '%s', %zu tools)",
			   srv.base.workspace, srv.n_tools);
		r = stdio_serve(&srv, STDIN_FILENO, STDOUT_FILENO);
	} else {
		http_options opt = {
			.listen = arg_http,
			.unix_path = arg_unix,
			.ready_file = arg_ready_file,
			.listen_any = arg_listen_any,
			.token = token,
			.max_body = arg_max_body,
			.max_connections = arg_max_connections,
		};
		r = http_serve(&srv, &opt, &err);
		if (r < 0)
			server_log(SBX_LOG_ERROR, "%s", sbx_error_message(&err));
	}
	server_done(&srv);
	free(hosts);
	return r < 0 ? 1 : 0;
}
