/* SPDX-License-Identifier: MIT */
/*
 * The relay's HTTP/1.1 framing on libhttp-parser. The parser is paused at
 * the end of each head (so the caller decides what to do with the body) and
 * at the end of each message (so pipelined bytes stay in the reader for the
 * next head). Everything the parser hands back is copied into one buffer per
 * head, with hard caps on its size, the number of headers, the body and the
 * trailers, and deadlines on the head and the body.
 *
 * Debian builds the parser with HTTP_PARSER_STRICT=0: a head's leniencies
 * (spaces in names, control bytes, obs-fold, lone CRs) are refused here;
 * inside a chunked body it takes any two bytes for the CRLF after a chunk.
 * That cannot desynchronise anyone: the relay consumes exactly the message
 * the parser saw, request bodies go on re-framed with a Content-Length, and
 * a response's raw framing reaches only the agent that asked for it.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http_framing.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"

void http_reader_init(http_reader *r, sbx_stream *s, int timeout_ms)
{
	/* The 16 KiB buffer needs no clearing. */
	memset(r, 0, offsetof(http_reader, buf));
	r->s = s;
	r->timeout_ms = timeout_ms;
}

bool http_reader_buffered(const http_reader *r)
{
	return r->off < r->len;
}

/*
 * Makes bytes available in r->buf: what is left, or one read waiting at most
 * timeout_ms for the next byte and never past the deadline, in slices of
 * 200 ms when a stop flag is to be watched.
 */
static ssize_t fill(http_reader *r)
{
	int64_t now = 0, end = -1;
	ssize_t n;

	if (r->off < r->len)
		return (ssize_t)(r->len - r->off);
	r->off = r->len = 0;
	if (r->timeout_ms >= 0 || r->deadline || r->until) {
		now = sbx_now_ms();
		if (r->timeout_ms >= 0)
			end = now + r->timeout_ms;
		if (r->deadline && (end < 0 || r->deadline < end))
			end = r->deadline;
		/* The caller's whole budget: a peer dripping one byte at a time cannot stretch it.
		 */
		if (r->until && (end < 0 || r->until < end))
			end = r->until;
	}
	for (;;) {
		int64_t left = end < 0 ? -1 : end > now ? end - now : 0;
		int wait = left > INT_MAX ? INT_MAX : (int)left;

		if (r->stop && (wait < 0 || wait > 200))
			wait = 200;
		n = sbx_stream_read(r->s, r->buf, sizeof(r->buf), wait);
		if (n != -ETIMEDOUT)
			break;
		if (r->stop && __atomic_load_n(r->stop, __ATOMIC_ACQUIRE))
			return -ECANCELED;
		if (end >= 0 && (now = sbx_now_ms()) >= end)
			return -ETIMEDOUT;
	}
	if (n > 0)
		r->len = (size_t)n;
	return n;
}

/* --- parser callbacks ------------------------------------------------------ */

static int cb_fail(http_reader *r, int code, const char *msg)
{
	r->cb_err = code;
	r->cb_msg = msg;
	return -1;
}

static int put(http_reader *r, const char *at, size_t n)
{
	if (sbx_buf_append(&r->text, at, n) < 0)
		return cb_fail(r, -EBADMSG, "HTTP head too large");
	return 0;
}

/* Ends the string the last callback was adding to. */
static int end_string(http_reader *r)
{
	return r->last ? put(r, "", 1) : 0;
}

static int on_message_begin(http_parser *p)
{
	((http_reader *)p->data)->began = true;
	return 0;
}

/* The request target or the reason phrase: the start line's text. */
static int on_start_text(http_parser *p, const char *at, size_t n)
{
	http_reader *r = p->data;

	if (r->last != 3) {
		r->url_off = r->text.len;
		r->last = 3;
	}
	return put(r, at, n);
}

/* A trailer's name or value (after a chunked body): bounded like the head, not kept. */
static int skip_trailer(http_reader *r, size_t n)
{
	r->trailer_bytes += n;
	return r->trailer_bytes > HTTP_HEAD_MAX ? cb_fail(r, -EBADMSG, "trailers too large") : 0;
}

/* A piece of a header's name (kind 1) or value (kind 2); a change of kind starts a string. */
static int on_header_text(http_reader *r, int kind, const char *at, size_t n)
{
	if (r->head_done)
		return skip_trailer(r, n);
	if (r->last != kind) {
		if (end_string(r) < 0)
			return -1;
		if (kind == 1) {
			if (r->n_fields >= HTTP_HEADERS_MAX)
				return cb_fail(r, -EBADMSG, "too many HTTP headers");
			r->name_off[r->n_fields] = r->text.len;
			r->value_off[r->n_fields] = 0; /* "" until a value comes */
			r->n_fields++;
		} else {
			r->value_off[r->n_fields - 1] = r->text.len;
		}
		r->last = kind;
	}
	return put(r, at, n);
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
	return on_header_text(p->data, 1, at, n);
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
	return on_header_text(p->data, 2, at, n);
}

static int on_headers_complete(http_parser *p)
{
	http_reader *r = p->data;
	const char *m = p->type == HTTP_REQUEST ? http_method_str(p->method) : "";

	if (end_string(r) < 0)
		return -1;
	r->method_off = r->text.len;
	if (put(r, m, strlen(m) + 1) < 0)
		return -1;
	r->head_done = true;
	http_parser_pause(p, 1);
	/* 1: no body (a response to HEAD may announce one it does not send). */
	return p->type == HTTP_RESPONSE && r->method && strcmp(r->method, "HEAD") == 0;
}

static int on_chunk_header(http_parser *p)
{
	http_reader *r = p->data;

	if (p->content_length > (uint64_t)(HTTP_BODY_MAX - r->body_total))
		return cb_fail(r, -EBADMSG, "HTTP body larger than 256 MiB");
	return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
	http_reader *r = p->data;
	int k;

	r->body_total += (int64_t)n;
	if (r->body_total > HTTP_BODY_MAX)
		return cb_fail(r, -EBADMSG, "HTTP body larger than 256 MiB");
	if (r->fn && (k = r->fn(at, n, r->fn_ud)) < 0)
		return cb_fail(r, k, "HTTP body refused");
	return 0;
}

static int on_message_complete(http_parser *p)
{
	http_reader *r = p->data;

	r->msg_done = true;
	http_parser_pause(p, 1); /* what follows is the next message */
	return 0;
}

static const http_parser_settings settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_start_text,
	.on_status = on_start_text,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_headers_complete = on_headers_complete,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
	.on_chunk_header = on_chunk_header,
};

/* The parser's verdict on what it just ran over, as an errno and message. */
/* A failed read (n < 0) of the HTTP head or body: its deadline passed, or the read's errno. */
static int read_failed(const http_reader *r, ssize_t n, const char *part, int timeout_ms,
		       sbx_error *err)
{
	if (n == -ETIMEDOUT && r->deadline)
		return sbx_error_set(err, -ETIMEDOUT, "HTTP %s not complete within %d ms", part,
				     timeout_ms);
	return sbx_error_set(err, (int)n, "reading HTTP %s: %s", part, strerror((int)-n));
}

static int parse_error(http_reader *r, const char *what, sbx_error *err)
{
	enum http_errno e = HTTP_PARSER_ERRNO(&r->p);

	if (r->cb_err)
		return sbx_error_set(err, r->cb_err, "%s", r->cb_msg);
	return sbx_error_set(err, -EBADMSG, "malformed HTTP %s: %s", what,
			     http_errno_description(e));
}

/* --- heads ----------------------------------------------------------------- */

void http_head_free(http_head *h)
{
	free(h->text);
	memset(h, 0, sizeof(*h));
}

/*
 * libhttp-parser accepts obs-fold (RFC 9112 5.2); the relay does not. (Debian
 * builds it with HTTP_PARSER_STRICT=0, so a lone CR ends a line too.)
 */
static void scan_fold(http_reader *r, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if ((r->prev == '\n' || r->prev == '\r') && (p[i] == ' ' || p[i] == '\t'))
			r->bad_fold = true;
		r->prev = p[i];
	}
}

/* RFC 9110 5.6.2 tchar: the non-strict parser lets a space into a name. */
static bool is_token(const char *s)
{
	static const char extra[] = "!#$%&'*+-.^_`|~";

	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(extra, *s)))
			return false;
	return true;
}

/* A field value: visible bytes, spaces and tabs (obs-text allowed), no controls. */
static bool is_field_value(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return false;
	return true;
}

static void rtrim(char *s)
{
	char *e = s + strlen(s);

	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
}

/* The head in r->text, checked against the relay's policy, into *h. */
static int finish_head(http_reader *r, http_head *h, sbx_error *err)
{
	const http_parser *p = &r->p;
	char *t;

	t = h->text = sbx_buf_steal(&r->text, NULL); /* *h owns it, even on failure */
	if (!t)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (r->bad_fold)
		return sbx_error_set(err, -EBADMSG, "obsolete header folding refused");
	if (p->http_major != 1)
		return sbx_error_set(err, -EBADMSG, "unsupported HTTP version %u.%u", p->http_major,
				     p->http_minor);
	h->minor = p->http_minor;
	h->n = r->n_fields;
	for (size_t i = 0; i < h->n; i++) {
		h->h[i].name = t + r->name_off[i];
		h->h[i].value = t + r->value_off[i];
		rtrim(h->h[i].value);
		if (!is_token(h->h[i].name))
			return sbx_error_set(err, -EBADMSG, "malformed HTTP header name");
		if (!is_field_value(h->h[i].value))
			return sbx_error_set(err, -EBADMSG, "control byte in HTTP header value");
	}
	if (h->request) {
		h->method = t + r->method_off;
		h->target = t + r->url_off;
		if (h->target[0] != '/')
			return sbx_error_set(
				err, -EBADMSG,
				"malformed HTTP request line (the target must be a path)");
		for (const char *c = h->target; *c; c++)
			if ((unsigned char)*c <= ' ' || *c == 0x7f)
				return sbx_error_set(err, -EBADMSG,
						     "control byte in HTTP request target");
	} else {
		h->status = p->status_code;
		h->reason = t + r->url_off;
		if (h->status < 100 || h->status > 599 || !is_field_value(h->reason))
			return sbx_error_set(err, -EBADMSG, "malformed HTTP status line");
	}
	if (p->flags & F_CONTENTLENGTH) {
		if (p->content_length > (uint64_t)HTTP_BODY_MAX)
			return sbx_error_set(err, -EBADMSG, "bad Content-Length %llu",
					     (unsigned long long)p->content_length);
		h->content_length = (int64_t)p->content_length;
	}
	h->chunked = p->flags & F_CHUNKED;
	/* Only plain chunked: the relay passes bodies through undecoded. */
	for (size_t i = 0; i < h->n; i++)
		if (strcasecmp(h->h[i].name, "Transfer-Encoding") == 0 &&
		    strcasecmp(h->h[i].value, "chunked") != 0)
			return sbx_error_set(err, -EBADMSG, "unsupported Transfer-Encoding '%.64s'",
					     h->h[i].value);
	h->close = !http_should_keep_alive(p);
	return 0;
}

int http_read_head(http_reader *r, http_head *h, bool request, sbx_error *err)
{
	const char *what = request ? "request" : "response";
	enum http_errno e;
	size_t used;
	int k;

	memset(h, 0, sizeof(*h));
	h->request = request;
	h->content_length = -1;
	http_parser_init(&r->p, request ? HTTP_REQUEST : HTTP_RESPONSE);
	r->p.data = r;
	sbx_buf_init(&r->text, HTTP_HEAD_MAX + 64);
	r->n_fields = r->head_bytes = r->trailer_bytes = 0;
	r->url_off = r->method_off = 0;
	r->last = 0;
	r->began = r->head_done = r->msg_done = r->bad_fold = false;
	r->prev = 0;
	r->cb_err = 0;
	r->body_total = 0;
	r->fn = NULL;
	r->deadline = 0;
	/* Offset 0 holds "": a missing reason phrase or header value. */
	if (sbx_buf_append(&r->text, "", 1) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	for (;;) {
		ssize_t n = fill(r);

		if (n == 0) {
			k = r->began ? sbx_error_set(err, -EBADMSG, "connection closed mid-head")
				     : -ENODATA;
			goto fail;
		}
		if (n < 0) {
			k = read_failed(r, n, "head", r->head_timeout_ms, err);
			goto fail;
		}
		/* Slowloris: the whole head must come within head_timeout_ms. */
		if (r->head_timeout_ms > 0 && !r->deadline)
			r->deadline = sbx_now_ms() + r->head_timeout_ms;
		used = http_parser_execute(&r->p, &settings, r->buf + r->off, r->len - r->off);
		scan_fold(r, r->buf + r->off, used);
		r->off += used;
		r->head_bytes += used;
		e = HTTP_PARSER_ERRNO(&r->p);
		if (r->head_bytes > HTTP_HEAD_MAX) {
			k = sbx_error_set(err, -EBADMSG, "HTTP head larger than %d bytes",
					  HTTP_HEAD_MAX);
			goto fail;
		}
		if (e == HPE_PAUSED && r->head_done)
			break;
		if (e != HPE_OK) {
			k = parse_error(r, what, err);
			goto fail;
		}
	}
	r->deadline = 0;
	/*
	 * The parser stopped on the head's last LF; running it over that byte
	 * alone settles the framing (and ends a message without a body).
	 */
	http_parser_pause(&r->p, 0);
	if (r->off < r->len) {
		r->off += http_parser_execute(&r->p, &settings, r->buf + r->off, 1);
		e = HTTP_PARSER_ERRNO(&r->p);
		if (e != HPE_OK && !(e == HPE_PAUSED && r->msg_done)) {
			k = parse_error(r, what, err);
			goto fail;
		}
	}
	k = finish_head(r, h, err);
	if (k < 0)
		http_head_free(h); /* on failure *h holds nothing */
	return k;
fail:
	r->deadline = 0;
	sbx_buf_free(&r->text);
	return k;
}

const char *http_head_get(const http_head *h, const char *name)
{
	for (size_t i = 0; i < h->n; i++)
		if (strcasecmp(h->h[i].name, name) == 0)
			return h->h[i].value;
	return NULL;
}

bool http_response_bodyless(const char *method, int status)
{
	return (method && strcmp(method, "HEAD") == 0) || status / 100 == 1 || status == 204 ||
	       status == 304;
}

static bool hop_by_hop(const char *name)
{
	static const char *const hop[] = {"Connection", "Keep-Alive", "Proxy-Connection",
					  "TE",		"Trailer",    "Upgrade"};

	for (size_t i = 0; i < SBX_ELEMENTSOF(hop); i++)
		if (strcasecmp(name, hop[i]) == 0)
			return true;
	return false;
}

int http_write_head(sbx_stream *out, const http_head *h, bool keep_alive)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(HTTP_HEAD_MAX * 2);
	int r;

	if (h->request)
		r = sbx_buf_printf(&b, "%s %s HTTP/1.1\r\n", h->method, h->target);
	else
		r = sbx_buf_printf(&b, "HTTP/1.1 %d %s\r\n", h->status, h->reason);
	for (size_t i = 0; r >= 0 && i < h->n; i++)
		if (!hop_by_hop(h->h[i].name))
			r = sbx_buf_printf(&b, "%s: %s\r\n", h->h[i].name, h->h[i].value);
	if (r >= 0)
		r = sbx_buf_printf(&b, "Connection: %s\r\n\r\n",
				   keep_alive ? "keep-alive" : "close");
	if (r < 0)
		return r;
	return sbx_stream_write(out, b.data, b.len);
}

/* --- bodies ---------------------------------------------------------------- */

int http_relay_body(http_reader *r, const http_head *h, bool until_eof, sbx_stream *out,
		    http_body_fn fn, void *ud, sbx_error *err)
{
	int k = 0;

	if (r->msg_done)
		return 0; /* no body, or an empty one */
	if (!h->chunked && h->content_length < 0 && !until_eof)
		return 0;
	r->fn = fn;
	r->fn_ud = ud;
	r->cb_err = 0;
	if (r->body_timeout_ms > 0)
		r->deadline = sbx_now_ms() + r->body_timeout_ms;
	http_parser_pause(&r->p, 0);
	while (!r->msg_done) {
		ssize_t n = fill(r);
		enum http_errno e;
		size_t used;

		if (n == 0) {
			/* A body delimited by the end of the stream ends here. */
			http_parser_execute(&r->p, &settings, NULL, 0);
			if (!r->msg_done)
				k = sbx_error_set(err, -EPIPE, "stream ended mid-body");
			break;
		}
		if (n < 0) {
			k = read_failed(r, n, "body", r->body_timeout_ms, err);
			break;
		}
		used = http_parser_execute(&r->p, &settings, r->buf + r->off, r->len - r->off);
		e = HTTP_PARSER_ERRNO(&r->p);
		if (e != HPE_OK && !(e == HPE_PAUSED && r->msg_done)) {
			k = parse_error(r, "body", err);
			break;
		}
		/* The raw framing goes on as it came. */
		if (out && used && (k = sbx_stream_write(out, r->buf + r->off, used)) < 0) {
			k = sbx_error_set(err, k, "writing HTTP body: %s", strerror(-k));
			break;
		}
		r->off += used;
	}
	r->deadline = 0;
	r->fn = NULL;
	return k;
}
