/* SPDX-License-Identifier: MIT */
/*
 * stdio transport: one JSON-RPC message per line on stdin, one per line on
 * stdout, nothing else on stdout. tools/call runs on a worker thread so the
 * reader can still see notifications/cancelled (and ping) meanwhile.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"
#include "sbx/file.h"

#define MAX_LINE    (64u << 20)
#define MAX_WORKERS 16

typedef struct stdio_state {
	server *srv;
	mcp_session session;
	int out_fd;
	pthread_mutex_t out_lock;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned workers;
	rpc_sink sink;
} stdio_state;

static void write_line(stdio_state *st, const char *json)
{
	size_t len = strlen(json);

	pthread_mutex_lock(&st->out_lock);
	/* A closed peer ends the session elsewhere (EOF on stdin); nothing to report here. */
	(void)sbx_write_all(st->out_fd, json, len);
	(void)sbx_write_all(st->out_fd, "\n", 1);
	pthread_mutex_unlock(&st->out_lock);
}

static void sink_send(void *payload, const char *json)
{
	write_line(payload, json);
}

struct job {
	stdio_state *st;
	cJSON *msg;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	stdio_state *st = j->st;
	char *out = NULL;

	if (mcp_handle_stream(st->srv, &st->session, j->msg, &st->sink, &out) == 0 && out)
		write_line(st, out);
	free(out);
	cJSON_Delete(j->msg);
	free(j);
	pthread_mutex_lock(&st->lock);
	st->workers--;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

static bool is_tool_call(const cJSON *msg)
{
	return mcp_is_request(msg) &&
	       strcmp(sbx_json_get_string(msg, "method", ""), "tools/call") == 0;
}

/* Runs a tools/call on a worker thread; false when it must run inline. */
static bool spawn(stdio_state *st, cJSON *msg)
{
	struct job *j = malloc(sizeof(*j));
	pthread_attr_t attr;
	pthread_t t;
	int r;

	if (!j)
		return false;
	j->st = st;
	j->msg = msg;
	pthread_mutex_lock(&st->lock);
	while (st->workers >= MAX_WORKERS)
		pthread_cond_wait(&st->cond, &st->lock);
	st->workers++;
	pthread_mutex_unlock(&st->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &attr, worker, j);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		pthread_mutex_lock(&st->lock);
		st->workers--;
		pthread_mutex_unlock(&st->lock);
		free(j);
		return false;
	}
	return true;
}

static void handle_line(stdio_state *st, const char *line, size_t len)
{
	sbx_error err = SBX_ERROR_INIT;
	cJSON *msg = NULL;
	char *out = NULL;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return;
	if (sbx_json_parse(line, len, &msg, &err) < 0) {
		char text[SBX_ERROR_MAX + 32];
		snprintf(text, sizeof(text), "Parse error: %s", sbx_error_message(&err));
		out = mcp_error_response(NULL, -32700, text);
	} else {
		/* The first request picks the era, before a worker could race the next line. */
		mcp_stream_decide(&st->session, msg);
		if (is_tool_call(msg) && spawn(st, msg))
			return;
		(void)mcp_handle_stream(st->srv, &st->session, msg, &st->sink, &out);
		cJSON_Delete(msg);
	}
	if (out)
		write_line(st, out);
	free(out);
}

/*
 * SIGTERM/SIGINT: cancel running tool calls (their code is killed with its
 * process group), give them two seconds to answer, then exit. At EOF, calls
 * already running finish first (a piped `... | sandbox-mcp` gets its answers).
 */
static void *signal_main(void *arg)
{
	stdio_state *st = arg;
	sigset_t mask;
	int sig = 0;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigwait(&mask, &sig) != 0)
		return NULL;
	server_log(SBX_LOG_INFO, "signal %d: shutting down", sig);
	server_cancel_all(st->srv);
	for (int i = 0; i < 200; i++) {
		unsigned busy;

		pthread_mutex_lock(&st->lock);
		busy = st->workers;
		pthread_mutex_unlock(&st->lock);
		if (!busy)
			break;
		usleep(10000);
	}
	recalc_cleanup();
	_exit(0);
}

int stdio_serve(server *srv, int in_fd, int out_fd)
{
	stdio_state st = {.srv = srv, .out_fd = out_fd};
	sbx_buf line = SBX_BUF_INIT(MAX_LINE);
	bool discarding = false;
	char chunk[65536];
	int r = 0;

	sigset_t mask;
	pthread_t sig_thread;

	mcp_session_init(&st.session);
	pthread_mutex_init(&st.out_lock, NULL);
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.cond, NULL);
	st.sink = (rpc_sink){sink_send, &st};
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	if (pthread_create(&sig_thread, NULL, signal_main, &st) == 0)
		pthread_detach(sig_thread);
	for (;;) {
		ssize_t n = read(in_fd, chunk, sizeof(chunk));
		const char *p = chunk, *end;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		end = chunk + n;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t take = nl ? (size_t)(nl - p) : (size_t)(end - p);

			if (!discarding && sbx_buf_append(&line, p, take) < 0) {
				char *out = mcp_error_response(NULL, -32700,
							       "Parse error: message too large");
				if (out)
					write_line(&st, out);
				free(out);
				discarding = true;
			}
			p += take;
			if (!nl)
				break;
			p++;
			if (!discarding)
				handle_line(&st, sbx_buf_str(&line), line.len);
			discarding = false;
			sbx_buf_reset(&line);
		}
	}
	if (!discarding && line.len > 0)
		handle_line(&st, sbx_buf_str(&line), line.len);
	sbx_buf_free(&line);
	pthread_mutex_lock(&st.lock);
	while (st.workers > 0)
		pthread_cond_wait(&st.cond, &st.lock);
	pthread_mutex_unlock(&st.lock);
	pthread_cond_destroy(&st.cond);
	pthread_mutex_destroy(&st.lock);
	pthread_mutex_destroy(&st.out_lock);
	return r;
}
