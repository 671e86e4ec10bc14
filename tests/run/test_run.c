/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of lib/run without an engine: the HTTP framing, the relay
 * against a fake in-process server on a unix socket (pooling, streaming,
 * transcript, Host/Origin checks, hostile input), result.json, run ids,
 * run directories and provenance on a scratch git repository.
 *
 * This file: the runner and the fake server the http and relay cases share;
 * the cases are in test_run_{http,relay,files,agents}.c.
 */
#include "test_run.h"

int append_fn(const char *d, size_t n, void *ud)
{
	return sbx_buf_append(ud, d, n);
}

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

void fake_start(fake *f)
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

void fake_stop(fake *f)
{
	f->running = 0;
	shutdown(f->lfd, SHUT_RDWR);
	close(f->lfd);
	pthread_join(f->t, NULL);
}

int fake_open(sbx_stream **out, void *ud, sbx_error *err)
{
	fake *f = ud;
	int r = sbx_stream_connect_unix(out, f->path);

	return r < 0 ? sbx_error_set(err, r, "connect: %s", strerror(-r)) : 0;
}

/* A raw HTTP client: sends req, reads one response. */
int client_connect(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(0x7f000001);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

int exchange_raw(sbx_stream *s, http_reader *r, const char *req, sbx_buf *body, http_head *h)
{
	sbx_error err = SBX_ERROR_INIT;
	int k;

	ck_assert_int_eq(sbx_stream_write(s, req, strlen(req)), 0);
	k = http_read_head(r, h, false, &err);
	if (k < 0)
		return k;
	return http_relay_body(r, h, true, NULL, append_fn, body, &err);
}

sbx_relay *relay_on(fake *f, const char *transcript)
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

static void add_cases(Suite *s)
{
	run_http_cases(s);
	run_relay_cases(s);
	run_files_cases(s);
	run_agents_cases(s);
}

SBX_TEST_MAIN("run", add_cases)
