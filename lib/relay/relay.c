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
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "relay-internal.h"
#include "sbx/cleanup.h"
#include "sbx/hostguard.h"
#include "sbx/log.h"
#include "sbx/relay.h"

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
	tc->cap.sse = sbx_relay__is_sse(resp);
	tc->wrote = true;
	k = http_write_head(tc->out, resp, tc->keep_alive);
	if (k < 0)
		return 0; /* the agent went away; the server stream is mid-response */
	if (http_response_bodyless(tc->cap.method, resp->status)) {
		sbx_relay__capture_finish(&tc->cap);
		return 1;
	}
	k = http_relay_body(sr, resp, true, tc->out, sbx_relay__capture_fn, &tc->cap, err);
	sbx_relay__capture_finish(&tc->cap);
	if (k < 0) {
		tc->keep_alive = false;
		return 0;
	}
	return 1;
}

/* --- request bodies, within the relay's memory budget ---------------------- */

typedef struct body_buf {
	sbx_relay *r;
	char *data;
	size_t len, cap;
	size_t charged; /* counted in r->buffered */
} body_buf;

/* Counts cap bytes (past the free allowance) against the budget; false when over. */
static bool body_charge(body_buf *b, size_t cap)
{
	sbx_relay *r = b->r;
	size_t want = cap > BODY_FREE_BYTES ? cap - BODY_FREE_BYTES : 0;
	bool ok = true;

	if (want <= b->charged)
		return true;
	pthread_mutex_lock(&r->lock);
	if (r->buffered + (want - b->charged) > r->o.max_buffered) {
		r->stats.over_budget++;
		ok = false;
	} else {
		r->buffered += want - b->charged;
		b->charged = want;
		if (r->buffered > r->stats.buffered_peak)
			r->stats.buffered_peak = r->buffered;
	}
	pthread_mutex_unlock(&r->lock);
	return ok;
}

/*
 * Room for need bytes (and a NUL), exactly (a declared length) or doubling (a
 * chunked body): -EFBIG past the request cap, -ENOBUFS over budget.
 */
static int body_reserve(body_buf *b, size_t need, bool exact)
{
	size_t cap;
	char *p;

	if (need + 1 <= b->cap)
		return 0;
	if (need > REQUEST_BODY_MAX)
		return -EFBIG;
	cap = exact ? need + 1 : b->cap ? b->cap : 4096;
	while (cap < need + 1)
		cap *= 2;
	if (cap > (size_t)REQUEST_BODY_MAX + 1)
		cap = (size_t)REQUEST_BODY_MAX + 1;
	if (!body_charge(b, cap))
		return -ENOBUFS;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

static int collect(const char *data, size_t n, void *userdata)
{
	body_buf *b = userdata;
	int k = body_reserve(b, b->len + n, false);

	if (k < 0)
		return k;
	memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

static void body_free(body_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	if (b->charged) {
		pthread_mutex_lock(&b->r->lock);
		b->r->buffered -= b->charged;
		pthread_mutex_unlock(&b->r->lock);
		b->charged = 0;
	}
}

/* Compares n bytes in time that does not depend on where they differ. */
static bool same_secret(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i];
	return d == 0;
}

/*
 * True when the request carries the run's token: as the first path segment,
 * which is then stripped from req->target (so neither the server nor the
 * transcript sees it), or as a Bearer credential.
 */
static bool authorized(const sbx_relay *r, http_head *req, bool *in_path)
{
	size_t tl = strlen(r->token);
	char *t = req->target;
	const char *auth = http_head_get(req, "Authorization");

	*in_path = false;
	if (!tl)
		return true;
	if (t[0] == '/' && strnlen(t + 1, tl) == tl && same_secret(t + 1, r->token, tl) &&
	    (t[1 + tl] == '/' || t[1 + tl] == '\0' || t[1 + tl] == '?')) {
		if (t[1 + tl] == '/') {
			req->target = t + 1 + tl;
		} else {
			t[tl] = '/'; /* "/<token>" or "/<token>?q" is the root */
			req->target = t + tl;
		}
		*in_path = true;
		return true;
	}
	if (auth && strncasecmp(auth, "Bearer ", 7) == 0) {
		const char *v = auth + 7;

		while (*v == ' ')
			v++;
		return strlen(v) == tl && same_secret(v, r->token, tl);
	}
	return false;
}

/* At most n bytes of s for a log line: control bytes escaped, the rest cut. */
static void log_safe(char *out, size_t size, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; s && s[i] && i < n && o + 5 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c >= 0x7f || c == '\\')
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
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

/*
 * Refuses req: logs "refused <method> <target>" (at most target_max bytes of
 * it) with why, counts it in *count and answers status with text.
 */
static void refuse(sbx_relay *r, sbx_stream *cs, http_head *req, size_t target_max, const char *why,
		   unsigned long *count, int status, const char *reason, const char *text)
{
	char what[64], where[96];

	log_safe(what, sizeof(what), req->method, 16);
	log_safe(where, sizeof(where), req->target, target_max);
	sbx_log_warning("relay: refused %s %s%s (%d)", what, where, why, status);
	pthread_mutex_lock(&r->lock);
	(*count)++;
	pthread_mutex_unlock(&r->lock);
	simple_reply(cs, status, reason, text);
	http_head_free(req);
}

static int request_head_text(const http_head *req, size_t body_len, const char *prefix,
			     sbx_buf *out)
{
	/* Authorization holds the run's token: the sandbox never sees it. */
	static const char *const drop[] = {"Connection",
					   "Keep-Alive",
					   "Proxy-Connection",
					   "TE",
					   "Trailer",
					   "Upgrade",
					   "Expect",
					   "Content-Length",
					   "Transfer-Encoding",
					   "Authorization",
					   "X-Forwarded-Prefix"};
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
	/* The path prefix the relay stripped (the token), for links the server makes. */
	if (k >= 0 && prefix)
		k = sbx_buf_printf(out, "X-Forwarded-Prefix: /%s\r\n", prefix);
	if (k >= 0)
		k = sbx_buf_puts(out, "Connection: keep-alive\r\n\r\n");
	return k;
}

/* Marks the connection's slot (if it still holds it) busy or waiting since now. */
static void slot_mark(client *c, bool busy, bool trusted)
{
	sbx_relay *r = c->r;

	pthread_mutex_lock(&r->lock);
	if (r->clients[c->slot].conn == c->conn) {
		r->clients[c->slot].busy = busy;
		r->clients[c->slot].trusted |= trusted;
		r->clients[c->slot].since = sbx_now_ms();
	}
	pthread_mutex_unlock(&r->lock);
}

static void count_timeout(sbx_relay *r)
{
	pthread_mutex_lock(&r->lock);
	r->stats.timed_out++;
	pthread_mutex_unlock(&r->lock);
}

/* The answer to a request body the relay did not take. */
static void body_refused(sbx_relay *r, sbx_stream *cs, int k, const sbx_error *err)
{
	if (k == -ENOBUFS)
		simple_reply(cs, 503, "Service Unavailable",
			     "the relay holds as many request bodies as it may; retry\n");
	else if (k == -EFBIG)
		simple_reply(cs, 413, "Content Too Large", "request body larger than 64 MiB\n");
	else if (k == -ETIMEDOUT) {
		count_timeout(r);
		simple_reply(cs, 408, "Request Timeout", sbx_error_message(err));
	} else if (k != -ECANCELED && k != -EPIPE)
		simple_reply(cs, 400, "Bad Request", sbx_error_message(err));
}

static void serve_client(client *c, sbx_stream *cs)
{
	sbx_relay *r = c->r;
	http_reader cr;

	/* A first head must start within the head timeout of the connect, too. */
	http_reader_init(&cr, cs, r->o.head_timeout_ms);
	cr.head_timeout_ms = r->o.head_timeout_ms;
	cr.body_timeout_ms = r->o.body_timeout_ms;
	cr.stop = &r->stop;
	for (;;) {
		sbx_error err = SBX_ERROR_INIT;
		body_buf body = {.r = r};
		_cleanup_(sbx_buf_free) sbx_buf head = SBX_BUF_INIT(HTTP_HEAD_MAX * 2);
		http_head req;
		to_client tc = {.out = cs};
		const char *expect;
		bool token_in_path = false;
		int k;

		k = http_read_head(&cr, &req, true, &err);
		cr.timeout_ms = CLIENT_IDLE_MS; /* between requests on a kept-alive connection */
		if (k == -ETIMEDOUT)
			count_timeout(r);
		if (k == -ENODATA || k == -ECANCELED || k == -ETIMEDOUT)
			return;
		if (k < 0) {
			simple_reply(cs, 400, "Bad Request", sbx_error_message(&err));
			return;
		}
		/* DNS rebinding: the one guard the server uses too, with the relay's port. */
		if (!r->unix_path &&
		    sbx_hostguard_check(&(sbx_hostguard){.port = r->port, .require_host = true},
					http_head_get(&req, "Host"),
					http_head_get(&req, "Origin")) != SBX_HOSTGUARD_OK) {
			simple_reply(cs, 403, "Forbidden", "Host or Origin not allowed\n");
			http_head_free(&req);
			return;
		}
		if (!authorized(r, &req, &token_in_path)) {
			/* 12 bytes of the target: not the whole guess at a token. */
			refuse(r, cs, &req, 12, "...: no valid token", &r->stats.unauthorized, 401,
			       "Unauthorized",
			       "this relay needs the run's token: use the URL sandboxctl "
			       "printed, or Authorization: Bearer <token>\n");
			return;
		}
		if (sbx_relay__control_target(req.target)) {
			refuse(r, cs, &req, 64, ": the control API is the host's",
			       &r->stats.forbidden, 403, "Forbidden",
			       "/control is the host's own API; agents use /mcp and the REST "
			       "paths\n");
			return;
		}
		slot_mark(c, false, true);
		/* A declared length is reserved whole, so an over-budget body is refused unread. */
		k = req.content_length > 0 ? body_reserve(&body, (size_t)req.content_length, true)
					   : 0;
		if (k < 0) {
			body_refused(r, cs, k, &err);
			http_head_free(&req);
			body_free(&body);
			return;
		}
		expect = http_head_get(&req, "Expect");
		if (expect && strcasecmp(expect, "100-continue") == 0)
			sbx_stream_write(cs, "HTTP/1.1 100 Continue\r\n\r\n", 25);
		k = http_relay_body(&cr, &req, false, NULL, collect, &body, &err);
		if (k < 0) {
			body_refused(r, cs, k, &err);
			http_head_free(&req);
			body_free(&body);
			return;
		}
		if (request_head_text(&req, body.len, token_in_path ? r->token : NULL, &head) < 0) {
			simple_reply(cs, 500, "Internal Error", "out of memory\n");
			http_head_free(&req);
			body_free(&body);
			return;
		}
		tc.cap.version = http_head_get(&req, "MCP-Protocol-Version");
		sbx_transcript_record_mcp(r->transcript, c->conn, "agent->server", req.method,
					  req.target, 0, tc.cap.version, body.data, body.len);
		tc.keep_alive = !req.close;
		tc.cap.r = r;
		tc.cap.conn = c->conn;
		tc.cap.method = req.method;
		tc.cap.path = req.target;
		tc.cap.record = true;
		sbx_buf_init(&tc.cap.buf, SBX_TRANSCRIPT_BODY_MAX);
		slot_mark(c, true, true);
		sbx_relay__agent_exchange(r, true);
		k = sbx_relay__exchange(r, head.data, head.len, body.data, body.len, req.method,
					r->o.io_timeout_ms, 0, response_to_client, &tc, &err);
		sbx_relay__agent_exchange(r, false);
		slot_mark(c, false, true);
		sbx_buf_free(&tc.cap.buf);
		body_free(&body);
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
	sbx_stream *cs = NULL;

	if (sbx_stream_from_fds(&cs, c->fd, c->fd) == 0)
		serve_client(c, cs);
	/* Leave the table before the fd closes, so nobody shuts down a reused number. */
	pthread_mutex_lock(&r->lock);
	if (r->clients[c->slot].conn == c->conn)
		r->clients[c->slot].fd = -1;
	pthread_mutex_unlock(&r->lock);
	if (cs)
		sbx_stream_close(cs);
	else
		close(c->fd);
	pthread_mutex_lock(&r->lock);
	r->n_threads--;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	free(c);
	return NULL;
}

/*
 * A slot for a new connection (the lock held): a free one, else the one that
 * has waited longest on its agent (tokenless connections first), whose
 * connection is shut down to end its thread. -1 when every one is busy.
 */
static int take_slot(sbx_relay *r)
{
	int victim = -1;

	for (unsigned i = 0; i < r->o.max_clients; i++) {
		const client_slot *s = &r->clients[i];

		if (s->fd < 0)
			return (int)i;
		if (s->busy)
			continue;
		if (victim < 0 || (!s->trusted && r->clients[victim].trusted) ||
		    (s->trusted == r->clients[victim].trusted &&
		     s->since < r->clients[victim].since))
			victim = (int)i;
	}
	/* Evicted threads linger until they see the shutdown; bound them too. */
	if (victim < 0 || r->n_threads >= 2 * r->o.max_clients)
		return -1;
	shutdown(r->clients[victim].fd, SHUT_RDWR);
	r->stats.evicted++;
	return victim;
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
		c = calloc(1, sizeof(*c));
		pthread_mutex_lock(&r->lock);
		if (c)
			slot = take_slot(r);
		if (slot < 0) {
			pthread_mutex_unlock(&r->lock);
			close(fd); /* over the connection limit, every connection busy */
			free(c);
			continue;
		}
		*c = (client){.r = r, .fd = fd, .slot = slot, .conn = ++r->next_conn};
		r->clients[slot] = (client_slot){.fd = fd, .conn = c->conn, .since = sbx_now_ms()};
		r->n_threads++;
		pthread_mutex_unlock(&r->lock);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, client_main, c) != 0) {
			pthread_mutex_lock(&r->lock);
			r->clients[slot].fd = -1;
			r->n_threads--;
			pthread_mutex_unlock(&r->lock);
			close(fd);
			free(c);
		}
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

/* --- life cycle ------------------------------------------------------------ */

/*
 * Listens on a 0600 unix socket at path: bound in a fresh 0700 directory
 * beside it, so no other user can connect before the chmod, then renamed
 * into place (replacing a stale socket, never another kind of file).
 */
static int listen_unix(sbx_relay *r, const char *path, sbx_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = NULL, *tmp = NULL;
	struct stat st;
	int k;

	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
		return sbx_error_set(err, -EEXIST, "relay: '%s' exists and is not a socket", path);
	if (asprintf(&dir, "%.*s/.relay-XXXXXX", slash ? (int)(slash - path) : 1,
		     slash ? path : ".") < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (strlen(path) >= sizeof(sa.sun_path) || strlen(dir) + 2 >= sizeof(sa.sun_path))
		return sbx_error_set(err, -ENAMETOOLONG,
				     "relay: unix socket path '%s' too long (at most %zu bytes, "
				     "%zu in its directory)",
				     path, sizeof(sa.sun_path) - 1, sizeof(sa.sun_path) - 17);
	if (!mkdtemp(dir))
		return sbx_error_set(err, -errno,
				     "relay: cannot create a directory beside '%s': %s", path,
				     strerror(errno));
	if (asprintf(&tmp, "%s/s", dir) < 0) {
		rmdir(dir);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	memcpy(sa.sun_path, tmp, strlen(tmp) + 1);
	r->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r->listen_fd < 0 || bind(r->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(tmp, 0600) < 0 || listen(r->listen_fd, 128) < 0 || rename(tmp, path) < 0) {
		k = -errno;
		unlink(tmp);
		rmdir(dir);
		return sbx_error_set(err, k, "relay: cannot listen on unix:%s: %s", path,
				     strerror(-k));
	}
	rmdir(dir);
	r->unix_path = strdup(path);
	if (!r->unix_path) {
		unlink(path);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

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
	if (opts->token) {
		size_t tl = strlen(opts->token);

		if (tl == 0 || tl >= sizeof(r->token) ||
		    strspn(opts->token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789-_") != tl) {
			free(r);
			return sbx_error_set(err, -EINVAL, "relay: a token is 1-64 URL-safe bytes");
		}
		memcpy(r->token, opts->token, tl + 1);
	}
	r->o.token = r->token;
	if (!r->o.max_clients)
		r->o.max_clients = 64;
	if (!r->o.io_timeout_ms)
		r->o.io_timeout_ms = 15 * 60 * 1000;
	if (r->o.head_timeout_ms <= 0)
		r->o.head_timeout_ms = 10 * 1000;
	if (r->o.body_timeout_ms <= 0)
		r->o.body_timeout_ms = 30 * 1000;
	if (!r->o.max_buffered)
		r->o.max_buffered = 128 * 1024 * 1024;
	if (r->o.warm > POOL_MAX)
		r->o.warm = POOL_MAX;
	r->listen_fd = r->wake[0] = r->wake[1] = -1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->clients = calloc(r->o.max_clients, sizeof(*r->clients));
	if (!r->clients) {
		sbx_relay_free(r);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < r->o.max_clients; i++)
		r->clients[i].fd = -1;
	if (opts->transcript_path &&
	    (k = sbx_transcript_open(&r->transcript, opts->transcript_path, err)) < 0) {
		sbx_relay_free(r);
		return k;
	}
	if (pipe2(r->wake, O_CLOEXEC) < 0) {
		k = -errno;
		sbx_relay_free(r);
		return sbx_error_set(err, k, "relay: pipe: %s", strerror(-k));
	}
	if (opts->unix_path) {
		k = listen_unix(r, opts->unix_path, err);
		if (k < 0) {
			sbx_relay_free(r);
			return k;
		}
	} else {
		sa.sin_port = htons(opts->port);
		r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (r->listen_fd < 0 ||
		    setsockopt(r->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    bind(r->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    listen(r->listen_fd, 128) < 0 ||
		    getsockname(r->listen_fd, (struct sockaddr *)&sa, &sl) < 0) {
			k = -errno;
			sbx_relay_free(r);
			return sbx_error_set(err, k, "relay: cannot listen on 127.0.0.1:%u: %s",
					     opts->port, strerror(-k));
		}
		r->port = ntohs(sa.sin_port);
	}
	if (pthread_create(&r->accept_thread, NULL, accept_main, r) != 0) {
		sbx_relay_free(r);
		return sbx_error_set(err, -EAGAIN, "relay: cannot start a thread");
	}
	r->accept_started = true;
	if (pthread_create(&r->warm_thread, NULL, sbx_relay__warm_main, r) == 0)
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
	if (r->unix_path)
		unlink(r->unix_path); /* nothing answers there any more */
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
		if (r->clients[i].fd >= 0)
			shutdown(r->clients[i].fd, SHUT_RDWR);
	/* Connection threads see stop within a read slice (200 ms). */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	while (r->n_threads > 0)
		if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&r->lock);
	if (r->warm_started)
		pthread_join(r->warm_thread, NULL);
	while (r->n_idle > 0) {
		sbx_stream *s = r->idle[--r->n_idle];

		if (r->o.give_back && !sbx_stream_stale(s))
			r->o.give_back(s, r->o.open_userdata);
		else
			sbx_stream_close(s);
	}
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
	if (r->listen_fd >= 0) {
		close(r->listen_fd);
		if (r->unix_path)
			unlink(r->unix_path); /* a start that failed past the bind */
	}
	free(r->clients);
	free(r->unix_path);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}
