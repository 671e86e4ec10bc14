/* SPDX-License-Identifier: MIT */
/*
 * One agent connection's requests: the token (in the path or as Bearer),
 * the request's bounds and body, the exchange with the server, the
 * response back, and the answers to what the relay refuses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "relay-internal.h"
#include "sbx/cleanup.h"
#include "sbx/hostguard.h"
#include "sbx/log.h"
#include "sbx/relay.h"

/* --- agent connections ---------------------------------------------------- */

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

void sbx_relay__serve_client(client *c, sbx_stream *cs)
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
