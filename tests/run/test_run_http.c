/* SPDX-License-Identifier: MIT */
/* lib/run's HTTP/1.1 framing on socketpairs: parsing, chunks, hostile heads and bodies, deadlines.
 */
#include "test_run.h"

/* ---- helpers ---- */

static sbx_stream *stream_of(const char *text)
{
	int sv[2];
	sbx_stream *s;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(write(sv[1], text, strlen(text)), (ssize_t)strlen(text));
	close(sv[1]);
	ck_assert_int_eq(sbx_stream_from_fds(&s, sv[0], sv[0]), 0);
	return s;
}

/* ---- HTTP framing ---- */

START_TEST(http_parses_request_and_body)
{
	sbx_stream *s = stream_of("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
				  "Connection: close\r\n\r\nhelloGET / HTTP/1.1\r\n\r\n");
	http_reader r;
	http_head h;
	sbx_buf body = SBX_BUF_INIT(100);
	sbx_error err = SBX_ERROR_INIT;
	http_reader_init(&r, s, 1000);
	ck_assert_int_eq(http_read_head(&r, &h, true, &err), 0);
	ck_assert_str_eq(h.method, "POST");
	ck_assert_str_eq(h.target, "/mcp");
	ck_assert_int_eq(h.content_length, 5);
	ck_assert(h.close);
	ck_assert_str_eq(http_head_get(&h, "host"), "x");
	ck_assert_int_eq(http_relay_body(&r, &h, false, NULL, append_fn, &body, &err), 0);
	ck_assert_str_eq(sbx_buf_str(&body), "hello");
	http_head_free(&h);
	ck_assert_int_eq(http_read_head(&r, &h, true, &err), 0);
	ck_assert_str_eq(h.method, "GET");
	ck_assert(!h.close);
	http_head_free(&h);
	ck_assert_int_eq(http_read_head(&r, &h, true, &err), -ENODATA);
	http_head_free(&h);
	sbx_buf_free(&body);
	sbx_stream_close(s);
}
END_TEST

START_TEST(http_dechunks_response)
{
	sbx_stream *s = stream_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
				  "5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nX-T: 1\r\n\r\n");
	http_reader r;
	http_head h;
	sbx_buf body = SBX_BUF_INIT(100);
	sbx_error err = SBX_ERROR_INIT;

	http_reader_init(&r, s, 1000);
	ck_assert_int_eq(http_read_head(&r, &h, false, &err), 0);
	ck_assert_int_eq(h.status, 200);
	ck_assert(h.chunked);
	ck_assert_int_eq(http_relay_body(&r, &h, true, NULL, append_fn, &body, &err), 0);
	ck_assert_str_eq(sbx_buf_str(&body), "hello world");
	ck_assert(!http_reader_buffered(&r));
	http_head_free(&h);
	sbx_buf_free(&body);
	sbx_stream_close(s);
}
END_TEST

START_TEST(http_refuses_hostile_heads)
{
	static const char *const bad[] = {
		"POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length: 99999999999999\r\n\r\n",
		"GET /x HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
		"GET /x HTTP/2.0\r\n\r\n",
		"GET x HTTP/1.1\r\n\r\n",
		"GET /x HTTP/1.1\r\nBad Name: v\r\n\r\n",
		"GET /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
		"GET /x HTTP/1.1\r\nNoColon\r\n\r\n",
		"GET /x HTTP/1.1\r\nA: b", /* EOF mid-head */
		/* The parser is built lenient (HTTP_PARSER_STRICT=0); the wrapper is not. */
		"GET /x HTTP/1.1\r\nA: b\r\tfolded\r\n\r\n",
		"GET /x HTTP/1.1\r\nA: b\x01c\r\n\r\n",
		"GET /a\tb HTTP/1.1\r\n\r\n",
		"GET /x HTTP/1.1\r\nA\x7f: b\r\n\r\n",
		/* Smuggling: both framings, a chunked that is not last, a length twice. */
		"POST /x HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
		"POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
		"POST /x HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n",
		"GET http://evil/x HTTP/1.1\r\n\r\n",
		"GET * HTTP/1.1\r\n\r\n",
		"BREW /x HTTP/1.1\r\n\r\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sbx_stream *s = stream_of(bad[i]);
		http_reader r;
		http_head h;
		sbx_error err = SBX_ERROR_INIT;

		http_reader_init(&r, s, 1000);
		ck_assert_msg(http_read_head(&r, &h, true, &err) < 0, "accepted: %s", bad[i]);
		ck_assert(err.msg[0]);
		http_head_free(&h);
		sbx_stream_close(s);
	}
}
END_TEST

/* Chunk framing the old parser got wrong, and what must not pass a body. */
START_TEST(http_refuses_hostile_bodies)
{
	static const char *const bad[] = {
		/* 2^64 + 5: the size must not wrap (it was added before it was checked). */
		("HTTP/1.1 200 OK\r\nTransfer-Encoding: "
		 "chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n"),
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000001\r\n", /* 256 MiB + 1
										      */
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", /* EOF mid-body */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sbx_stream *s = stream_of(bad[i]);
		sbx_buf body = SBX_BUF_INIT(1 << 20);
		http_reader r;
		http_head h;
		sbx_error err = SBX_ERROR_INIT;
		int k;

		http_reader_init(&r, s, 1000);
		k = http_read_head(&r, &h, false, &err);
		if (k == 0)
			k = http_relay_body(&r, &h, true, NULL, append_fn, &body, &err);
		ck_assert_msg(k < 0, "accepted: %s", bad[i]);
		ck_assert(err.msg[0]);
		http_head_free(&h);
		sbx_buf_free(&body);
		sbx_stream_close(s);
	}
}
END_TEST

static int refuse_fn(const char *d, size_t n, void *ud)
{
	(void)d;
	(void)n;
	(void)ud;
	return -ENOBUFS;
}

/* Keep-alive framing: pipelined requests, a HEAD response's body, trailers, fn errors. */
START_TEST(http_keeps_message_boundaries)
{
	sbx_stream *s = stream_of("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
				  "3\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n"
				  "GET /b HTTP/1.1\r\nA:\r\nB:   v  \r\n\r\n"
				  "POST /c HTTP/1.0\r\nContent-Length: 2\r\n\r\nzz");
	sbx_buf body = SBX_BUF_INIT(100);
	sbx_error err = SBX_ERROR_INIT;
	http_reader r;
	http_head h;

	http_reader_init(&r, s, 1000);
	ck_assert_int_eq(http_read_head(&r, &h, true, &err), 0);
	ck_assert(h.chunked && !h.close);
	ck_assert_int_eq(http_relay_body(&r, &h, false, NULL, append_fn, &body, &err), 0);
	ck_assert_str_eq(sbx_buf_str(&body), "abc");
	ck_assert(http_reader_buffered(&r)); /* the next request is already here */
	http_head_free(&h);
	ck_assert_int_eq(http_read_head(&r, &h, true, &err), 0);
	ck_assert_str_eq(h.target, "/b");
	ck_assert_str_eq(http_head_get(&h, "A"), "");
	ck_assert_str_eq(http_head_get(&h, "B"), "v");
	ck_assert_int_eq(h.content_length, -1);
	ck_assert_int_eq(http_relay_body(&r, &h, false, NULL, append_fn, &body, &err), 0);
	http_head_free(&h);
	ck_assert_int_eq(http_read_head(&r, &h, true, &err), 0);
	ck_assert(h.close); /* HTTP/1.0 without keep-alive */
	ck_assert_int_eq(h.minor, 0);
	ck_assert_int_eq(http_relay_body(&r, &h, false, NULL, refuse_fn, NULL, &err), -ENOBUFS);
	http_head_free(&h);
	sbx_stream_close(s);
	sbx_buf_free(&body);

	/* A response to HEAD announces a body it does not send; the next response follows. */
	s = stream_of("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"
		      "HTTP/1.1 204 No Content\r\n\r\n");
	http_reader_init(&r, s, 1000);
	r.method = "HEAD";
	ck_assert_int_eq(http_read_head(&r, &h, false, &err), 0);
	ck_assert_int_eq(h.status, 200);
	ck_assert_int_eq(h.content_length, 99);
	ck_assert_int_eq(http_relay_body(&r, &h, true, NULL, NULL, NULL, &err), 0);
	http_head_free(&h);
	r.method = "GET";
	ck_assert_int_eq(http_read_head(&r, &h, false, &err), 0);
	ck_assert_int_eq(h.status, 204);
	ck_assert_str_eq(h.reason, "No Content");
	ck_assert(!http_reader_buffered(&r));
	http_head_free(&h);
	sbx_stream_close(s);
}
END_TEST

/* Slowloris: a head that trickles in is cut off at head_timeout_ms, a body at body_timeout_ms. */
START_TEST(http_heads_and_bodies_have_deadlines)
{
	int sv[2];
	sbx_stream *s;
	http_reader r;
	http_head h;
	sbx_error err = SBX_ERROR_INIT;
	struct timespec t0, t1;
	const char *head = "GET /slow HTTP/1.1\r\nHost: x\r\n";
	double ms;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(sbx_stream_from_fds(&s, sv[0], sv[0]), 0);
	http_reader_init(&r, s, 5000);
	r.head_timeout_ms = 300;
	r.body_timeout_ms = 300;
	/* One byte every 50 ms would never trip a per-read timeout. */
	if (fork() == 0) {
		for (size_t i = 0; head[i]; i++) {
			if (write(sv[1], head + i, 1) != 1)
				_exit(0);
			usleep(50000);
		}
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(http_read_head(&r, &h, true, &err), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	ck_assert_msg(ms >= 250 && ms < 1500, "head timed out after %.0f ms", ms);
	ck_assert_ptr_nonnull(strstr(err.msg, "not complete within 300 ms"));
	http_head_free(&h);
	sbx_stream_close(s);
	close(sv[1]);

	s = stream_of("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
	/* stream_of closed the writer: EOF, not a timeout. Use a live peer instead. */
	sbx_stream_close(s);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(write(sv[1], "POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", 44), 44);
	ck_assert_int_eq(sbx_stream_from_fds(&s, sv[0], sv[0]), 0);
	http_reader_init(&r, s, 5000);
	r.body_timeout_ms = 300;
	err = (sbx_error)SBX_ERROR_INIT;
	ck_assert_int_eq(http_read_head(&r, &h, true, &err), 0);
	ck_assert_int_eq(http_relay_body(&r, &h, false, NULL, NULL, NULL, &err), -ETIMEDOUT);
	ck_assert_ptr_nonnull(strstr(err.msg, "body not complete within 300 ms"));
	http_head_free(&h);
	sbx_stream_close(s);
	close(sv[1]);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}
END_TEST

START_TEST(http_caps_head_size)
{
	size_t n = HTTP_HEAD_MAX + 100;
	char *big = malloc(n + 64);
	sbx_stream *s;
	http_reader r;
	http_head h;
	sbx_error err = SBX_ERROR_INIT;
	int sv[2];

	strcpy(big, "GET / HTTP/1.1\r\nX: ");
	memset(big + strlen(big), 'a', n);
	big[n] = '\0';
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	ck_assert_int_gt(write(sv[1], big, strlen(big)), 0);
	ck_assert_int_eq(sbx_stream_from_fds(&s, sv[0], sv[0]), 0);
	http_reader_init(&r, s, 500);
	ck_assert_int_eq(http_read_head(&r, &h, true, &err), -EBADMSG);
	http_head_free(&h);
	sbx_stream_close(s);
	close(sv[1]);
	free(big);
}
END_TEST

void run_http_cases(Suite *s)
{
	SBX_TEST_CASE(s, "http", NULL, NULL, 0, http_parses_request_and_body,
		      http_dechunks_response, http_refuses_hostile_heads, http_caps_head_size,
		      http_refuses_hostile_bodies, http_keeps_message_boundaries,
		      http_heads_and_bodies_have_deadlines);
}
