/* SPDX-License-Identifier: MIT */
/*
 * OpenEnv's HTTP side: under /<token>/openenv/<task> (the token already
 * checked by listen.c, so a wrong one never reaches an upgrade), /ws is a
 * WebSocket session (libmicrohttpd's upgrade, RFC 6455 framing by wslay),
 * /health, /metadata and /schema are plain JSON. A session is a thread on
 * a non-blocking socket; its memory is bounded: a message of at most
 * OPENENV_MSG_MAX (fragments included: wslay closes with 1009 past it),
 * and while OPENENV_QUEUE_MAX replies (or OPENENV_QUEUE_BYTES) wait unsent
 * nothing more is read, so a client that floods frames and never reads
 * stalls only itself. At most OPENENV_SESSIONS_MAX sessions; more get 503
 * before any upgrade.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <wslay/wslay.h>

#include "openenv.h"
#include "sbx/base64.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/json.h"
#include "sbx/task.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

typedef struct openenv_conn {
	struct openenv_conn *next;
	sbx_serve *s;
	int fd;
	struct MHD_UpgradeResponseHandle *urh;
	char *pre; /* bytes MHD read past the request */
	size_t pre_len, pre_off;
	openenv_session *os;
	int64_t last_ms;
} openenv_conn;

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status, char *text)
{
	return sbx_serve__send_text(c, status, text, "application/json");
}

/* A task's name as a path segment: what lib/task accepts, nothing that walks. */
static bool task_name_ok(const char *p, size_t n)
{
	if (n == 0 || n > SERVE_ID_MAX || p[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.",
			    p[i]))
			return false;
	return true;
}

/* The task is one the service serves (--tasks-dir): a name, resolved as a claim resolves it. */
static bool task_exists(sbx_serve *s, const char *name, size_t n)
{
	_cleanup_free_ char *t = strndup(name, n), *yaml = NULL;

	return t && sbx_task_resolve(s->o.tasks_dir, t, &yaml, NULL) == 0;
}

/* ---- the session's socket, for wslay ---- */

static bool backlogged(wslay_event_context_ptr ctx)
{
	return wslay_event_get_queued_msg_count(ctx) >= OPENENV_QUEUE_MAX ||
	       wslay_event_get_queued_msg_length(ctx) >= OPENENV_QUEUE_BYTES;
}

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user)
{
	openenv_conn *cn = user;
	ssize_t r;

	(void)flags;
	/* Replies pile up unread: read nothing more until they are sent. */
	if (backlogged(ctx)) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (cn->pre_off < cn->pre_len) {
		size_t n = cn->pre_len - cn->pre_off < len ? cn->pre_len - cn->pre_off : len;

		memcpy(buf, cn->pre + cn->pre_off, n);
		cn->pre_off += n;
		return (ssize_t)n;
	}
	r = recv(cn->fd, buf, len, 0);
	if (r > 0) {
		cn->last_ms = sbx_now_ms();
		return r;
	}
	wslay_event_set_error(ctx, r < 0 && (errno == EAGAIN || errno == EINTR)
					   ? WSLAY_ERR_WOULDBLOCK
					   : WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags,
		       void *user)
{
	openenv_conn *cn = user;
	ssize_t r;

	r = send(cn->fd, data, len, MSG_NOSIGNAL | (flags & WSLAY_MSG_MORE ? MSG_MORE : 0));
	if (r >= 0)
		return r;
	wslay_event_set_error(ctx, errno == EAGAIN || errno == EINTR ? WSLAY_ERR_WOULDBLOCK
								     : WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static void ws_message(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg,
		       void *user)
{
	openenv_conn *cn = user;
	_cleanup_free_ char *reply = NULL;
	bool close = false;

	if (arg->opcode != WSLAY_TEXT_FRAME && arg->opcode != WSLAY_BINARY_FRAME)
		return; /* ping, pong, close: wslay's */
	sbx_serve__openenv_message(cn->os, (const char *)arg->msg, arg->msg_length, &reply, &close);
	if (reply) {
		struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)reply,
					    strlen(reply)};

		wslay_event_queue_msg(ctx, &m);
	}
	if (close)
		wslay_event_queue_close(ctx, WSLAY_CODE_NORMAL_CLOSURE, NULL, 0);
}

static void conn_serve(openenv_conn *cn)
{
	struct wslay_event_callbacks cb = {.recv_callback = ws_recv,
					   .send_callback = ws_send,
					   .on_msg_recv_callback = ws_message};
	wslay_event_context_ptr ctx;
	bool stopping = false;
	int64_t stopping_ms = 0;

	if (wslay_event_context_server_init(&ctx, &cb, cn) != 0)
		return;
	wslay_event_config_set_max_recv_msg_length(ctx, OPENENV_MSG_MAX);
	cn->last_ms = sbx_now_ms();
	while (wslay_event_want_read(ctx) || wslay_event_want_write(ctx)) {
		struct pollfd p = {.fd = cn->fd};
		bool stop;

		pthread_mutex_lock(&cn->s->lock);
		stop = cn->s->ws_stop;
		pthread_mutex_unlock(&cn->s->lock);
		/* Stopping or idle: a close frame, and 2 s for it to leave. */
		if (stopping && sbx_now_ms() - stopping_ms > 2000)
			break;
		if (!stopping && (stop || sbx_now_ms() - cn->last_ms > OPENENV_IDLE_S * 1000LL)) {
			if (wslay_event_queue_close(ctx, WSLAY_CODE_GOING_AWAY, NULL, 0))
				break;
			stopping = true;
			stopping_ms = sbx_now_ms();
			wslay_event_shutdown_read(ctx);
		}
		if (wslay_event_want_read(ctx) && (!backlogged(ctx) || cn->pre_off < cn->pre_len))
			p.events |= POLLIN;
		if (wslay_event_want_write(ctx))
			p.events |= POLLOUT;
		if (cn->pre_off < cn->pre_len) {
			p.revents = POLLIN;
		} else if (poll(&p, 1, 1000) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((p.revents & (POLLERR | POLLNVAL)) ||
		    ((p.revents & POLLHUP) && !(p.revents & POLLIN)))
			break;
		if ((p.revents & POLLIN) && wslay_event_recv(ctx) != 0)
			break;
		if ((p.revents & POLLOUT) && wslay_event_send(ctx) != 0)
			break;
	}
	wslay_event_context_free(ctx);
}

static void *conn_main(void *arg)
{
	openenv_conn *cn = arg;
	sbx_serve *s = cn->s;

	conn_serve(cn);
	/* A dropped socket, close or an idle session: the episode is finished. */
	sbx_serve__openenv_session_free(cn->os);
	pthread_mutex_lock(&s->lock);
	for (openenv_conn **p = &s->ws; *p; p = &(*p)->next)
		if (*p == cn) {
			*p = cn->next;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	MHD_upgrade_action(cn->urh, MHD_UPGRADE_ACTION_CLOSE);
	free(cn->pre);
	free(cn);
	pthread_mutex_lock(&s->lock);
	s->n_ws--;
	pthread_cond_broadcast(&s->ws_gone);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* MHD's upgrade callback: cls is the request's task (listen.c's, alive until the close). */
static void on_upgrade(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra_in,
		       size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	const char *task = *(const char **)con_cls;
	sbx_serve *s = cls;
	openenv_conn *cn = calloc(1, sizeof(*cn));
	pthread_attr_t attr;
	pthread_t t;
	int r = -1;

	/* A session is not a connection waiting for a request: the slot guard leaves it be. */
	sbx_connguard_upgraded(s->guard, c);
	pthread_mutex_lock(&s->lock);
	if (cn && !s->ws_stop && s->n_ws < OPENENV_SESSIONS_MAX) {
		s->n_ws++;
		r = 0;
	}
	pthread_mutex_unlock(&s->lock);
	if (r < 0)
		goto refuse;
	cn->s = s;
	cn->fd = sock;
	cn->urh = urh;
	cn->os = sbx_serve__openenv_session_new(s, task);
	if (extra_in_size) {
		cn->pre = malloc(extra_in_size);
		if (cn->pre)
			memcpy(cn->pre, extra_in, extra_in_size);
		cn->pre_len = extra_in_size;
	}
	if (!cn->os || (extra_in_size && !cn->pre) ||
	    fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK) < 0)
		goto unreserve;
	/* A reply is one frame written at once (MSG_MORE in between): no Nagle wait. */
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
	pthread_mutex_lock(&s->lock);
	cn->next = s->ws;
	s->ws = cn;
	pthread_mutex_unlock(&s->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	r = pthread_create(&t, &attr, conn_main, cn);
	pthread_attr_destroy(&attr);
	if (r == 0)
		return;
	pthread_mutex_lock(&s->lock);
	for (openenv_conn **p = &s->ws; *p; p = &(*p)->next)
		if (*p == cn) {
			*p = cn->next;
			break;
		}
	pthread_mutex_unlock(&s->lock);
unreserve:
	sbx_serve__openenv_session_free(cn->os);
	free(cn->pre);
	pthread_mutex_lock(&s->lock);
	s->n_ws--;
	pthread_cond_broadcast(&s->ws_gone);
	pthread_mutex_unlock(&s->lock);
refuse:
	free(cn);
	MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

/* Whether header name's comma-separated value list holds token (case-insensitive). */
static bool header_has(struct MHD_Connection *c, const char *name, const char *token)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
	size_t n = strlen(token);

	for (; v && *v; v += strcspn(v, ",") + (v[strcspn(v, ",")] == ',')) {
		v += strspn(v, " \t");
		if (strncasecmp(v, token, n) == 0 && (v[n] == 0 || strchr(", \t", v[n])))
			return true;
	}
	return false;
}

static enum MHD_Result upgrade(sbx_serve *s, struct MHD_Connection *c)
{
	const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-WebSocket-Key");
	const char *ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-WebSocket-Version");
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned md_len = 0;
	char in[64];
	_cleanup_free_ char *accept = NULL;
	struct MHD_Response *resp;
	enum MHD_Result r;
	bool full;

	if (!header_has(c, "Upgrade", "websocket") || !header_has(c, "Connection", "upgrade"))
		return answer(c, 426,
			      sbx_serve__error_json("/ws: a WebSocket upgrade is required"));
	if (!ver || strcmp(ver, "13") != 0)
		return answer(c, 426, sbx_serve__error_json("/ws: Sec-WebSocket-Version 13 only"));
	/* The key: base64 of 16 bytes, 24 characters. */
	if (!key || strlen(key) != 24)
		return answer(c, 400, sbx_serve__error_json("/ws: a bad Sec-WebSocket-Key"));
	pthread_mutex_lock(&s->lock);
	full = s->n_ws >= OPENENV_SESSIONS_MAX;
	pthread_mutex_unlock(&s->lock);
	if (full)
		return answer(
			c, 503,
			sbx_serve__error_json("/ws: the service's OpenEnv sessions are all in "
					      "use; close one first"));
	snprintf(in, sizeof(in), "%s%s", key, WS_GUID);
	if (!EVP_Digest(in, strlen(in), md, &md_len, EVP_sha1(), NULL) ||
	    !(accept = sbx_base64_encode(md, md_len)))
		return MHD_NO;
	resp = MHD_create_response_for_upgrade(on_upgrade, s);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, "websocket");
	MHD_add_response_header(resp, "Sec-WebSocket-Accept", accept);
	r = MHD_queue_response(c, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
	MHD_destroy_response(resp);
	return r;
}

static char *metadata(const char *task)
{
	_cleanup_json_ cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "name", task);
	cJSON_AddStringToObject(o, "description",
				"a sandboxctl task: reset claims an episode, steps are MCP tool "
				"calls, reward is the grade's score");
	cJSON_AddStringToObject(o, "version", "1");
	return cJSON_PrintUnformatted(o);
}

static const char schema_text[] =
	"{\"action\":{\"type\":\"object\",\"properties\":{\"type\":{\"enum\":[\"list_tools\","
	"\"call_tool\"]},\"tool_name\":{\"type\":\"string\"},\"arguments\":{\"type\":\"object\"}},"
	"\"required\":[\"type\"]},"
	"\"observation\":{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":\"string\"},"
	"\"tools\":{\"type\":\"array\"},\"tool_name\":{\"type\":\"string\"},\"result\":{},"
	"\"error\":{}}},"
	"\"state\":{\"type\":\"object\",\"properties\":{\"episode_id\":{\"type\":[\"string\","
	"\"null\"]},\"step_count\":{\"type\":\"integer\"}}}}";

enum MHD_Result sbx_serve__openenv_request(sbx_serve *s, struct MHD_Connection *c,
					   const char *method, const char *path, const char **task)
{
	static const char pre[] = "/openenv/";
	const char *name = path + sizeof(pre) - 1, *rest;
	size_t n = strcspn(name, "/?"), rl;
	bool get = strcmp(method, "GET") == 0;

	rest = name + n;
	rl = strcspn(rest, "?");
	if (!task_name_ok(name, n))
		return answer(c, 404, sbx_serve__error_json("openenv: not a task name"));
	if (!task_exists(s, name, n))
		return answer(c, 404, sbx_serve__error_json("openenv: no such task"));
	if (rl == 3 && strncmp(rest, "/ws", 3) == 0) {
		char *t = strndup(name, n);

		if (!get) {
			free(t);
			return answer(c, 405, sbx_serve__error_json("method not allowed"));
		}
		if (!t)
			return MHD_NO;
		free((char *)*task);
		*task = t;
		return upgrade(s, c);
	}
	if (!get)
		return answer(c, 405, sbx_serve__error_json("method not allowed"));
	if (rl == 7 && strncmp(rest, "/health", 7) == 0)
		return answer(c, 200, strdup("{\"status\":\"healthy\"}"));
	if (rl == 9 && strncmp(rest, "/metadata", 9) == 0) {
		char t[SERVE_ID_MAX + 1];

		snprintf(t, sizeof(t), "%.*s", (int)n, name);
		return answer(c, 200, metadata(t));
	}
	if (rl == 7 && strncmp(rest, "/schema", 7) == 0)
		return answer(c, 200, strdup(schema_text));
	return answer(c, 404, sbx_serve__error_json("not found"));
}

void sbx_serve__openenv_stop(sbx_serve *s)
{
	pthread_mutex_lock(&s->lock);
	s->ws_stop = true;
	for (openenv_conn *cn = s->ws; cn; cn = cn->next)
		shutdown(cn->fd, SHUT_RDWR);
	while (s->n_ws > 0)
		pthread_cond_wait(&s->ws_gone, &s->lock);
	pthread_mutex_unlock(&s->lock);
}
