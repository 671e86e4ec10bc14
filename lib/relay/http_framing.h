/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Just enough HTTP/1.1 for the relay, framed by Debian's libhttp-parser (the
 * nodejs parser libgit2 uses): read a message head with a hard cap and a
 * deadline, and move a body (Content-Length, chunked, or until EOF) from one
 * stream to another while handing the decoded payload to an observer. The
 * parser does the framing (chunk sizes, Content-Length, smuggling checks);
 * this wrapper adds the relay's limits and policy on top. Internal to lib/run.
 */

#include <http_parser.h>
#include <stdbool.h>
#include <stdint.h>

#include "sbx/buf.h"
#include "sbx/error.h"
#include "sbx/stream.h"

#define HTTP_HEAD_MAX	 (64 * 1024)
#define HTTP_HEADERS_MAX 100
#define HTTP_BODY_MAX	 (256LL * 1024 * 1024)

typedef struct http_reader {
	sbx_stream *s;
	int timeout_ms;	     /* longest wait for the next byte; -1: no limit */
	int head_timeout_ms; /* a whole head, from its first byte; 0: no limit */
	int body_timeout_ms; /* a whole body; 0: no limit */
	const int *stop;     /* when set and non-zero, a waiting read gives up: -ECANCELED */
	const char *method;  /* response mode: the request's method ("HEAD": no body) */
	int64_t until;	     /* CLOCK_MONOTONIC ms: no wait goes past it (-ETIMEDOUT); 0: none */
	/* Internal. */
	int64_t deadline; /* CLOCK_MONOTONIC ms; 0: none */
	http_parser p;
	struct http_head *cur; /* the head being parsed */
	sbx_buf text;
	size_t n_fields, head_bytes, trailer_bytes;
	int last;	/* the last header callback: 0 none, 1 name, 2 value */
	bool began;	/* a byte of the message was parsed */
	bool head_done; /* on_headers_complete seen */
	bool msg_done;	/* on_message_complete seen */
	bool bad_fold;	/* obsolete line folding in the head */
	char prev;	/* the byte before the current buffer, for fold detection */
	int cb_err;	/* why a callback stopped the parser */
	const char *cb_msg;
	size_t name_off[HTTP_HEADERS_MAX], value_off[HTTP_HEADERS_MAX];
	size_t url_off, method_off;
	int64_t body_total;
	int (*fn)(const char *, size_t, void *);
	void *fn_ud;
	size_t off, len;
	char buf[16384];
} http_reader;

typedef struct http_header {
	char *name; /* points into http_head.text */
	char *value;
} http_header;

typedef struct http_head {
	char *text; /* owned, NUL-separated strings */
	bool request;
	char *method; /* request */
	char *target;
	int status; /* response */
	char *reason;
	int minor; /* HTTP/1.<minor> */
	size_t n;
	http_header h[HTTP_HEADERS_MAX];
	int64_t content_length; /* -1 when absent */
	bool chunked;
	bool close; /* Connection: close, or HTTP/1.0 without keep-alive */
} http_head;

void http_reader_init(http_reader *r, sbx_stream *s, int timeout_ms);

/* True when bytes already read are waiting in the reader. */
bool http_reader_buffered(const http_reader *r);

/*
 * Reads one head (through the blank line) and parses it into *h (freed with
 * http_head_free). Returns 0, -ENODATA on a clean EOF before any byte,
 * -EBADMSG for a malformed or oversized head, -ETIMEDOUT when the head did
 * not arrive within head_timeout_ms of its first byte (or a byte within
 * timeout_ms), or the stream's error. On failure *h holds nothing.
 */
int http_read_head(http_reader *r, http_head *h, bool request, sbx_error *err);

void http_head_free(http_head *h);

/* The value of a header (case-insensitive name), or NULL. */
const char *http_head_get(const http_head *h, const char *name);

/* True when a response to this request method with this status has no body. */
bool http_response_bodyless(const char *method, int status);

/*
 * Writes the head to out with hop-by-hop headers (Connection, Keep-Alive,
 * Proxy-Connection, TE, Trailer, Upgrade) removed and `Connection: close` or
 * `keep-alive` added as asked. The start line is kept as read.
 */
int http_write_head(sbx_stream *out, const http_head *h, bool keep_alive);

/* Called with decoded body bytes; a negative return stops the transfer. */
typedef int (*http_body_fn)(const char *data, size_t n, void *userdata);

/*
 * Moves a body framed as h says from r to out (NULL: read and drop), raw
 * framing forwarded as is, decoded bytes to fn (may be NULL). until_eof
 * allows a response delimited by the end of the stream. Returns 0 when the
 * body ended cleanly, -ETIMEDOUT past body_timeout_ms, or a negative errno
 * (a negative return of fn is passed on).
 */
int http_relay_body(http_reader *r, const http_head *h, bool until_eof, sbx_stream *out,
		    http_body_fn fn, void *userdata, sbx_error *err);
