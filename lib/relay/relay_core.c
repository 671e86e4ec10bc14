/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "relay-internal.h"
#include "sbx/cleanup.h"
#include "sbx/log.h"

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

void sbx_relay__agent_exchange(sbx_relay *r, bool begins)
{
	pthread_mutex_lock(&r->lock);
	if (begins) {
		r->agent_exchanges++;
		r->defer_until = sbx_now_ms() + WARM_DEFER_MS;
	} else if (r->agent_exchanges > 0 && --r->agent_exchanges == 0) {
		r->defer_until = 0;
		pthread_cond_broadcast(&r->cond); /* the warmer may go on */
	}
	pthread_mutex_unlock(&r->lock);
}

/* r->lock held: sleeps until the deferral ends or something changes. */
static bool warm_deferred(sbx_relay *r)
{
	int64_t wait_ms = r->agent_exchanges ? r->defer_until - sbx_now_ms() : 0;

	if (wait_ms <= 0)
		return false;
	sbx_cond_wait_ms(&r->cond, &r->lock, wait_ms);
	return true;
}

void *sbx_relay__warm_main(void *arg)
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
		if (warm_deferred(r))
			continue;
		pthread_mutex_unlock(&r->lock);
		k = r->o.open(&s, r->o.open_userdata, &err);
		pthread_mutex_lock(&r->lock);
		if (k < 0) {
			if (failures++ == 0)
				sbx_log_debug("relay: warming a stream failed: %s",
					      sbx_error_message(&err));
			sbx_cond_wait_ms(&r->cond, &r->lock, 100 * (failures < 10 ? failures : 10));
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

/* After a whole response: may the stream carry the next request? */
static bool stream_reusable(const http_reader *sr, const http_head *resp, const char *method)
{
	return !resp->close && !http_reader_buffered(sr) &&
	       (resp->chunked || resp->content_length >= 0 ||
		http_response_bodyless(method, resp->status));
}

int sbx_relay__exchange(sbx_relay *r, const char *head, size_t head_len, const char *body,
			size_t body_len, const char *method, int timeout_ms, int64_t until,
			sbx_relay__response_fn fn, void *userdata, sbx_error *err)
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
		sr.until = until;
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
		pool_give(r, s, k > 0 && stream_reusable(&sr, &resp, method));
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
		sbx_transcript_record_mcp(c->r->transcript, c->conn, "server->agent", c->method,
					  c->path, c->status, c->version, data.data, data.len);
}

int sbx_relay__capture_fn(const char *data, size_t n, void *userdata)
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

void sbx_relay__capture_finish(capture *c)
{
	if (!c->record || !c->r->transcript)
		return;
	if (c->sse && c->buf.len)
		sse_emit(c, c->buf.data, c->buf.len);
	else if (!c->sse)
		sbx_transcript_record_mcp(c->r->transcript, c->conn, "server->agent", c->method,
					  c->path, c->status, c->version, c->buf.data,
					  c->over ? SBX_TRANSCRIPT_BODY_MAX + 1 : c->buf.len);
}

bool sbx_relay__is_sse(const http_head *h)
{
	const char *ct = http_head_get(h, "Content-Type");

	return ct && strncasecmp(ct, "text/event-stream", 17) == 0;
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
	const char *reloaded = http_head_get(resp, "X-Reloaded");
	const char *shown = http_head_get(resp, "X-Window-Shown");
	int k;

	tb->cap.status = resp->status;
	tb->cap.sse = sbx_relay__is_sse(resp);
	tb->out->status = resp->status;
	tb->out->content_type = ct ? strdup(ct) : NULL;
	tb->out->session_id = sid ? strdup(sid) : NULL;
	tb->out->reloaded = reloaded && strcmp(reloaded, "true") == 0;
	tb->out->window_shown = shown && strcmp(shown, "true") == 0;
	if (http_response_bodyless(tb->cap.method, resp->status)) {
		sbx_relay__capture_finish(&tb->cap);
		return 1;
	}
	k = http_relay_body(sr, resp, true, NULL, sbx_relay__capture_fn, &tb->cap, err);
	sbx_relay__capture_finish(&tb->cap);
	return k < 0 ? k : 1;
}

/* A header's value in "Name: value\r\n" lines, copied into buf; NULL when absent or too long. */
static const char *header_value(const char *headers, const char *name, char *buf, size_t size)
{
	size_t nl = strlen(name), n;

	for (const char *p = headers; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncasecmp(p, name, nl) != 0 || p[nl] != ':')
			continue;
		p += nl + 1;
		p += strspn(p, " \t");
		n = strcspn(p, "\r\n");
		if (n == 0 || n >= size)
			return NULL;
		memcpy(buf, p, n);
		buf[n] = '\0';
		return buf;
	}
	return NULL;
}

int sbx_relay_request(sbx_relay *r, const char *method, const char *path, const char *extra_headers,
		      const char *body, size_t len, bool record, int timeout_ms,
		      sbx_relay_response *out, sbx_error *err)
{
	_cleanup_(sbx_buf_free) sbx_buf head = SBX_BUF_INIT(HTTP_HEAD_MAX);
	sbx_relay_response resp = {0};
	to_buffer tb = {.out = &resp};
	unsigned conn = 0;
	char version[40];
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
		tb.cap.version = header_value(extra_headers, "MCP-Protocol-Version", version,
					      sizeof(version));
		sbx_transcript_record_mcp(r->transcript, conn, "agent->server", method, path, 0,
					  tb.cap.version, body, body ? len : 0);
	}
	tb.cap.r = r;
	tb.cap.conn = conn;
	tb.cap.method = method;
	tb.cap.path = path;
	tb.cap.keep = true;
	sbx_buf_init(&tb.cap.buf, SBX_TRANSCRIPT_BODY_MAX);
	sbx_buf_init(&tb.cap.all, RESPONSE_BODY_MAX);
	tb.cap.record = record;
	/* The host's own requests: timeout_ms is the whole exchange, however the server paces it.
	 */
	k = sbx_relay__exchange(r, head.data, head.len, body, body ? len : 0, method, timeout_ms,
				timeout_ms > 0 ? sbx_now_ms() + timeout_ms : 0, response_to_buffer,
				&tb, err);
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
	sbx_free_all(resp->content_type, resp->session_id, resp->body);
	memset(resp, 0, sizeof(*resp));
}

static int append_body(const char *data, size_t n, void *userdata)
{
	return sbx_buf_append(userdata, data, n) < 0 ? -EFBIG : 0;
}

int sbx_relay_stream_request(sbx_stream *s, const char *method, const char *path, const void *body,
			     size_t len, int timeout_ms, int *status, sbx_buf *answer,
			     sbx_error *err)
{
	_cleanup_(sbx_buf_free) sbx_buf head = SBX_BUF_INIT(HTTP_HEAD_MAX);
	http_reader sr;
	http_head resp;
	int k;

	*status = 0;
	k = sbx_buf_printf(&head,
			   "%s %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: sandboxctl\r\n"
			   "Connection: keep-alive\r\n",
			   method, path);
	if (k >= 0 && body)
		k = sbx_buf_printf(&head, "Content-Length: %zu\r\n", len);
	if (k >= 0)
		k = sbx_buf_puts(&head, "\r\n");
	if (k < 0)
		return sbx_error_set(err, k, "request head too large");
	k = sbx_stream_write(s, head.data, head.len);
	if (k >= 0 && body && len)
		k = sbx_stream_write(s, body, len);
	if (k < 0)
		return sbx_error_set(err, k, "%s %s: %s", method, path, strerror(-k));
	http_reader_init(&sr, s, timeout_ms);
	sr.method = method;
	sr.until = timeout_ms > 0 ? sbx_now_ms() + timeout_ms : 0;
	k = http_read_head(&sr, &resp, false, err);
	if (k < 0)
		return k;
	*status = resp.status;
	k = http_response_bodyless(method, resp.status)
		    ? 0
		    : http_relay_body(&sr, &resp, true, NULL, answer ? append_body : NULL, answer,
				      err);
	if (k == -EFBIG && answer) /* only append_body says EFBIG */
		sbx_error_set(err, k, "%s %s: the answer is over %zu bytes", method, path,
			      answer->max);
	if (k >= 0)
		k = stream_reusable(&sr, &resp, method);
	http_head_free(&resp);
	return k;
}

int sbx_relay_stream_get(sbx_stream *s, const char *path, int timeout_ms, int *status,
			 sbx_error *err)
{
	return sbx_relay_stream_request(s, "GET", path, NULL, 0, timeout_ms, status, NULL, err);
}
