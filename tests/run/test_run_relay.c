/* SPDX-License-Identifier: MIT */
/*
 * The relay against the fake in-process server (test_run.c): pooling,
 * streaming, the transcript, Host/Origin checks, slots and deadlines,
 * hostile input.
 */
#include "test_run.h"

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

void run_relay_cases(Suite *s)
{
	TCase *tc;

	tc = SBX_TEST_CASE(s, "relay", NULL, NULL, 30, relay_forwards_pools_and_records,
			   relay_retries_a_stream_the_server_closed);
	SBX_TEST_TABLE(tc, relay_stream_get_reads_a_whole_answer, stream_get_rows);
	SBX_TEST_ADD(tc, relay_refuses_foreign_hosts_and_garbage, relay_refuses_control_to_agents,
		     relay_reports_a_dead_server, relay_bounds_slots_time_and_memory,
		     relay_listens_on_a_private_unix_socket, relay_only_binds_loopback);
}
