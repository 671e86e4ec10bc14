/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "sbx/cleanup.h"
#include "sbx/log.h"
#include "sbx/relay.h"
#include "transcript.h"

#define POOL_MAX	  16
#define REQUEST_BODY_MAX  (64 * 1024 * 1024)
#define RESPONSE_BODY_MAX (64 * 1024 * 1024)
#define CLIENT_IDLE_MS	  (5 * 60 * 1000)

struct sbx_relay {
	sbx_relay_opts o;
	int listen_fd;
	int wake[2];
	uint16_t port;
	sbx_transcript *transcript;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop; /* read atomically by readers */
	bool warming;
	sbx_stream *idle[POOL_MAX];
	size_t n_idle;
	unsigned opening; /* streams being opened by the warmer */
	int *clients;	  /* fds of agent connections, -1 when free */
	unsigned n_threads;
	unsigned next_conn;
	sbx_relay_stats stats;

	pthread_t accept_thread, warm_thread;
	bool accept_started, warm_started;
};

/* --- the pool ----------------------------------------------------------- */

static int pool_take(sbx_relay *r, sbx_stream **out, bool *reused, sbx_error *err)
{
	int k;

	pthread_mutex_lock(&r->lock);
	while (r->n_idle > 0) {
		sbx_stream *s = r->idle[--r->n_idle];

		if (sbx_stream_stale(s)) {
			sbx_stream_close(s);
			continue;
		}
		pthread_cond_broadcast(&r->cond); /* the warmer refills */
		pthread_mutex_unlock(&r->lock);
		*out = s;
		*reused = true;
		return 0;
	}
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	k = r->o.open(out, r->o.open_userdata, err);
	if (k < 0)
		return k;
	pthread_mutex_lock(&r->lock);
	r->stats.streams_opened++;
	pthread_mutex_unlock(&r->lock);
	*reused = false;
	return 0;
}

static void pool_give(sbx_relay *r, sbx_stream *s, bool reusable)
{
	if (!s)
		return;
	pthread_mutex_lock(&r->lock);
	if (reusable && !r->stop && r->n_idle < POOL_MAX) {
		r->idle[r->n_idle++] = s;
		s = NULL;
	}
	pthread_mutex_unlock(&r->lock);
	sbx_stream_close(s);
}

static void *warm_main(void *arg)
{
	sbx_relay *r = arg;
	unsigned failures = 0;

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		sbx_stream *s = NULL;
		sbx_error err = SBX_ERROR_INIT;
		int k;

		if (!r->warming || r->n_idle >= r->o.warm) {
			pthread_cond_wait(&r->cond, &r->lock);
			continue;
		}
		pthread_mutex_unlock(&r->lock);
		k = r->o.open(&s, r->o.open_userdata, &err);
		pthread_mutex_lock(&r->lock);
		if (k < 0) {
			struct timespec ts;

			if (failures++ == 0)
				sbx_log_debug("relay: warming a stream failed: %s",
					      sbx_error_message(&err));
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100 * 1000000L * (failures < 10 ? failures : 10);
			ts.tv_sec += ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			pthread_cond_timedwait(&r->cond, &r->lock, &ts);
			continue;
		}
		failures = 0;
		r->stats.streams_opened++;
		if (r->stop || r->n_idle >= POOL_MAX) {
			pthread_mutex_unlock(&r->lock);
			sbx_stream_close(s);
			pthread_mutex_lock(&r->lock);
			continue;
		}
		r->idle[r->n_idle++] = s;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

void sbx_relay_warm(sbx_relay *r)
{
	pthread_mutex_lock(&r->lock);
	r->warming = r->o.warm > 0;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* --- one exchange --------------------------------------------------------- */

/* Consumes the response; returns 1 when the server stream stays usable, 0 if not, <0 on error. */
typedef int (*response_fn)(http_reader *sr, http_head *resp, void *userdata, sbx_error *err);

static int exchange(sbx_relay *r, const char *head, size_t head_len, const char *body,
		    size_t body_len, const char *method, int timeout_ms, response_fn fn,
		    void *userdata, sbx_error *err)
{
	for (int attempt = 0;; attempt++) {
		sbx_stream *s = NULL;
		http_reader sr;
		http_head resp;
		bool reused = false;
		int k;

		k = pool_take(r, &s, &reused, err);
		if (k < 0)
			return k;
		k = sbx_stream_write(s, head, head_len);
		if (k >= 0 && body_len)
			k = sbx_stream_write(s, body, body_len);
		http_reader_init(&sr, s, timeout_ms);
		sr.stop = &r->stop;
		if (k >= 0)
			k = http_read_head(&sr, &resp, false, err);
		if (k < 0) {
			sbx_stream_close(s);
			/* A pooled stream the server had already closed: try a fresh one. */
			if (reused && attempt == 0 &&
			    (k == -ENODATA || k == -EPIPE || k == -ECONNRESET)) {
				sbx_error_clear(err);
				continue;
			}
			if (k == -ENODATA)
				k = sbx_error_set(err, -EPIPE,
						  "the server closed the stream without answering");
			else
				sbx_error_set(err, k, "exchange with the server failed: %s",
					      strerror(-k));
			return k;
		}
		if (resp.status == 100) { /* interim: read the real head */
			http_head_free(&resp);
			k = http_read_head(&sr, &resp, false, err);
			if (k < 0) {
				sbx_stream_close(s);
				return k;
			}
		}
		k = fn(&sr, &resp, userdata, err);
		pool_give(r, s,
			  k > 0 && !resp.close && !http_reader_buffered(&sr) &&
				  (resp.chunked || resp.content_length >= 0 ||
				   http_response_bodyless(method, resp.status)));
		http_head_free(&resp);
		pthread_mutex_lock(&r->lock);
		if (k >= 0) {
			r->stats.requests++;
			if (reused)
				r->stats.reused++;
		}
		pthread_mutex_unlock(&r->lock);
		return k < 0 ? k : 0;
	}
}

/* --- bodies into the transcript ------------------------------------------- */

typedef struct capture {
	sbx_relay *r;
	unsigned conn;
	const char *method, *path;
	int status;
	bool sse;
	sbx_buf buf; /* whole body, or the pending part of an SSE stream */
	bool over;
	bool record; /* into the transcript */
	bool keep;   /* keep the whole body (host requests) */
	sbx_buf all;
} capture;

static void sse_emit(capture *c, const char *ev, size_t n)
{
	_cleanup_(sbx_buf_free) sbx_buf data = SBX_BUF_INIT(SBX_TRANSCRIPT_BODY_MAX);
	const char *p = ev, *end = ev + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (ll && p[ll - 1] == '\r')
			ll--;
		if (ll >= 5 && memcmp(p, "data:", 5) == 0) {
			const char *d = p + 5;
			size_t dl = ll - 5;

			if (dl && *d == ' ')
				d++, dl--;
			if (data.len)
				sbx_buf_putc(&data, '\n');
			sbx_buf_append(&data, d, dl);
		}
		p = nl ? nl + 1 : end;
	}
	if (data.len)
		sbx_transcript_record(c->r->transcript, c->conn, "server->agent", c->method,
				      c->path, c->status, data.data, data.len);
}

static int capture_fn(const char *data, size_t n, void *userdata)
{
	capture *c = userdata;

	if (c->keep && sbx_buf_append(&c->all, data, n) < 0)
		return -EFBIG;
	if (!c->record || !c->r->transcript || c->over)
		return 0;
	if (sbx_buf_append(&c->buf, data, n) < 0) {
		c->over = true; /* too large to record; the transfer goes on */
		return 0;
	}
	while (c->sse) {
		char *sep = strstr(c->buf.data, "\n\n");
		char *sep2 = strstr(c->buf.data, "\r\n\r\n");
		size_t ev, skip;

		if (sep2 && (!sep || sep2 < sep))
			ev = (size_t)(sep2 - c->buf.data), skip = ev + 4;
		else if (sep)
			ev = (size_t)(sep - c->buf.data), skip = ev + 2;
		else
			break;
		sse_emit(c, c->buf.data, ev);
		memmove(c->buf.data, c->buf.data + skip, c->buf.len - skip + 1);
		c->buf.len -= skip;
	}
	return 0;
}

static void capture_finish(capture *c)
{
	if (!c->record || !c->r->transcript)
		return;
	if (c->sse && c->buf.len)
		sse_emit(c, c->buf.data, c->buf.len);
	else if (!c->sse)
		sbx_transcript_record(c->r->transcript, c->conn, "server->agent", c->method,
				      c->path, c->status, c->buf.data,
				      c->over ? SBX_TRANSCRIPT_BODY_MAX + 1 : c->buf.len);
}

static bool is_sse(const http_head *h)
{
	const char *ct = http_head_get(h, "Content-Type");

	return ct && strncasecmp(ct, "text/event-stream", 17) == 0;
}

/* --- agent connections ---------------------------------------------------- */

typedef struct client {
	sbx_relay *r;
	int fd;
	int slot;
	unsigned conn;
} client;

typedef struct to_client {
	sbx_stream *out;
	bool keep_alive;
	bool wrote;
	capture cap;
} to_client;

static int response_to_client(http_reader *sr, http_head *resp, void *userdata, sbx_error *err)
{
	to_client *tc = userdata;
	bool framed = resp->chunked || resp->content_length >= 0 ||
		      http_response_bodyless(tc->cap.method, resp->status);
	int k;

	if (!framed)
		tc->keep_alive = false;
	tc->cap.status = resp->status;
	tc->cap.sse = is_sse(resp);
	tc->wrote = true;
	k = http_write_head(tc->out, resp, tc->keep_alive);
	if (k < 0)
		return 0; /* the agent went away; the server stream is mid-response */
	if (http_response_bodyless(tc->cap.method, resp->status)) {
		capture_finish(&tc->cap);
		return 1;
	}
	k = http_relay_body(sr, resp, true, tc->out, capture_fn, &tc->cap, err);
	capture_finish(&tc->cap);
	if (k < 0) {
		tc->keep_alive = false;
		return 0;
	}
	return 1;
}

static int collect(const char *data, size_t n, void *userdata)
{
	return sbx_buf_append(userdata, data, n);
}

static bool allowed_authority(const char *v, uint16_t port, bool origin)
{
	char a[80], b[80], c[80];

	if (!v)
		return origin; /* no Origin: a non-browser client; no Host: refused */
	snprintf(a, sizeof(a), "%s127.0.0.1:%u", origin ? "http://" : "", port);
	snprintf(b, sizeof(b), "%slocalhost:%u", origin ? "http://" : "", port);
	snprintf(c, sizeof(c), "%s[::1]:%u", origin ? "http://" : "", port);
	return strcasecmp(v, a) == 0 || strcasecmp(v, b) == 0 || strcasecmp(v, c) == 0;
}

static void simple_reply(sbx_stream *s, int status, const char *reason, const char *text)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s",
			 status, reason, strlen(text), text);

	if (n > 0 && (size_t)n < sizeof(buf))
		sbx_stream_write(s, buf, (size_t)n);
}

static int request_head_text(const http_head *req, size_t body_len, sbx_buf *out)
{
	static const char *const drop[] = {"Connection", "Keep-Alive",	   "Proxy-Connection",
					   "TE",	 "Trailer",	   "Upgrade",
					   "Expect",	 "Content-Length", "Transfer-Encoding"};
	int k = sbx_buf_printf(out, "%s %s HTTP/1.1\r\n", req->method, req->target);

	for (size_t i = 0; k >= 0 && i < req->n; i++) {
		bool skip = false;

		for (size_t d = 0; d < SBX_ELEMENTSOF(drop); d++)
			skip |= strcasecmp(req->h[i].name, drop[d]) == 0;
		if (!skip)
			k = sbx_buf_printf(out, "%s: %s\r\n", req->h[i].name, req->h[i].value);
	}
	if (k >= 0 &&
	    (body_len || strcmp(req->method, "POST") == 0 || strcmp(req->method, "PUT") == 0))
		k = sbx_buf_printf(out, "Content-Length: %zu\r\n", body_len);
	if (k >= 0)
		k = sbx_buf_puts(out, "Connection: keep-alive\r\n\r\n");
	return k;
}

static void serve_client(client *c)
{
	sbx_relay *r = c->r;
	_cleanup_stream_ sbx_stream *cs = NULL;
	http_reader cr;

	if (sbx_stream_from_fds(&cs, c->fd, c->fd) < 0) {
		close(c->fd);
		return;
	}
	http_reader_init(&cr, cs, CLIENT_IDLE_MS);
	cr.stop = &r->stop;
	for (;;) {
		sbx_error err = SBX_ERROR_INIT;
		_cleanup_(sbx_buf_free) sbx_buf body = SBX_BUF_INIT(REQUEST_BODY_MAX);
		_cleanup_(sbx_buf_free) sbx_buf head = SBX_BUF_INIT(HTTP_HEAD_MAX * 2);
		http_head req;
		to_client tc = {.out = cs};
		const char *expect;
		int k;

		k = http_read_head(&cr, &req, true, &err);
		if (k == -ENODATA || k == -ECANCELED || k == -ETIMEDOUT)
			return;
		if (k < 0) {
			simple_reply(cs, 400, "Bad Request", sbx_error_message(&err));
			http_head_free(&req);
			return;
		}
		if (!allowed_authority(http_head_get(&req, "Host"), r->port, false) ||
		    !allowed_authority(http_head_get(&req, "Origin"), r->port, true)) {
			simple_reply(cs, 403, "Forbidden", "Host or Origin not allowed\n");
			http_head_free(&req);
			return;
		}
		expect = http_head_get(&req, "Expect");
		if (expect && strcasecmp(expect, "100-continue") == 0)
			sbx_stream_write(cs, "HTTP/1.1 100 Continue\r\n\r\n", 25);
		k = http_relay_body(&cr, &req, false, NULL, collect, &body, &err);
		if (k < 0) {
			simple_reply(cs, 413, "Bad Request Body", sbx_error_message(&err));
			http_head_free(&req);
			return;
		}
		if (request_head_text(&req, body.len, &head) < 0) {
			simple_reply(cs, 500, "Internal Error", "out of memory\n");
			http_head_free(&req);
			return;
		}
		sbx_transcript_record(r->transcript, c->conn, "agent->server", req.method,
				      req.target, 0, body.data, body.len);
		tc.keep_alive = !req.close;
		tc.cap.r = r;
		tc.cap.conn = c->conn;
		tc.cap.method = req.method;
		tc.cap.path = req.target;
		tc.cap.record = true;
		sbx_buf_init(&tc.cap.buf, SBX_TRANSCRIPT_BODY_MAX);
		k = exchange(r, head.data, head.len, body.data, body.len, req.method,
			     r->o.io_timeout_ms, response_to_client, &tc, &err);
		sbx_buf_free(&tc.cap.buf);
		if (k < 0 && !tc.wrote) {
			sbx_log_warning("relay: %s %s: %s", req.method, req.target,
					sbx_error_message(&err));
			simple_reply(cs, 502, "Bad Gateway", sbx_error_message(&err));
			tc.keep_alive = false;
		}
		http_head_free(&req);
		if (!tc.keep_alive || __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			return;
	}
}

static void *client_main(void *arg)
{
	client *c = arg;
	sbx_relay *r = c->r;

	serve_client(c); /* closes c->fd */
	pthread_mutex_lock(&r->lock);
	r->clients[c->slot] = -1;
	r->n_threads--;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	free(c);
	return NULL;
}

static void *accept_main(void *arg)
{
	sbx_relay *r = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = r->listen_fd, .events = POLLIN},
				      {.fd = r->wake[0], .events = POLLIN}};
		client *c;
		pthread_t t;
		pthread_attr_t attr;
		int fd, one = 1, slot = -1;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents || __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(r->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		pthread_mutex_lock(&r->lock);
		for (unsigned i = 0; i < r->o.max_clients; i++)
			if (r->clients[i] < 0) {
				slot = (int)i;
				break;
			}
		c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			pthread_mutex_unlock(&r->lock);
			close(fd); /* over the connection limit */
			continue;
		}
		r->clients[slot] = fd;
		r->n_threads++;
		*c = (client){.r = r, .fd = fd, .slot = slot, .conn = ++r->next_conn};
		pthread_mutex_unlock(&r->lock);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, client_main, c) != 0) {
			pthread_mutex_lock(&r->lock);
			r->clients[slot] = -1;
			r->n_threads--;
			pthread_mutex_unlock(&r->lock);
			close(fd);
			free(c);
		}
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

/* --- host requests -------------------------------------------------------- */

typedef struct to_buffer {
	capture cap;
	sbx_relay_response *out;
} to_buffer;

static int response_to_buffer(http_reader *sr, http_head *resp, void *userdata, sbx_error *err)
{
	to_buffer *tb = userdata;
	const char *ct = http_head_get(resp, "Content-Type");
	const char *sid = http_head_get(resp, "Mcp-Session-Id");
	int k;

	tb->cap.status = resp->status;
	tb->cap.sse = is_sse(resp);
	tb->out->status = resp->status;
	tb->out->content_type = ct ? strdup(ct) : NULL;
	tb->out->session_id = sid ? strdup(sid) : NULL;
	if (http_response_bodyless(tb->cap.method, resp->status)) {
		capture_finish(&tb->cap);
		return 1;
	}
	k = http_relay_body(sr, resp, true, NULL, capture_fn, &tb->cap, err);
	capture_finish(&tb->cap);
	return k < 0 ? k : 1;
}

int sbx_relay_request(sbx_relay *r, const char *method, const char *path, const char *extra_headers,
		      const char *body, size_t len, bool record, int timeout_ms,
		      sbx_relay_response *out, sbx_error *err)
{
	_cleanup_(sbx_buf_free) sbx_buf head = SBX_BUF_INIT(HTTP_HEAD_MAX);
	sbx_relay_response resp = {0};
	to_buffer tb = {.out = &resp};
	unsigned conn = 0;
	int k;

	k = sbx_buf_printf(&head,
			   "%s %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: sandboxctl\r\n"
			   "Accept: application/json, text/event-stream\r\n%s",
			   method, path, extra_headers ? extra_headers : "");
	if (k >= 0 && body)
		k = sbx_buf_printf(
			&head, "Content-Type: application/json\r\nContent-Length: %zu\r\n", len);
	if (k >= 0)
		k = sbx_buf_puts(&head, "Connection: keep-alive\r\n\r\n");
	if (k < 0)
		return sbx_error_set(err, k, "request head too large");
	if (record) {
		pthread_mutex_lock(&r->lock);
		conn = ++r->next_conn;
		pthread_mutex_unlock(&r->lock);
		sbx_transcript_record(r->transcript, conn, "agent->server", method, path, 0, body,
				      body ? len : 0);
	}
	tb.cap.r = r;
	tb.cap.conn = conn;
	tb.cap.method = method;
	tb.cap.path = path;
	tb.cap.keep = true;
	sbx_buf_init(&tb.cap.buf, SBX_TRANSCRIPT_BODY_MAX);
	sbx_buf_init(&tb.cap.all, RESPONSE_BODY_MAX);
	tb.cap.record = record;
	k = exchange(r, head.data, head.len, body, body ? len : 0, method, timeout_ms,
		     response_to_buffer, &tb, err);
	sbx_buf_free(&tb.cap.buf);
	if (k < 0) {
		sbx_buf_free(&tb.cap.all);
		sbx_relay_response_free(&resp);
		return k;
	}
	resp.body = sbx_buf_steal(&tb.cap.all, &resp.len);
	if (!resp.body) {
		sbx_relay_response_free(&resp);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	*out = resp;
	return 0;
}

void sbx_relay_response_free(sbx_relay_response *resp)
{
	if (!resp)
		return;
	free(resp->content_type);
	free(resp->session_id);
	free(resp->body);
	memset(resp, 0, sizeof(*resp));
}

/* --- life cycle ------------------------------------------------------------ */

int sbx_relay_start(sbx_relay **out, const sbx_relay_opts *opts, sbx_error *err)
{
	sbx_relay *r;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int one = 1, k;

	if (!opts || opts->version != SBX_RELAY_OPTS_VERSION || !opts->open)
		return sbx_error_set(err, -EINVAL, "relay: bad options");
	if (inet_pton(AF_INET, opts->bind_addr ? opts->bind_addr : "127.0.0.1", &sa.sin_addr) !=
		    1 ||
	    (ntohl(sa.sin_addr.s_addr) >> 24) != 127)
		return sbx_error_set(err, -EINVAL, "relay: '%s' is not an IPv4 loopback address",
				     opts->bind_addr);
	r = calloc(1, sizeof(*r));
	if (!r)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r->o = *opts;
	if (!r->o.max_clients)
		r->o.max_clients = 64;
	if (!r->o.io_timeout_ms)
		r->o.io_timeout_ms = 15 * 60 * 1000;
	if (r->o.warm > POOL_MAX)
		r->o.warm = POOL_MAX;
	r->listen_fd = r->wake[0] = r->wake[1] = -1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->clients = malloc(sizeof(int) * r->o.max_clients);
	if (!r->clients) {
		sbx_relay_free(r);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < r->o.max_clients; i++)
		r->clients[i] = -1;
	if (opts->transcript_path &&
	    (k = sbx_transcript_open(&r->transcript, opts->transcript_path, err)) < 0) {
		sbx_relay_free(r);
		return k;
	}
	sa.sin_port = htons(opts->port);
	r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->listen_fd < 0 || pipe2(r->wake, O_CLOEXEC) < 0 ||
	    setsockopt(r->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(r->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(r->listen_fd, 128) < 0 ||
	    getsockname(r->listen_fd, (struct sockaddr *)&sa, &sl) < 0) {
		k = -errno;
		sbx_relay_free(r);
		return sbx_error_set(err, k, "relay: cannot listen on 127.0.0.1:%u: %s", opts->port,
				     strerror(-k));
	}
	r->port = ntohs(sa.sin_port);
	if (pthread_create(&r->accept_thread, NULL, accept_main, r) != 0) {
		sbx_relay_free(r);
		return sbx_error_set(err, -EAGAIN, "relay: cannot start a thread");
	}
	r->accept_started = true;
	if (pthread_create(&r->warm_thread, NULL, warm_main, r) == 0)
		r->warm_started = true;
	*out = r;
	return 0;
}

uint16_t sbx_relay_port(const sbx_relay *r)
{
	return r->port;
}

void sbx_relay_close_listener(sbx_relay *r)
{
	if (!r || !r->accept_started)
		return;
	if (write(r->wake[1], "x", 1) < 0) {
		/* the pipe cannot be full: one byte is ever written */
	}
	pthread_join(r->accept_thread, NULL);
	r->accept_started = false;
	close(r->listen_fd);
	r->listen_fd = -1;
}

void sbx_relay_get_stats(sbx_relay *r, sbx_relay_stats *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->stats;
	pthread_mutex_unlock(&r->lock);
	out->transcript_lines = sbx_transcript_count(r->transcript);
}

void sbx_relay_free(sbx_relay *r)
{
	struct timespec ts;

	if (!r)
		return;
	sbx_relay_close_listener(r);
	pthread_mutex_lock(&r->lock);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&r->cond);
	for (unsigned i = 0; r->clients && i < r->o.max_clients; i++)
		if (r->clients[i] >= 0)
			shutdown(r->clients[i], SHUT_RDWR);
	/* Connection threads see stop within a read slice (200 ms). */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	while (r->n_threads > 0)
		if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&r->lock);
	if (r->warm_started)
		pthread_join(r->warm_thread, NULL);
	while (r->n_idle > 0)
		sbx_stream_close(r->idle[--r->n_idle]);
	if (r->n_threads > 0) {
		/* A thread stuck in a write to a dead peer: leak rather than crash. */
		sbx_log_warning("relay: %u connection(s) did not end in time", r->n_threads);
		return;
	}
	sbx_transcript_close(r->transcript);
	if (r->wake[0] >= 0)
		close(r->wake[0]);
	if (r->wake[1] >= 0)
		close(r->wake[1]);
	if (r->listen_fd >= 0)
		close(r->listen_fd);
	free(r->clients);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}
