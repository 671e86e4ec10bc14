/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http.h"
#include "sbx/cleanup.h"

void http_reader_init(http_reader *r, sbx_stream *s, int timeout_ms)
{
	r->s = s;
	r->timeout_ms = timeout_ms;
	r->stop = NULL;
	r->off = r->len = 0;
}

bool http_reader_buffered(const http_reader *r)
{
	return r->off < r->len;
}

static ssize_t fill(http_reader *r)
{
	ssize_t n;

	if (r->off < r->len)
		return (ssize_t)(r->len - r->off);
	r->off = r->len = 0;
	/* Wait in short slices so a stop request is seen promptly. */
	for (int waited = 0;;) {
		int slice = r->stop ? 200 : r->timeout_ms;

		if (r->stop && r->timeout_ms >= 0 && r->timeout_ms - waited < slice)
			slice = r->timeout_ms - waited;
		n = sbx_stream_read(r->s, r->buf, sizeof(r->buf), slice);
		if (n != -ETIMEDOUT || !r->stop)
			break;
		if (__atomic_load_n(r->stop, __ATOMIC_ACQUIRE))
			return -ECANCELED;
		waited += slice;
		if (r->timeout_ms >= 0 && waited >= r->timeout_ms)
			break;
	}
	if (n > 0)
		r->len = (size_t)n;
	return n;
}

void http_head_free(http_head *h)
{
	free(h->text);
	memset(h, 0, sizeof(*h));
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static bool has_token(const char *list, const char *token)
{
	size_t n = strlen(token);

	for (const char *p = list; p && *p;) {
		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		if (strncasecmp(p, token, n) == 0 &&
		    (p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == ';' || p[n] == '\t'))
			return true;
		p = strchr(p, ',');
	}
	return false;
}

static int parse_start(http_head *h, char *line, sbx_error *err)
{
	char *sp1 = strchr(line, ' '), *sp2;

	if (!sp1)
		return sbx_error_set(err, -EBADMSG, "malformed HTTP start line");
	*sp1++ = '\0';
	if (h->request) {
		sp2 = strchr(sp1, ' ');
		if (!sp2)
			return sbx_error_set(err, -EBADMSG, "malformed HTTP request line");
		*sp2++ = '\0';
		h->method = line;
		h->target = sp1;
		if (strncmp(sp2, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)sp2[7]))
			return sbx_error_set(err, -EBADMSG, "unsupported HTTP version");
		h->minor = sp2[7] - '0';
		if (!*h->method || strlen(h->method) > 16 || h->target[0] != '/')
			return sbx_error_set(err, -EBADMSG, "malformed HTTP request line");
	} else {
		char *end;
		long st;

		if (strncmp(line, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)line[7]))
			return sbx_error_set(err, -EBADMSG, "unsupported HTTP version");
		h->minor = line[7] - '0';
		st = strtol(sp1, &end, 10);
		if (end != sp1 + 3 || st < 100 || st > 599)
			return sbx_error_set(err, -EBADMSG, "malformed HTTP status line");
		h->status = (int)st;
		h->reason = *end == ' ' ? end + 1 : end;
	}
	return 0;
}

static int parse_head(http_head *h, sbx_error *err)
{
	char *line = h->text, *next;
	const char *v;
	int r;

	next = strchr(line, '\n');
	if (!next)
		return sbx_error_set(err, -EBADMSG, "malformed HTTP head");
	*next++ = '\0';
	trim(line);
	r = parse_start(h, line, err);
	if (r < 0)
		return r;
	for (line = next; *line; line = next) {
		char *colon;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (line[0] == '\r' || line[0] == '\0')
			break;
		if (line[0] == ' ' || line[0] == '\t')
			return sbx_error_set(err, -EBADMSG, "obsolete header folding refused");
		colon = strchr(line, ':');
		if (!colon || colon == line)
			return sbx_error_set(err, -EBADMSG, "malformed HTTP header line");
		if (h->n >= HTTP_HEADERS_MAX)
			return sbx_error_set(err, -EBADMSG, "more than %d HTTP headers",
					     HTTP_HEADERS_MAX);
		*colon = '\0';
		for (char *c = line; c < colon; c++)
			if (*c == ' ' || *c == '\t')
				return sbx_error_set(err, -EBADMSG, "space in HTTP header name");
		h->h[h->n].name = line;
		h->h[h->n].value = trim(colon + 1);
		h->n++;
	}

	h->content_length = -1;
	for (size_t i = 0; i < h->n; i++) {
		if (strcasecmp(h->h[i].name, "Content-Length") == 0) {
			char *end;
			long long cl = strtoll(h->h[i].value, &end, 10);

			if (end == h->h[i].value || *end || cl < 0 || cl > HTTP_BODY_MAX ||
			    (h->content_length >= 0 && h->content_length != cl))
				return sbx_error_set(err, -EBADMSG, "bad Content-Length '%s'",
						     h->h[i].value);
			h->content_length = cl;
		}
	}
	v = http_head_get(h, "Transfer-Encoding");
	if (v) {
		if (strcasecmp(v, "chunked") != 0)
			return sbx_error_set(err, -EBADMSG, "unsupported Transfer-Encoding '%s'",
					     v);
		h->chunked = true;
		h->content_length = -1; /* chunked wins (RFC 9112 6.3) */
	}
	v = http_head_get(h, "Connection");
	h->close = h->minor == 0 ? !has_token(v, "keep-alive") : has_token(v, "close");
	return 0;
}

int http_read_head(http_reader *r, http_head *h, bool request, sbx_error *err)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(HTTP_HEAD_MAX);
	size_t scanned = 0;

	memset(h, 0, sizeof(*h));
	h->request = request;
	for (;;) {
		ssize_t n = fill(r);
		const char *end = NULL;
		size_t take;

		if (n == 0)
			return b.len == 0
				       ? -ENODATA
				       : sbx_error_set(err, -EBADMSG, "connection closed mid-head");
		if (n < 0)
			return sbx_error_set(err, (int)n, "reading HTTP head: %s",
					     strerror((int)-n));
		/* Skip blank lines before a request (RFC 9112 2.2). */
		while (b.len == 0 && r->off < r->len &&
		       (r->buf[r->off] == '\r' || r->buf[r->off] == '\n'))
			r->off++;
		if (r->off == r->len)
			continue;
		take = r->len - r->off;
		if (sbx_buf_append(&b, r->buf + r->off, take) < 0)
			return sbx_error_set(err, -EBADMSG, "HTTP head larger than %d bytes",
					     HTTP_HEAD_MAX);
		for (size_t i = scanned > 3 ? scanned - 3 : 0; i < b.len; i++) {
			if (b.data[i] == '\n' &&
			    ((i >= 1 && b.data[i - 1] == '\n') ||
			     (i >= 2 && b.data[i - 1] == '\r' && b.data[i - 2] == '\n'))) {
				end = b.data + i + 1;
				break;
			}
		}
		scanned = b.len;
		if (end) {
			size_t used = (size_t)(end - b.data);
			/* Give back what belongs to the body. */
			r->off = r->len - (b.len - used);
			b.len = used;
			b.data[used] = '\0';
			break;
		}
		r->off = r->len;
	}
	if (memchr(b.data, '\0', b.len))
		return sbx_error_set(err, -EBADMSG, "NUL byte in HTTP head");
	h->text = sbx_buf_steal(&b, NULL);
	if (!h->text)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return parse_head(h, err);
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

/* Moves exactly n bytes (n < 0: until EOF). */
static int move(http_reader *r, int64_t n, sbx_stream *out, http_body_fn fn, void *ud, bool decoded,
		sbx_error *err)
{
	while (n != 0) {
		ssize_t got = fill(r);
		size_t take;
		int k;

		if (got == 0)
			return n < 0 ? 0 : sbx_error_set(err, -EPIPE, "stream ended mid-body");
		if (got < 0)
			return sbx_error_set(err, (int)got, "reading HTTP body: %s",
					     strerror((int)-got));
		take = r->len - r->off;
		if (n > 0 && (int64_t)take > n)
			take = (size_t)n;
		if (out && (k = sbx_stream_write(out, r->buf + r->off, take)) < 0)
			return sbx_error_set(err, k, "writing HTTP body: %s", strerror(-k));
		if (fn && decoded && (k = fn(r->buf + r->off, take, ud)) < 0)
			return sbx_error_set(err, k, "HTTP body refused");
		r->off += take;
		if (n > 0)
			n -= (int64_t)take;
	}
	return 0;
}

/* Reads one CRLF-terminated line of a chunked body and forwards it whole. */
static int chunk_line(http_reader *r, sbx_stream *out, char *line, size_t max, sbx_error *err)
{
	size_t len = 0;
	int k;

	for (;;) {
		ssize_t got = fill(r);
		char c;

		if (got <= 0)
			return sbx_error_set(err, got < 0 ? (int)got : -EPIPE,
					     "stream ended in chunk framing");
		c = r->buf[r->off++];
		if (len + 2 >= max)
			return sbx_error_set(err, -EBADMSG, "chunk line too long");
		line[len++] = c;
		if (c == '\n')
			break;
	}
	if (out && (k = sbx_stream_write(out, line, len)) < 0)
		return sbx_error_set(err, k, "writing HTTP body: %s", strerror(-k));
	line[--len] = '\0';
	if (len > 0 && line[len - 1] == '\r')
		line[--len] = '\0';
	return 0;
}

int http_relay_body(http_reader *r, const http_head *h, bool until_eof, sbx_stream *out,
		    http_body_fn fn, void *ud, sbx_error *err)
{
	char line[256];
	int64_t total = 0;
	int k;

	if (!h->chunked) {
		if (h->content_length >= 0)
			return move(r, h->content_length, out, fn, ud, true, err);
		return until_eof ? move(r, -1, out, fn, ud, true, err) : 0;
	}
	for (;;) {
		char *end;
		unsigned long long size;

		k = chunk_line(r, out, line, sizeof(line), err);
		if (k < 0)
			return k;
		size = strtoull(line, &end, 16);
		if (end == line || (*end && *end != ';' && *end != ' '))
			return sbx_error_set(err, -EBADMSG, "bad chunk size line");
		total += (int64_t)size;
		if (size > (unsigned long long)HTTP_BODY_MAX || total > HTTP_BODY_MAX)
			return sbx_error_set(err, -EBADMSG, "body larger than %lld bytes",
					     HTTP_BODY_MAX);
		if (size == 0)
			break;
		k = move(r, (int64_t)size, out, fn, ud, true, err);
		if (k < 0)
			return k;
		k = chunk_line(r, out, line, sizeof(line), err);
		if (k < 0)
			return k;
		if (line[0])
			return sbx_error_set(err, -EBADMSG, "missing CRLF after chunk");
	}
	/* Trailers, up to the blank line. */
	for (int i = 0; i < HTTP_HEADERS_MAX; i++) {
		k = chunk_line(r, out, line, sizeof(line), err);
		if (k < 0)
			return k;
		if (!line[0])
			return 0;
	}
	return sbx_error_set(err, -EBADMSG, "too many trailers");
}
