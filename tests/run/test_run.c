/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of lib/run without an engine: the HTTP framing, the relay
 * against a fake in-process server on a unix socket (pooling, streaming,
 * transcript, Host/Origin checks, hostile input), result.json, run ids,
 * run directories and provenance on a scratch git repository.
 */
#include "check_main.h"
#include "test_files.h"
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "http_framing.h"
#include "rundir.h"
#include "sbx/json.h"
#include "sbx/relay.h"
#include "sbx/run.h"
#include "sbx/stream.h"
#include "transcript.h"

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

static int append_fn(const char *d, size_t n, void *ud)
{
	return sbx_buf_append(ud, d, n);
}

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

/* ---- a fake in-container server ---- */

typedef struct fake {
	char path[300];
	int lfd;
	pthread_t t;
	int conns;	 /* connections accepted */
	int close_after; /* close a connection after this many exchanges (0: never) */
	volatile int running;
} fake;

static void fake_reply(sbx_stream *s, int status, const char *ctype, const char *body, bool chunked)
{
	char head[512];

	if (chunked) {
		snprintf(head, sizeof(head),
			 "HTTP/1.1 %d X\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n",
			 status, ctype);
		sbx_stream_write(s, head, strlen(head));
		for (const char *p = body; *p;) {
			size_t n = strlen(p) > 7 ? 7 : strlen(p);
			char c[32];
			snprintf(c, sizeof(c), "%zx\r\n", n);
			sbx_stream_write(s, c, strlen(c));
			sbx_stream_write(s, p, n);
			sbx_stream_write(s, "\r\n", 2);
			p += n;
		}
		sbx_stream_write(s, "0\r\n\r\n", 5);
		return;
	}
	snprintf(head, sizeof(head),
		 "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\nMcp-Session-Id: "
		 "s1\r\n\r\n",
		 status, ctype, strlen(body));
	sbx_stream_write(s, head, strlen(head));
	sbx_stream_write(s, body, strlen(body));
}

static void *fake_conn(void *arg)
{
	fake *f = ((void **)arg)[0];
	int fd = (int)(intptr_t)((void **)arg)[1];
	sbx_stream *s;
	http_reader r;
	int n = 0;

	free(arg);
	sbx_stream_from_fds(&s, fd, fd);
	http_reader_init(&r, s, 5000);
	for (;;) {
		http_head h;
		sbx_buf body = SBX_BUF_INIT(1 << 20);
		sbx_error err = SBX_ERROR_INIT;

		if (http_read_head(&r, &h, true, &err) < 0) {
			http_head_free(&h);
			break;
		}
		http_relay_body(&r, &h, false, NULL, append_fn, &body, &err);
		if (strcmp(h.target, "/mcp") == 0 && body.len)
			fake_reply(s, 200, "application/json", body.data, false);
		else if (strcmp(h.target, "/mcp") == 0 && strcmp(h.method, "DELETE") == 0)
			fake_reply(s, 204, "text/plain", "", false);
		else if (strcmp(h.target, "/sse") == 0)
			fake_reply(s, 200, "text/event-stream",
				   "event: message\ndata: {\"a\":1}\n\nevent: message\ndata: "
				   "{\"b\":2}\n\n",
				   true);
		else if (strcmp(h.target, "/task/status") == 0)
			fake_reply(s, 200, "application/json", "{\"status\":\"running\"}", false);
		else if (strncmp(h.target, "/control/", 9) == 0)
			fake_reply(s, 200, "application/json", "{\"status\":\"running\"}", false);
		else if (strcmp(h.target, "/host") == 0)
			fake_reply(s, 200, "text/plain", http_head_get(&h, "Host"), false);
		else
			fake_reply(s, 404, "text/plain", "nope", false);
		http_head_free(&h);
		sbx_buf_free(&body);
		if (f->close_after && ++n >= f->close_after)
			break;
	}
	sbx_stream_close(s);
	return NULL;
}

static void *fake_main(void *arg)
{
	fake *f = arg;

	while (f->running) {
		int fd = accept(f->lfd, NULL, NULL);
		void **a;
		pthread_t t;

		if (fd < 0)
			break;
		__atomic_add_fetch(&f->conns, 1, __ATOMIC_SEQ_CST);
		a = malloc(2 * sizeof(void *));
		a[0] = f;
		a[1] = (void *)(intptr_t)fd;
		pthread_create(&t, NULL, fake_conn, a);
		pthread_detach(t);
	}
	return NULL;
}

static void fake_start(fake *f)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	snprintf(f->path, sizeof(f->path), "%s/mcp.sock", sbx_test_scratch);
	strcpy(sa.sun_path, f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(f->lfd, 16), 0);
	f->running = 1;
	pthread_create(&f->t, NULL, fake_main, f);
}

static void fake_stop(fake *f)
{
	f->running = 0;
	shutdown(f->lfd, SHUT_RDWR);
	close(f->lfd);
	pthread_join(f->t, NULL);
}

static int fake_open(sbx_stream **out, void *ud, sbx_error *err)
{
	fake *f = ud;
	int r = sbx_stream_connect_unix(out, f->path);

	return r < 0 ? sbx_error_set(err, r, "connect: %s", strerror(-r)) : 0;
}

/* A raw HTTP client: sends req, reads one response. */
static int client_connect(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(0x7f000001);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static int exchange_raw(sbx_stream *s, http_reader *r, const char *req, sbx_buf *body, http_head *h)
{
	sbx_error err = SBX_ERROR_INIT;
	int k;

	ck_assert_int_eq(sbx_stream_write(s, req, strlen(req)), 0);
	k = http_read_head(r, h, false, &err);
	if (k < 0)
		return k;
	return http_relay_body(r, h, true, NULL, append_fn, body, &err);
}

static sbx_relay *relay_on(fake *f, const char *transcript)
{
	sbx_relay_opts o = SBX_RELAY_OPTS_INIT;
	sbx_relay *relay;
	sbx_error err = SBX_ERROR_INIT;

	o.open = fake_open;
	o.open_userdata = f;
	o.transcript_path = transcript;
	o.warm = 1;
	ck_assert_msg(sbx_relay_start(&relay, &o, &err) == 0, "%s", err.msg);
	sbx_relay_warm(relay);
	return relay;
}

START_TEST(relay_forwards_pools_and_records)
{
	fake f = {0};
	char transcript[300], req[512];
	sbx_relay *relay;
	sbx_relay_stats st;
	sbx_stream *cs;
	http_reader r;
	uint16_t port;
	int fd;

	sbx_test_scratch_setup();
	fake_start(&f);
	snprintf(transcript, sizeof(transcript), "%s/transcript.jsonl", sbx_test_scratch);
	relay = relay_on(&f, transcript);
	port = sbx_relay_port(relay);
	fd = client_connect(port);
	sbx_stream_from_fds(&cs, fd, fd);
	http_reader_init(&r, cs, 5000);
	for (int i = 0; i < 5; i++) {
		http_head h;
		sbx_buf body = SBX_BUF_INIT(1 << 20);
		const char *msg = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";

		snprintf(req, sizeof(req),
			 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: "
			 "application/json\r\nContent-Length: %zu\r\n\r\n%s",
			 port, strlen(msg), msg);
		ck_assert_int_eq(exchange_raw(cs, &r, req, &body, &h), 0);
		ck_assert_int_eq(h.status, 200);
		ck_assert_str_eq(sbx_buf_str(&body), msg);
		ck_assert_str_eq(http_head_get(&h, "Mcp-Session-Id"), "s1");
		http_head_free(&h);
		sbx_buf_free(&body);
	}
	{ /* streaming SSE passes through, chunked */
		http_head h;
		sbx_buf body = SBX_BUF_INIT(1 << 20);

		snprintf(req, sizeof(req), "GET /sse HTTP/1.1\r\nHost: localhost:%u\r\n\r\n", port);
		ck_assert_int_eq(exchange_raw(cs, &r, req, &body, &h), 0);
		ck_assert(h.chunked);
		ck_assert_ptr_nonnull(strstr(sbx_buf_str(&body), "data: {\"b\":2}"));
		http_head_free(&h);
		sbx_buf_free(&body);
	}
	{ /* a bodiless 204 keeps the connection usable */
		http_head h;
		sbx_buf body = SBX_BUF_INIT(1 << 20);

		snprintf(req, sizeof(req), "DELETE /mcp HTTP/1.1\r\nHost: localhost:%u\r\n\r\n",
			 port);
		ck_assert_int_eq(exchange_raw(cs, &r, req, &body, &h), 0);
		ck_assert_int_eq(h.status, 204);
		http_head_free(&h);
		sbx_buf_free(&body);
	}
	sbx_stream_close(cs);

	/* The host's own requests go through the same pool, not recorded. */
	{
		sbx_relay_response resp;
		sbx_error err = SBX_ERROR_INIT;

		ck_assert_int_eq(sbx_relay_request(relay, "GET", "/task/status", NULL, NULL, 0,
						   false, 5000, &resp, &err),
				 0);
		ck_assert_int_eq(resp.status, 200);
		ck_assert_str_eq(resp.body, "{\"status\":\"running\"}");
		sbx_relay_response_free(&resp);
	}
	/* The relay counts an exchange just after the client has its answer. */
	for (int i = 0; i < 100; i++) {
		sbx_relay_get_stats(relay, &st);
		if (st.requests == 8 && st.transcript_lines == 15)
			break;
		usleep(10000);
	}
	ck_assert_uint_eq(st.requests, 8);
	ck_assert_uint_ge(st.reused, 6);
	ck_assert_uint_le(st.streams_opened, 3);
	/* 5 POSTs x 2 + SSE request + 2 events + DELETE and its 204. */
	ck_assert_uint_eq(st.transcript_lines, 15);
	sbx_relay_free(relay);
	fake_stop(&f);

	{
		char *text = NULL;
		size_t len;
		sbx_error err = SBX_ERROR_INIT;
		cJSON *j = NULL;
		char *nl;

		ck_assert_int_eq(sbx_rundir__read(sbx_test_scratch, "transcript.jsonl", 1 << 20,
						  &text, &len, &err),
				 0);
		nl = strchr(text, '\n');
		ck_assert_ptr_nonnull(nl);
		ck_assert_int_eq(sbx_json_parse(text, (size_t)(nl - text), &j, &err), 0);
		ck_assert_str_eq(sbx_json_get_string(j, "dir", ""), "agent->server");
		ck_assert_str_eq(sbx_json_get_string(sbx_json_get(j, "message"), "method", ""),
				 "tools/list");
		ck_assert_ptr_nonnull(sbx_json_get(j, "ts"));
		cJSON_Delete(j);
		ck_assert_ptr_nonnull(strstr(text, "\"message\":{\"b\":2}"));
		free(text);
	}
	sbx_test_scratch_teardown();
}
END_TEST

/* sbx_relay_stream_get: a whole response read off a stream outside a relay, and whether it stays
 * usable. */
static const struct {
	const char *answer; /* what the server sends; NULL: it hangs up */
	int ret, status;
} stream_get_rows[] = {
	{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 1, 200},
	{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 1, 200},
	{"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n", 1, 503},
	{"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 0, 200},
	/* Bytes past the body: the stream is out of step, never reused. */
	{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200", 0, 200},
	{"not http at all\r\n\r\n", -1, 0},
	{NULL, -1, 0},
};

START_TEST(relay_stream_get_reads_a_whole_answer)
{
	_cleanup_stream_ sbx_stream *s = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char req[256];
	int sv[2], status = -7, r;
	ssize_t n;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(sbx_stream_from_fds(&s, sv[0], sv[0]), 0);
	if (stream_get_rows[_i].answer)
		ck_assert_int_eq(write(sv[1], stream_get_rows[_i].answer,
				       strlen(stream_get_rows[_i].answer)),
				 (ssize_t)strlen(stream_get_rows[_i].answer));
	else
		shutdown(sv[1], SHUT_WR);
	r = sbx_relay_stream_get(s, "/health", 2000, &status, &err);
	if (stream_get_rows[_i].ret < 0) {
		ck_assert_int_lt(r, 0);
		ck_assert_ptr_nonnull(sbx_error_message(&err));
	} else {
		ck_assert_int_eq(r, stream_get_rows[_i].ret);
		ck_assert_int_eq(status, stream_get_rows[_i].status);
	}
	n = read(sv[1], req, sizeof(req) - 1);
	ck_assert_int_gt(n, 0);
	req[n] = '\0';
	ck_assert_ptr_nonnull(strstr(req, "GET /health HTTP/1.1\r\n"));
	ck_assert_ptr_nonnull(strstr(req, "Connection: keep-alive\r\n"));
	close(sv[1]);
}
END_TEST

START_TEST(relay_retries_a_stream_the_server_closed)
{
	fake f = {.close_after = 1};
	sbx_relay *relay;
	sbx_relay_stats st;

	sbx_test_scratch_setup();
	fake_start(&f);
	relay = relay_on(&f, NULL);
	for (int i = 0; i < 4; i++) {
		sbx_relay_response resp;
		sbx_error err = SBX_ERROR_INIT;

		ck_assert_msg(sbx_relay_request(relay, "GET", "/task/status", NULL, NULL, 0, false,
						5000, &resp, &err) == 0,
			      "%s", err.msg);
		ck_assert_int_eq(resp.status, 200);
		sbx_relay_response_free(&resp);
		usleep(20000); /* let the server's close arrive */
	}
	sbx_relay_get_stats(relay, &st);
	ck_assert_uint_eq(st.requests, 4);
	sbx_relay_free(relay);
	fake_stop(&f);
	sbx_test_scratch_teardown();
}
END_TEST

static int status_of(uint16_t port, const char *req)
{
	sbx_stream *cs;
	http_reader r;
	http_head h;
	sbx_buf body = SBX_BUF_INIT(1 << 20);
	int fd = client_connect(port), st;

	sbx_stream_from_fds(&cs, fd, fd);
	http_reader_init(&r, cs, 5000);
	if (exchange_raw(cs, &r, req, &body, &h) < 0)
		st = -1;
	else
		st = h.status;
	http_head_free(&h);
	sbx_buf_free(&body);
	sbx_stream_close(cs);
	return st;
}

START_TEST(relay_refuses_foreign_hosts_and_garbage)
{
	fake f = {0};
	sbx_relay *relay;
	uint16_t port;
	char req[512];

	sbx_test_scratch_setup();
	fake_start(&f);
	relay = relay_on(&f, NULL);
	port = sbx_relay_port(relay);
	ck_assert_int_eq(status_of(port, "GET /task/status HTTP/1.1\r\nHost: evil.com\r\n\r\n"),
			 403);
	snprintf(req, sizeof(req),
		 "GET /task/status HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nOrigin: "
		 "http://evil.com\r\n\r\n",
		 port);
	ck_assert_int_eq(status_of(port, req), 403);
	/* A rebinding page's other shapes: no Host, another port, no port, a null Origin. */
	ck_assert_int_eq(status_of(port, "GET /task/status HTTP/1.0\r\n\r\n"), 403);
	ck_assert_int_eq(status_of(port, "GET /task/status HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n"),
			 403);
	ck_assert_int_eq(status_of(port, "GET /task/status HTTP/1.1\r\nHost: localhost\r\n\r\n"),
			 403);
	snprintf(req, sizeof(req),
		 "GET /task/status HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nOrigin: null\r\n\r\n", port);
	ck_assert_int_eq(status_of(port, req), 403);
	snprintf(req, sizeof(req),
		 "GET /task/status HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nOrigin: "
		 "http://localhost:%u\r\n\r\n",
		 port, port);
	ck_assert_int_eq(status_of(port, req), 200);
	ck_assert_int_eq(status_of(port, "BLAH\r\n\r\n"), 400);
	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: 999999999999\r\n\r\n",
		 port);
	ck_assert_int_eq(status_of(port, req), 400);
	/* Over the relay's 64 MiB body cap: 413; malformed chunking is a bad request, not a big
	 * one. */
	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: %llu\r\n\r\n", port,
		 65ULL << 20);
	ck_assert_int_eq(status_of(port, req), 413);
	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nTransfer-Encoding: chunked\r\n\r\n"
		 "zz\r\nhello\r\n0\r\n\r\n",
		 port);
	ck_assert_int_eq(status_of(port, req), 400);
	/* Requests the fake does not know pass through with the server's status. */
	snprintf(req, sizeof(req), "GET /nope HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", port);
	ck_assert_int_eq(status_of(port, req), 404);
	sbx_relay_free(relay);
	fake_stop(&f);
	sbx_test_scratch_teardown();
}
END_TEST

/*
 * The server's control API is the host's: an agent holding the run's token
 * still gets 403 for /control/..., however it spells the path, each refusal is
 * counted, nothing reaches the server; the host's own requests get through.
 */
START_TEST(relay_refuses_control_to_agents)
{
	static const char *const paths[] = {
		"/t0k/control/status",
		"/t0k/control/file/answer.txt",
		"/t0k/control/complete",
		"/t0k/control",
		"/t0k/control?x=1",
		"/t0k//control/status",
		"/t0k/./control/screenshot",
		"/t0k/%63ontrol/status",
		/* Decoded once, as the server does: "%63ontrol" is no route there (404). */
		"/t0k/%2563ontrol/status",
		"/t0k/CONTROL/status",
		"/t0k/v1/../control/status",
		"/t0k/mcp/%2e%2e/control/file/x",
		"/t0k/control%2Fstatus",
	};
	fake f = {0};
	sbx_relay_opts o = SBX_RELAY_OPTS_INIT;
	sbx_relay_response resp = {0};
	sbx_relay *relay;
	sbx_relay_stats st;
	sbx_error err = SBX_ERROR_INIT;
	unsigned refused = 0;
	char req[512];
	uint16_t port;

	sbx_test_scratch_setup();
	fake_start(&f);
	o.open = fake_open;
	o.open_userdata = &f;
	o.token = "t0k";
	ck_assert_msg(sbx_relay_start(&relay, &o, &err) == 0, "%s", err.msg);
	port = sbx_relay_port(relay);
	for (size_t i = 0; i < SBX_ELEMENTSOF(paths); i++) {
		bool twice = strstr(paths[i], "%25") != NULL;
		int want = twice ? 404 : 403;

		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
			 paths[i], port);
		ck_assert_msg(status_of(port, req) == want, "%s: want %d", paths[i], want);
		refused += !twice;
	}
	/* The token as a Bearer credential changes nothing; a POST is refused unread. */
	snprintf(req, sizeof(req),
		 "POST /control/complete HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		 "Authorization: Bearer t0k\r\nContent-Length: 2\r\n\r\n{}",
		 port);
	ck_assert_int_eq(status_of(port, req), 403);
	snprintf(req, sizeof(req),
		 "GET http://localhost/control/status HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		 "Authorization: Bearer t0k\r\n\r\n",
		 port);
	ck_assert_int_eq(status_of(port, req), 400); /* only origin-form targets are read */
	refused++;
	/* An agent's ordinary paths still pass. */
	snprintf(req, sizeof(req), "GET /t0k/task/status HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
		 port);
	ck_assert_int_eq(status_of(port, req), 200);
	sbx_relay_get_stats(relay, &st);
	ck_assert_uint_eq(st.forbidden, refused);
	ck_assert_uint_eq(st.unauthorized, 0);
	/* The host's own request is not an agent's. */
	ck_assert_int_eq(sbx_relay_request(relay, "GET", "/control/status", NULL, NULL, 0, false,
					   5000, &resp, &err),
			 0);
	ck_assert_int_eq(resp.status, 200);
	sbx_relay_response_free(&resp);
	sbx_relay_free(relay);
	fake_stop(&f);
	sbx_test_scratch_teardown();
}
END_TEST

/* Reads one status line from fd (0: closed without an answer). */
static int status_on(int fd)
{
	char buf[64] = {0};
	size_t n = 0;

	while (n < sizeof(buf) - 1) {
		ssize_t k = read(fd, buf + n, sizeof(buf) - 1 - n);

		if (k <= 0)
			break;
		n += (size_t)k;
		if (memchr(buf, '\n', n))
			break;
	}
	return strncmp(buf, "HTTP/1.1 ", 9) == 0 ? atoi(buf + 9) : 0;
}

/* Slots, deadlines and the body budget: what 64 slow or greedy connections may hold. */
START_TEST(relay_bounds_slots_time_and_memory)
{
	fake f = {0};
	sbx_relay_opts o = SBX_RELAY_OPTS_INIT;
	sbx_relay *relay;
	sbx_relay_stats st;
	sbx_error err = SBX_ERROR_INIT;
	uint16_t port;
	char req[512];
	int idle[4], slow, a, b;
	static char mib[1 << 20];

	sbx_test_scratch_setup();
	fake_start(&f);
	o.open = fake_open;
	o.open_userdata = &f;
	o.max_clients = 4;
	o.head_timeout_ms = 500;
	o.body_timeout_ms = 2000;
	o.max_buffered = 2 << 20;
	ck_assert_msg(sbx_relay_start(&relay, &o, &err) == 0, "%s", err.msg);
	port = sbx_relay_port(relay);
	snprintf(req, sizeof(req), "GET /task/status HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", port);

	/* Four silent connections fill the table; a fifth evicts the oldest and is served. */
	for (int i = 0; i < 4; i++)
		idle[i] = client_connect(port);
	usleep(50000);
	ck_assert_int_eq(status_of(port, req), 200);
	ck_assert_int_eq(status_on(idle[0]), 0); /* closed by the eviction */
	/* The others are closed by the head timeout, silent or trickling. */
	slow = client_connect(port);
	ck_assert_int_eq(write(slow, "GET /task", 9), 9);
	for (int i = 1; i < 4; i++)
		ck_assert_int_eq(status_on(idle[i]), 0);
	ck_assert_int_eq(status_on(slow), 0);
	for (int i = 0; i < 4; i++)
		close(idle[i]);
	close(slow);

	/* 2 MiB declared and half sent: 1 MiB is free, 1 MiB of the budget is held. */
	memset(mib, 'x', sizeof(mib));
	a = client_connect(port);
	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: %d\r\n\r\n", port,
		 2 << 20);
	ck_assert_int_eq(write(a, req, strlen(req)), (ssize_t)strlen(req));
	ck_assert_int_eq(write(a, mib, sizeof(mib)), (ssize_t)sizeof(mib));
	usleep(100000);
	/* 3 MiB more does not fit: 503 before a byte of it is read. */
	b = client_connect(port);
	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: %d\r\n\r\n", port,
		 3 << 20);
	ck_assert_int_eq(write(b, req, strlen(req)), (ssize_t)strlen(req));
	ck_assert_int_eq(status_on(b), 503);
	close(b);
	/* A small body still goes through. */
	snprintf(req, sizeof(req),
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Length: 2\r\n\r\n{}", port);
	ck_assert_int_eq(status_of(port, req), 200);
	/* The held body ends by the body timeout: 408. */
	ck_assert_int_eq(status_on(a), 408);
	close(a);
	sbx_relay_get_stats(relay, &st);
	ck_assert_uint_ge(st.evicted, 1);
	ck_assert_uint_ge(st.timed_out, 4);
	ck_assert_uint_eq(st.over_budget, 1);
	ck_assert_uint_le(st.buffered_peak, 2 << 20);
	ck_assert_uint_ge(st.buffered_peak, 1 << 20);
	sbx_relay_free(relay);
	fake_stop(&f);
	sbx_test_scratch_teardown();
}
END_TEST

START_TEST(relay_listens_on_a_private_unix_socket)
{
	fake f = {0};
	sbx_relay_opts o = SBX_RELAY_OPTS_INIT;
	sbx_relay *relay;
	sbx_error err = SBX_ERROR_INIT;
	char path[400];
	sbx_stream *cs;
	http_reader r;
	http_head h;
	sbx_buf body = SBX_BUF_INIT(1 << 20);
	struct stat st;
	int fd;

	sbx_test_scratch_setup();
	fake_start(&f);
	snprintf(path, sizeof(path), "%s/relay.sock", sbx_test_scratch);
	o.open = fake_open;
	o.open_userdata = &f;
	o.unix_path = path;
	o.token = "t0k";
	/* Never over another kind of file. */
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(sbx_relay_start(&relay, &o, &err), -EEXIST);
	unlink(path);
	err = (sbx_error)SBX_ERROR_INIT;
	ck_assert_msg(sbx_relay_start(&relay, &o, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sbx_relay_port(relay), 0);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(sbx_stream_connect_unix(&cs, path), 0);
	http_reader_init(&r, cs, 5000);
	/* Any Host will do on a unix socket; the token will not. */
	ck_assert_int_eq(
		exchange_raw(cs, &r, "GET /task/status HTTP/1.1\r\nHost: x\r\n\r\n", &body, &h), 0);
	ck_assert_int_eq(h.status, 401);
	http_head_free(&h);
	sbx_stream_close(cs);
	ck_assert_int_eq(sbx_stream_connect_unix(&cs, path), 0);
	http_reader_init(&r, cs, 5000);
	ck_assert_int_eq(exchange_raw(cs, &r,
				      "GET /t0k/task/status HTTP/1.1\r\nHost: localhost\r\n\r\n",
				      &body, &h),
			 0);
	ck_assert_int_eq(h.status, 200);
	http_head_free(&h);
	sbx_stream_close(cs);
	sbx_relay_free(relay);
	ck_assert_int_ne(lstat(path, &st), 0); /* removed */
	sbx_buf_free(&body);
	fake_stop(&f);
	sbx_test_scratch_teardown();
}
END_TEST

START_TEST(relay_reports_a_dead_server)
{
	fake f = {0};
	sbx_relay *relay;
	sbx_relay_response resp;
	sbx_error err = SBX_ERROR_INIT;
	char req[256];

	sbx_test_scratch_setup();
	snprintf(f.path, sizeof(f.path), "%s/none.sock", sbx_test_scratch);
	relay = relay_on(&f, NULL);
	ck_assert_int_lt(sbx_relay_request(relay, "GET", "/task/status", NULL, NULL, 0, false, 1000,
					   &resp, &err),
			 0);
	ck_assert(err.msg[0]);
	snprintf(req, sizeof(req), "GET /task/status HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
		 sbx_relay_port(relay));
	ck_assert_int_eq(status_of(sbx_relay_port(relay), req), 502);
	sbx_relay_free(relay);
	sbx_test_scratch_teardown();
}
END_TEST

START_TEST(relay_only_binds_loopback)
{
	sbx_relay_opts o = SBX_RELAY_OPTS_INIT;
	sbx_relay *relay = NULL;
	sbx_error err = SBX_ERROR_INIT;

	o.open = fake_open;
	o.bind_addr = "0.0.0.0";
	ck_assert_int_eq(sbx_relay_start(&relay, &o, &err), -EINVAL);
	ck_assert_ptr_null(relay);
}
END_TEST

/* ---- transcript, result, ids, run dirs ---- */

/* A transcript writing to t.jsonl in a fresh scratch directory. */
static sbx_transcript *scratch_transcript(void)
{
	sbx_transcript *t = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char path[300];

	sbx_test_scratch_setup();
	snprintf(path, sizeof(path), "%s/t.jsonl", sbx_test_scratch);
	ck_assert_int_eq(sbx_transcript_open(&t, path, &err), 0);
	return t;
}

START_TEST(transcript_keeps_json_and_text)
{
	sbx_transcript *t = scratch_transcript();
	sbx_error err = SBX_ERROR_INIT;
	char *text;
	size_t len;

	sbx_transcript_record(t, 1, "agent->server", "POST", "/mcp", 0, "{\"x\":1}", 7);
	sbx_transcript_record(t, 1, "server->agent", "POST", "/mcp", 500, "oops\nline", 9);
	ck_assert_uint_eq(sbx_transcript_count(t), 2);
	ck_assert_int_eq(sbx_transcript_close(t), 0);
	ck_assert_int_eq(sbx_rundir__read(sbx_test_scratch, "t.jsonl", 1 << 20, &text, &len, &err),
			 0);
	ck_assert_ptr_nonnull(strstr(text, "\"message\":{\"x\":1}"));
	ck_assert_ptr_nonnull(strstr(text, "\"body\":\"oops\\nline\""));
	ck_assert_ptr_nonnull(strstr(text, "\"status\":500"));
	free(text);
	sbx_test_scratch_teardown();
}
END_TEST

/* Each MCP message keeps the revision it speaks: its own word first, else its request's header. */
START_TEST(transcript_records_the_mcp_version)
{
	static const char modern[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
		"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}";
	static const char init[] = "{\"id\":2,\"method\":\"initialize\",\"params\":{"
				   "\"protocolVersion\":\"2025-06-18\"}}";
	static const char answer[] = "{\"id\":1,\"result\":{\"tools\":[]}}";
	static const char forged[] = "{\"id\":3,\"method\":\"initialize\",\"params\":{"
				     "\"protocolVersion\":\"0123456789012345678901234567890123\"}}";
	sbx_transcript *t = scratch_transcript();
	sbx_error err = SBX_ERROR_INIT;
	char *text;
	size_t len;

	sbx_transcript_record_mcp(t, 1, "agent->server", "POST", "/mcp", 0, NULL, modern,
				  strlen(modern));
	sbx_transcript_record_mcp(t, 1, "server->agent", "POST", "/mcp", 200, "2026-07-28", answer,
				  strlen(answer));
	sbx_transcript_record_mcp(t, 2, "agent->server", "POST", "/mcp", 0, NULL, init,
				  strlen(init));
	sbx_transcript_record_mcp(t, 3, "agent->server", "POST", "/mcp", 0, NULL, forged,
				  strlen(forged));
	sbx_transcript_record(t, 4, "agent->server", "GET", "/health", 0, "{}", 2);
	ck_assert_int_eq(sbx_transcript_close(t), 0);
	ck_assert_int_eq(sbx_rundir__read(sbx_test_scratch, "t.jsonl", 1 << 20, &text, &len, &err),
			 0);
	ck_assert_ptr_nonnull(strstr(text,
				     "\"conn\":1,\"dir\":\"agent->server\",\"method\":"
				     "\"POST\",\"path\":\"/mcp\",\"mcp_version\":\"2026-07-28\""));
	ck_assert_ptr_nonnull(strstr(text, "\"status\":200,\"mcp_version\":\"2026-07-28\""));
	ck_assert_ptr_nonnull(strstr(text,
				     "\"conn\":2,\"dir\":\"agent->server\",\"method\":"
				     "\"POST\",\"path\":\"/mcp\",\"mcp_version\":\"2025-06-18\""));
	/* An agent's 34-character "version" is no label; nor has a non-MCP line one. */
	ck_assert_ptr_null(strstr(text, "\"mcp_version\":\"0123"));
	ck_assert_ptr_nonnull(strstr(text, "\"path\":\"/health\",\"message\""));
	free(text);
	sbx_test_scratch_teardown();
}
END_TEST

START_TEST(run_ids_are_safe)
{
	char *id = sbx_run_id_new("banking_reserve");
	char *odd = sbx_run_id_new("../../etc/passwd");

	ck_assert(sbx_run_id_valid(id));
	ck_assert_ptr_nonnull(strstr(id, "-banking_reserve-"));
	ck_assert(sbx_run_id_valid(odd));
	ck_assert_ptr_null(strchr(odd, '/'));
	ck_assert(!sbx_run_id_valid("../x"));
	ck_assert(!sbx_run_id_valid(".hidden"));
	ck_assert(!sbx_run_id_valid(""));
	ck_assert(!sbx_run_id_valid("a b"));
	free(id);
	free(odd);
}
END_TEST

/* r's reason, compared with want (NULL: none). */
static void check_reason(const sbx_run_result *r, const char *want)
{
	char *why = sbx_run_result_reason(r);

	if (!want)
		ck_assert_ptr_null(why);
	else
		ck_assert_str_eq(why ? why : "(null)", want);
	free(why);
}

START_TEST(result_reason_says_why_in_one_line)
{
	/* A gate's first changed cell; its value, the agent's, cut on a character boundary. */
	static const char report[] =
		"{\"gate_failed\":true,\"cases\":[{\"name\":\"answer\",\"gate\":false,"
		"\"status\":\"PASS\"},{\"name\":\"inputs unchanged\",\"gate\":true,"
		"\"status\":\"PARTIAL\",\"failure\":null,\"mismatches_total\":3,\"mismatches\":"
		"[{\"cell\":\"Sheet1!A2\",\"expected\":\"Item 01\",\"got\":"
		"\"ééééééééééééééééééééééééééééééééééééééééééé\"}]}]}";
	_cleanup_json_ cJSON *tree = cJSON_Parse(report);
	sbx_run_result r = {0};

	r.status = SBX_RUN_PASS;
	check_reason(&r, NULL);
	r.status = SBX_RUN_TIMEOUT;
	r.limits.resolved.timeout_s = 8;
	check_reason(&r, "deadline 8 s passed during the agent phase");
	r.status = SBX_RUN_SANDBOX_FAILED;
	r.error_kind = "oom";
	r.error = "the sandbox ran out of memory (512 MiB)";
	check_reason(&r, "sandbox failed: oom: the sandbox ran out of memory (512 MiB)");
	r.status = SBX_RUN_AGENT_ERROR;
	r.agent_exit = 1;
	r.agent_tail = "starting | boom";
	check_reason(&r, "agent exited 1: boom");
	{
		/* The agent's log line is cut: the reason stays one short line. */
		char tail[600], *why;

		memset(tail, 'x', sizeof(tail) - 1);
		tail[sizeof(tail) - 1] = '\0';
		r.agent_tail = tail;
		why = sbx_run_result_reason(&r);
		ck_assert_ptr_nonnull(why);
		ck_assert_uint_le(strlen(why), 300);
		ck_assert_str_eq(why + strlen(why) - strlen("…"), "…");
		free(why);
	}
	r.agent_exit = 127;
	r.agent_tail = NULL;
	check_reason(&r, "agent exited 127 (command not found) before complete_task");
	r.status = SBX_RUN_FAIL;
	r.grade.graded = true;
	ck_assert_ptr_nonnull(tree);
	r.grade.report = tree;
	check_reason(&r, "gate 'inputs unchanged' failed: Sheet1!A2 changed (expected \"Item 01\", "
			 "got \"éééééééééééééééééééé…\"); 2 more cell(s)");
	r.grade.graded = false;
	r.grade.error = (char *)"grader crashed: signal 11 (SIGSEGV)";
	check_reason(&r, "grading failed: grader crashed: signal 11 (SIGSEGV)");
	r.grade.error = NULL;
	r.grade.graded = true;
	r.grade.report = NULL; /* none, or none readable: the cell counts say it */
	r.grade.cells_graded = 5;
	r.grade.cells_matched = 2;
	check_reason(&r, "2 of 5 graded cells matched");
}
END_TEST

START_TEST(result_json_separates_infra_from_outcome)
{
	sbx_run_result r = {0};
	cJSON *j = NULL;
	char *text;

	r.run_id = "id1";
	r.task = "t";
	r.agent = "oracle";
	r.agent_exit = -1;
	r.status = SBX_RUN_INFRA_ERROR;
	r.error = "image 'x' missing";
	r.error_kind = "image_missing";
	r.phase_done[SBX_PHASE_CREATE] = true;
	r.phase_ms[SBX_PHASE_CREATE] = 12.5;
	r.limits.resolved.memory = 2ULL << 30;
	r.limits.resolved.pids = 256;
	r.applied.known = true;
	r.applied.cap_drop_all = true;
	r.applied.readonly_rootfs = true;
	r.applied.pids = 256;
	strcpy(r.applied.network_mode, "none");
	strcpy(r.applied.user, "1000:1000");
	text = sbx_run_result_json(&r);
	ck_assert_int_eq(sbx_json_parse(text, strlen(text), &j, NULL), 0);
	ck_assert_str_eq(sbx_json_get_string(j, "status", ""), "infra_error");
	ck_assert_str_eq(sbx_json_get_string(j, "outcome", ""), "infrastructure");
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(j, "error"), "kind", ""),
			 "image_missing");
	ck_assert(sbx_json_get_number(sbx_json_get(j, "timings_ms"), "create", 0) == 12.5);
	ck_assert(cJSON_IsNull(sbx_json_get(sbx_json_get(j, "timings_ms"), "copy_out")));
	ck_assert(sbx_json_get_number(sbx_json_get(j, "limits"), "pids", 0) == 256);
	ck_assert(sbx_json_get_number(j, "exit_code", 0) == 3);
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(sbx_json_get(j, "sandbox"), "hardening"),
					     "network_mode", ""),
			 "none");
	ck_assert(sbx_json_get_bool(sbx_json_get(sbx_json_get(j, "sandbox"), "hardening"),
				    "readonly_rootfs", false));
	ck_assert(sbx_json_get_number(sbx_json_get(sbx_json_get(j, "sandbox"), "hardening"), "pids",
				      0) == 256);
	cJSON_Delete(j);
	free(text);

	r.status = SBX_RUN_TIMEOUT;
	r.error = NULL;
	r.grade.graded = true;
	r.grade.score = 0.5;
	r.grade.status = SBX_GRADE_PARTIAL;
	text = sbx_run_result_json(&r);
	ck_assert_int_eq(sbx_json_parse(text, strlen(text), &j, NULL), 0);
	ck_assert_str_eq(sbx_json_get_string(j, "outcome", ""), "task");
	ck_assert(sbx_json_get_number(j, "score", 0) == 0.5);
	ck_assert(sbx_json_get_number(j, "exit_code", 0) == 4);
	cJSON_Delete(j);
	free(text);

	/* The sandbox failing is the agent's side: a sweep must not count it as ours. */
	r.status = SBX_RUN_SANDBOX_FAILED;
	r.grade.graded = false;
	text = sbx_run_result_json(&r);
	ck_assert_int_eq(sbx_json_parse(text, strlen(text), &j, NULL), 0);
	ck_assert_str_eq(sbx_json_get_string(j, "outcome", ""), "agent");
	ck_assert(sbx_json_get_number(j, "exit_code", 0) == 6);
	cJSON_Delete(j);
	free(text);
	ck_assert_int_eq(sbx_run_status_exit_code(SBX_RUN_PASS), 0);
	ck_assert_int_eq(sbx_run_status_exit_code(SBX_RUN_FAIL), 1);
	ck_assert_int_eq(sbx_run_status_exit_code(SBX_RUN_PARTIAL), 1);
}
END_TEST

START_TEST(rundir_is_fresh_and_confined)
{
	char runs[300], *dir = NULL, src[320], link[340];
	sbx_error err = SBX_ERROR_INIT;
	FILE *f;

	sbx_test_scratch_setup();
	snprintf(runs, sizeof(runs), "%s/runs/deeper", sbx_test_scratch);
	ck_assert_int_eq(sbx_rundir__create(runs, "r1", &dir, &err), 0);
	ck_assert_int_eq(sbx_rundir__create(runs, "r1", &dir, &err), -EEXIST);
	snprintf(src, sizeof(src), "%s/src", sbx_test_scratch);
	mkdir(src, 0755);
	snprintf(link, sizeof(link), "%s/src/a.txt", sbx_test_scratch);
	f = fopen(link, "w");
	fputs("data", f);
	fclose(f);
	snprintf(link, sizeof(link), "%s/src/evil", sbx_test_scratch);
	ck_assert_int_eq(symlink("/etc/passwd", link), 0);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_rundir__copy(src, "a.txt", dir, "inputs/sub/a.txt", &err), 0);
	sbx_error_clear(&err);
	ck_assert_int_lt(sbx_rundir__copy(src, "evil", dir, "inputs/evil", &err), 0);
	sbx_error_clear(&err);
	ck_assert_int_lt(sbx_rundir__copy(src, "../src/a.txt", dir, "x", &err), 0);
	sbx_error_clear(&err);
	ck_assert_int_lt(sbx_rundir__copy(src, "a.txt", dir, "../escape", &err), 0);
	ck_assert_int_eq(sbx_rundir__write(dir, "result.json", "{}", 2, &err), 0);
	free(dir);
	sbx_test_scratch_teardown();
}
END_TEST

/*
 * A git repository, scratch/repo, with one commit holding a task.yaml in each
 * of dirs (space-separated).
 */
static void committed_repo(const char *dirs)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; mkdir repo; cd repo; git init -q .; for d in %s; do "
		 "mkdir -p $d; echo $d > $d/task.yaml; done; git add .; "
		 "git -c user.name=t -c user.email=t@t commit -qm init",
		 sbx_test_scratch, dirs);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(provenance_sees_commit_and_changes)
{
	char cmd[1024], task[300];
	sbx_provenance p;
	sbx_error err = SBX_ERROR_INIT;

	sbx_test_scratch_setup();
	snprintf(task, sizeof(task), "%s/repo/tasks/t1", sbx_test_scratch);
	committed_repo("tasks/t1 tasks/t2");
	ck_assert_int_eq(sbx_provenance_get(task, &p, &err), 0);
	ck_assert(p.known);
	ck_assert_int_eq(strlen(p.commit), 40);
	ck_assert(!p.dirty);
	ck_assert_str_eq(p.task_path, "tasks/t1");
	sbx_provenance_clear(&p);

	/* A change elsewhere does not make this task dirty; one inside does. */
	snprintf(cmd, sizeof(cmd), "echo c >> '%s/repo/tasks/t2/task.yaml'", sbx_test_scratch);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(sbx_provenance_get(task, &p, &err), 0);
	ck_assert(!p.dirty);
	sbx_provenance_clear(&p);
	snprintf(cmd, sizeof(cmd), "echo new > '%s/repo/tasks/t1/extra.csv'", sbx_test_scratch);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(sbx_provenance_get(task, &p, &err), 0);
	ck_assert(p.dirty);
	ck_assert_uint_eq(p.changed, 1);
	sbx_provenance_clear(&p);

	/* Outside any repository: unknown, not an error. */
	snprintf(task, sizeof(task), "%s", sbx_test_scratch);
	ck_assert_int_eq(sbx_provenance_get(task, &p, &err), 0);
	ck_assert(!p.known);
	sbx_provenance_clear(&p);
	sbx_test_scratch_teardown();
}
END_TEST

/* A sweep's cache reads each folder once: later changes are not seen through it. */
START_TEST(provenance_cache_reads_once)
{
	char cmd[1024], task[300];
	sbx_provenance p;
	sbx_error err = SBX_ERROR_INIT;
	sbx_provenance_cache *c = sbx_provenance_cache_new();

	ck_assert_ptr_nonnull(c);
	sbx_test_scratch_setup();
	snprintf(task, sizeof(task), "%s/repo/t1", sbx_test_scratch);
	committed_repo("t1");
	ck_assert_int_eq(sbx_provenance_cache_get(c, task, &p, &err), 0);
	ck_assert(p.known && !p.dirty);
	ck_assert_str_eq(p.task_path, "t1");
	sbx_provenance_clear(&p);
	snprintf(cmd, sizeof(cmd), "echo b >> '%s/repo/t1/task.yaml'", sbx_test_scratch);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(sbx_provenance_cache_get(c, task, &p, &err), 0);
	ck_assert(p.known && !p.dirty); /* the reading the cache began with */
	ck_assert_str_eq(p.task_path, "t1");
	sbx_provenance_clear(&p);
	ck_assert_int_eq(sbx_provenance_cache_get(NULL, task, &p, &err), 0);
	ck_assert(p.dirty); /* no cache: read now */
	sbx_provenance_clear(&p);
	sbx_provenance_cache_free(c);
	sbx_test_scratch_teardown();
}
END_TEST

/* ---- host agents ---- */

/*
 * Runs the agent argv (environment env) logging to agent.log in the scratch
 * directory, checks it exits within 5 s with want_exit; its log (free it).
 */
static char *agent_log(char **argv, char **env, int want_exit)
{
	sbx_agent_proc a;
	sbx_error err = SBX_ERROR_INIT;
	char log[300], *text;
	size_t len;

	snprintf(log, sizeof(log), "%s/agent.log", sbx_test_scratch);
	unlink(log);
	ck_assert_int_eq(sbx_agent__spawn(&a, argv, env, log, false, &err), 0);
	ck_assert(sbx_agent__wait(&a, 5000));
	ck_assert_int_eq(a.exit_code, want_exit);
	sbx_agent__stop(&a, 100);
	ck_assert_int_eq(
		sbx_rundir__read(sbx_test_scratch, "agent.log", 1 << 20, &text, &len, &err), 0);
	return text;
}

START_TEST(agent_gets_env_and_logs)
{
	char *argv[] = {"/bin/sh", "-c", "echo url=$SANDBOX_MCP_URL; echo oops >&2; exit 7", NULL};
	char *env[] = {"SANDBOX_MCP_URL=http://127.0.0.1:1/mcp", NULL};
	char *text;

	sbx_test_scratch_setup();
	text = agent_log(argv, env, 7);
	ck_assert_ptr_nonnull(strstr(text, "url=http://127.0.0.1:1/mcp"));
	ck_assert_ptr_nonnull(strstr(text, "oops"));
	free(text);
	sbx_test_scratch_teardown();
}
END_TEST

static bool pid_alive(pid_t pid)
{
	char path[64], st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	/* A zombie waiting for its parent is as good as gone. */
	if (fscanf(f, "%*d %*s %c", &st) != 1)
		st = 0;
	fclose(f);
	return st && st != 'Z';
}

START_TEST(agent_inherits_only_stdio)
{
	char *text;
	/* The shell's own table, listed by a child while the shell waits. */
	char *argv[] = {"/bin/sh", "-c", "ls /proc/$$/fd", NULL};
	char *missing[] = {"/nonexistent/agent", NULL};
	int leak = open("/dev/null", O_RDONLY); /* no O_CLOEXEC, like a careless library */
	int sock = socket(AF_UNIX, SOCK_STREAM, 0);

	ck_assert_int_ge(leak, 3);
	ck_assert_int_ge(sock, 3);
	sbx_test_scratch_setup();
	text = agent_log(argv, NULL, 0);
	ck_assert_str_eq(text, "0\n1\n2\n");
	free(text);
	/* An exec that fails is reported by sandboxctl, from outside the fork. */
	text = agent_log(missing, NULL, 127);
	ck_assert_ptr_nonnull(strstr(text, "cannot run agent '/nonexistent/agent'"));
	free(text);
	close(leak);
	close(sock);
	sbx_test_scratch_teardown();
}
END_TEST

/* The pid after "tag=" in the agent's log, waiting up to 5 s for it; 0 when none came. */
static pid_t logged_pid(sbx_agent_proc *a, const char *tag)
{
	sbx_error err = SBX_ERROR_INIT;
	pid_t pid = 0;

	for (int i = 0; i < 500 && !pid; i++) {
		char *text = NULL;
		size_t len;

		usleep(10000);
		sbx_agent__poll(a);
		if (sbx_rundir__read(sbx_test_scratch, "agent.log", 1 << 20, &text, &len, &err) ==
			    0 &&
		    strstr(text, tag))
			pid = (pid_t)atoi(strstr(text, tag) + strlen(tag));
		free(text);
	}
	return pid;
}

START_TEST(agent_stop_takes_the_whole_group)
{
	sbx_agent_proc a;
	sbx_error err = SBX_ERROR_INIT;
	char log[300];
	pid_t child;
	/* A grandchild that ignores nothing special: the group must go. */
	char *argv[] = {"/bin/sh", "-c", "sleep 300 & echo child=$!; wait", NULL};

	sbx_test_scratch_setup();
	snprintf(log, sizeof(log), "%s/agent.log", sbx_test_scratch);
	ck_assert_int_eq(sbx_agent__spawn(&a, argv, NULL, log, false, &err), 0);
	child = logged_pid(&a, "child=");
	ck_assert_int_gt(child, 0);
	ck_assert(pid_alive(child));
	sbx_agent__stop(&a, 2000);
	ck_assert_int_ge(a.exit_code, 0);
	for (int i = 0; i < 100 && pid_alive(child); i++)
		usleep(20000);
	ck_assert_msg(!pid_alive(child), "the agent's child %d outlived stop", (int)child);
	sbx_test_scratch_teardown();
}
END_TEST

/*
 * What an agent starts in a session of its own (setsid, after a double fork:
 * out of its process group, reparented away from it) ends with it, whether it
 * exits on its own or is stopped. Fails on a supervisor that only signals the group.
 */
START_TEST(agent_descendants_end_with_it)
{
	static const char *const scripts[] = {
		/* exits on its own, leaving a daemon behind */
		"(setsid sh -c 'echo daemon=$$; exec sleep 300' &); sleep 0.3; exit 0",
		/* still running at stop, its setsid child waiting */
		"setsid sh -c 'echo daemon=$$; trap \"\" TERM; exec sleep 300' & sleep 300",
	};

	sbx_test_scratch_setup();
	for (size_t i = 0; i < SBX_ELEMENTSOF(scripts); i++) {
		char *argv[] = {"/bin/sh", "-c", (char *)scripts[i], NULL};
		sbx_error err = SBX_ERROR_INIT;
		sbx_agent_proc a;
		char log[300];
		bool survived;
		pid_t daemon;

		snprintf(log, sizeof(log), "%s/agent.log", sbx_test_scratch);
		unlink(log);
		ck_assert_int_eq(sbx_agent__spawn(&a, argv, NULL, log, false, &err), 0);
		daemon = logged_pid(&a, "daemon=");
		ck_assert_int_gt(daemon, 0);
		if (i == 0)
			ck_assert(sbx_agent__wait(&a, 5000));
		sbx_agent__stop(&a, 2000);
		for (int k = 0; k < 100 && pid_alive(daemon); k++)
			usleep(20000);
		survived = pid_alive(daemon);
		if (survived)
			kill(daemon, SIGKILL);
		ck_assert_msg(!survived, "script %zu: its setsid child %d outlived the agent", i,
			      (int)daemon);
	}
	sbx_test_scratch_teardown();
}
END_TEST

/*
 * The parent side of the grading child: a scripted "grader" answers each
 * row; only a well-formed answer from a child that exited 0 is a grade,
 * the grader's own error stays an error, anything else is a grade error
 * with its reason (sbx_run_grade_isolated).
 */
#define GOOD_ANSWER                                                                                \
	"{\"status\":1,\"score\":0.5,\"cells_graded\":4,\"cells_matched\":2,\"recalc\":"           \
	"\"none\",\"recalc_formulas\":0,\"recalc_native\":0,\"recalc_unsupported\":0,"             \
	"\"report_text\":\"t\",\"report\":{}}"
static const struct {
	const char *script; /* sh, after the #! line */
	int r;		    /* what sbx_run_grade_isolated returns */
	bool graded;
	const char *why; /* the grade error's start, or the error's message */
} grader_rows[] = {
	{"printf '%s' '" GOOD_ANSWER "'", 0, true, NULL},
	{"printf '{\"status\":3,\"score\":0}'", 0, false, "grader answered garbage (bad status)"},
	{"printf '{\"status\":0,\"score\":1.5}'", 0, false, "grader answered garbage (bad score)"},
	{"printf '{\"status\":0,\"score\":\"1\"}'", 0, false,
	 "grader answered garbage (bad score)"},
	{"printf '{\"status\":0,\"score\":1,\"cells_graded\":-1}'", 0, false,
	 "grader answered garbage (bad count)"},
	{"printf '%s' '" GOOD_ANSWER "' | sed 's/\"cells_matched\":2/\"cells_matched\":1.5/'", 0,
	 false, "grader answered garbage (bad count)"},
	{"printf '%s' '" GOOD_ANSWER "' | sed 's/\"none\"/\"aaaaaaaaaaaaaaaaaaaa\"/'", 0, false,
	 "grader answered garbage (bad recalc)"},
	{"printf '%s' '" GOOD_ANSWER "' | sed 's/\"t\"/5/'", 0, false,
	 "grader answered garbage (bad report)"},
	{"printf '[]'", 0, false, "grader answered garbage (not a JSON object)"},
	{"true", 0, false, "grader answered garbage (no answer)"},
	{"printf '{\"error\":\"oracle gone\",\"code\":-2}'", -ENOENT, false, "oracle gone"},
	{"printf '{\"error\":\"odd\",\"code\":7}'", -EIO, false, "odd"},
	{"printf '{\"limit\":\"memory\"}'", 0, false, "grader exceeded its 2 GiB memory limit"},
	{"echo boom >&2; kill -SEGV $$", 0, false,
	 "grader crashed: signal 11 (SIGSEGV) (its stderr: grader.log)"},
	{"kill -XCPU $$", 0, false, "grader exceeded its 120 s CPU limit"},
	{"exit 3", 0, false, "grader exited with status 3"},
	/* Silent, or its answer half written: killed at the wall-clock limit. */
	{"exec sleep 30", 0, false, "grader exceeded its 2 s time limit"},
	{"printf '{\"status\":0,'; exec sleep 30", 0, false, "grader exceeded its 2 s time limit"},
	{"exec >&-; exec sleep 30", 0, false, "grader exceeded its 2 s time limit"},
	{"printf '%s' '" GOOD_ANSWER "'; exit 1", 0, false, "grader exited with status 1"},
};

START_TEST(grade_child_answers_are_untrusted)
{
	char prog[128], log[128];
	sbx_task task = {.path = (char *)"task.yaml"};
	sbx_run_grade g = {0};
	sbx_error err = SBX_ERROR_INIT;
	struct stat st;
	FILE *f;
	int r;

	sbx_test_scratch_setup();
	snprintf(prog, sizeof(prog), "%s/grader", sbx_test_scratch);
	snprintf(log, sizeof(log), "%s/grader.log", sbx_test_scratch);
	f = fopen(prog, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!/bin/sh\n%s\n", grader_rows[_i].script);
	fclose(f);
	ck_assert_int_eq(chmod(prog, 0700), 0);
	r = sbx_run_grade_isolated(prog, &task, sbx_test_scratch,
				   &(sbx_run_grader_opts){.log_path = log, .wall_s = 2}, &g, &err);
	ck_assert_msg(r == grader_rows[_i].r, "row %d: r %d (%s)", _i, r, sbx_error_message(&err));
	ck_assert(g.graded == grader_rows[_i].graded);
	if (g.graded) {
		ck_assert_int_eq(g.status, SBX_GRADE_PARTIAL);
		ck_assert(g.score == 0.5 && g.cells_graded == 4 && g.cells_matched == 2);
		ck_assert_str_eq(g.recalc, "none");
		ck_assert_str_eq(g.report_text, "t");
		ck_assert(cJSON_IsObject(g.report));
		ck_assert_ptr_null(g.error);
	} else if (r < 0) {
		ck_assert_str_eq(sbx_error_message(&err), grader_rows[_i].why);
	} else {
		ck_assert_msg(g.error && strcmp(g.error, grader_rows[_i].why) == 0,
			      "row %d: '%s', want '%s'", _i, g.error, grader_rows[_i].why);
	}
	/* The child's stderr is kept only when it said something. */
	ck_assert_int_eq(stat(log, &st) == 0, strstr(grader_rows[_i].script, ">&2") != NULL);
	sbx_run_grade_clear(&g);
	sbx_test_scratch_teardown();
}
END_TEST

START_TEST(grade_child_that_cannot_start_is_an_error)
{
	sbx_task task = {.path = (char *)"task.yaml"};
	sbx_run_grade g = {0};
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_run_grade_isolated("/nonexistent/sandbox-grader", &task, "/tmp", NULL,
						&g, &err),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(sbx_error_message(&err), "could not start"));
	ck_assert(!g.graded && !g.error);
}
END_TEST

static void add_cases(Suite *s)
{
	TCase *tc;

	SBX_TEST_CASE(s, "http", NULL, NULL, 0, http_parses_request_and_body,
		      http_dechunks_response, http_refuses_hostile_heads, http_caps_head_size,
		      http_refuses_hostile_bodies, http_keeps_message_boundaries,
		      http_heads_and_bodies_have_deadlines);

	tc = SBX_TEST_CASE(s, "relay", NULL, NULL, 30, relay_forwards_pools_and_records,
			   relay_retries_a_stream_the_server_closed);
	SBX_TEST_TABLE(tc, relay_stream_get_reads_a_whole_answer, stream_get_rows);
	SBX_TEST_ADD(tc, relay_refuses_foreign_hosts_and_garbage, relay_refuses_control_to_agents,
		     relay_reports_a_dead_server, relay_bounds_slots_time_and_memory,
		     relay_listens_on_a_private_unix_socket, relay_only_binds_loopback);

	SBX_TEST_CASE(s, "files", NULL, NULL, 0, transcript_keeps_json_and_text,
		      transcript_records_the_mcp_version, run_ids_are_safe,
		      result_json_separates_infra_from_outcome, result_reason_says_why_in_one_line,
		      rundir_is_fresh_and_confined, provenance_sees_commit_and_changes,
		      provenance_cache_reads_once);

	SBX_TEST_CASE(s, "agents", NULL, NULL, 30, agent_gets_env_and_logs,
		      agent_stop_takes_the_whole_group, agent_inherits_only_stdio,
		      agent_descendants_end_with_it);

	tc = SBX_TEST_CASE(s, "grade-child", NULL, NULL, 30,
			   grade_child_that_cannot_start_is_an_error);
	SBX_TEST_TABLE(tc, grade_child_answers_are_untrusted, grader_rows);
}

SBX_TEST_MAIN("run", add_cases)
