/* SPDX-License-Identifier: MIT */
/* suggest, the clock, UTF-8, base64, fd waits and writes, the host and connection guards. */
#include "test_util.h"

START_TEST(suggest_finds_typos_only)
{
	static const char *const cmds[] = {"build", "run", "mcp", "grade", "tasks", NULL, "doctor"};
	size_t n = sizeof(cmds) / sizeof(cmds[0]);

	ck_assert_uint_eq(sbx_edit_distance("rnu", "run"), 1); /* a swap is one edit */
	ck_assert_uint_eq(sbx_edit_distance("", "abc"), 3);
	ck_assert_uint_eq(sbx_edit_distance("kitten", "sitting"), 3);
	ck_assert_str_eq(sbx_suggest("rnu", cmds, n), "run");
	ck_assert_str_eq(sbx_suggest("graed", cmds, n), "grade");
	ck_assert_str_eq(sbx_suggest("doctr", cmds, n), "doctor");
	ck_assert_str_eq(sbx_suggest("task", cmds, n), "tasks");
	/* Far from everything: no guess rather than a wrong one. */
	ck_assert_ptr_null(sbx_suggest("xyz", cmds, n));
	ck_assert_ptr_null(sbx_suggest("deploy", cmds, n));
	ck_assert_ptr_null(sbx_suggest("", cmds, n));
	ck_assert_str_eq(sbx_suggest("banking_reservee",
				     (const char *const[]){"sales_revenue", "banking_reserve"}, 2),
			 "banking_reserve");
	/* Long input is capped, not overflowed. */
	char big[200];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	ck_assert_uint_eq(sbx_edit_distance(big, "a"), 255);
	ck_assert_ptr_null(sbx_suggest(big, cmds, n));
}
END_TEST

START_TEST(clock_is_monotonic_and_sleeps)
{
	int64_t a = sbx_now_ms();
	double f = sbx_now_msf();

	/* One clock: the whole and the fractional reading agree to the millisecond. */
	ck_assert_int_le(a, (int64_t)f + 1);
	sbx_sleep_ms(20);
	ck_assert_int_ge(sbx_now_ms() - a, 20);
	ck_assert(sbx_now_msf() - f >= 20.0);
	/* Nothing to wait for: returns at once, never sleeps on a negative. */
	a = sbx_now_ms();
	sbx_sleep_ms(-5);
	sbx_sleep_ms(0);
	ck_assert_int_lt(sbx_now_ms() - a, 1000);
}
END_TEST

START_TEST(utf8_sequences_and_refusals)
{
	static const struct {
		const char *bytes;
		size_t left, want;
	} v[] = {
		{"a", 1, 1},
		{"\xc3\xa9", 2, 2},	    /* é */
		{"\xe2\x82\xac", 3, 3},	    /* € */
		{"\xf0\x9f\x98\x80", 4, 4}, /* an emoji */
		{"\xf4\x8f\xbf\xbf", 4, 4}, /* U+10FFFF */
		{"\xc3\xa9", 1, 0},	    /* truncated by left */
		{"\xe2\x82", SIZE_MAX, 0},  /* truncated by the NUL */
		{"\x80", 1, 0},		    /* a stray continuation byte */
		{"\xc0\xaf", 2, 0},	    /* overlong '/' */
		{"\xe0\x80\xaf", 3, 0},	    /* overlong, three bytes */
		{"\xf0\x80\x80\xaf", 4, 0}, /* overlong, four bytes */
		{"\xed\xa0\x80", 3, 0},	    /* a surrogate */
		{"\xf4\x90\x80\x80", 4, 0}, /* past U+10FFFF */
		{"\xf5\x80\x80\x80", 4, 0}, /* no such lead byte */
		{"x", 0, 0},		    /* nothing left */
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ck_assert_msg(sbx_utf8_seq((const unsigned char *)v[i].bytes, v[i].left) ==
				      v[i].want,
			      "case %zu", i);
}
END_TEST

START_TEST(base64_round_trips_and_refuses)
{
	static const struct {
		const char *in, *out;
	} v[] = {
		{"", ""},
		{"f", "Zg=="},
		{"fo", "Zm8="},
		{"foo", "Zm9v"},
		{"foob", "Zm9vYg=="},
		{"fooba", "Zm9vYmE="},
		{"foobar", "Zm9vYmFy"},
	};
	static const char *bad[] = {"Zg=x", "Z", "Zm9vY", "Zg===", "Zm9v*", "Zg=\nZg=="};
	unsigned char bytes[7000];
	sbx_buf b = SBX_BUF_INIT(1 << 20);
	char *s;

	/* RFC 4648 section 10, both ways. */
	for (size_t i = 0; i < SBX_ELEMENTSOF(v); i++) {
		s = sbx_base64_encode(v[i].in, strlen(v[i].in));
		ck_assert_ptr_nonnull(s);
		ck_assert_str_eq(s, v[i].out);
		ck_assert_int_eq(sbx_base64_decode(s), (ssize_t)strlen(v[i].in));
		ck_assert_mem_eq(s, v[i].in, strlen(v[i].in));
		free(s);
	}
	/* Past one 3072-byte chunk of the buffer variant; every byte value. */
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 7 + 3);
	ck_assert_int_eq(sbx_base64_encode_buf(&b, bytes, sizeof(bytes)), 0);
	s = sbx_base64_encode(bytes, sizeof(bytes));
	ck_assert_str_eq(sbx_buf_str(&b), s);
	ck_assert_uint_eq(b.len, sbx_base64_encoded_len(sizeof(bytes)));
	ck_assert_int_eq(sbx_base64_decode(s), (ssize_t)sizeof(bytes));
	ck_assert_mem_eq(s, bytes, sizeof(bytes));
	free(s);
	sbx_buf_free(&b);
	/* Wrapped lines and missing padding decode; junk and data after padding do not. */
	s = strdup("Zm9v\r\nYmE");
	ck_assert_int_eq(sbx_base64_decode(s), 5);
	ck_assert_mem_eq(s, "fooba", 5);
	free(s);
	for (size_t i = 0; i < SBX_ELEMENTSOF(bad); i++) {
		s = strdup(bad[i]);
		ck_assert_msg(sbx_base64_decode(s) == -EINVAL, "'%s' decoded", bad[i]);
		free(s);
	}
	/* A cap too small for the encoding is the buffer's error, not a truncation. */
	sbx_buf_init(&b, 3);
	ck_assert_int_eq(sbx_base64_encode_buf(&b, "foo", 3), -ENOBUFS);
	sbx_buf_free(&b);
}
END_TEST

/* sbx_fd_wait: a quiet pipe times out, a readable one is ready, even at a past deadline. */
START_TEST(fd_wait_times_out_then_sees_data)
{
	int fds[2];
	int64_t t0;

	ck_assert_int_eq(pipe(fds), 0);
	t0 = sbx_now_ms();
	ck_assert_int_eq(sbx_fd_wait(fds[0], POLLIN, (long)t0 + 30), -ETIMEDOUT);
	ck_assert_int_ge(sbx_now_ms() - t0, 25);
	ck_assert_int_eq(sbx_fd_wait(fds[0], POLLIN, 0), -ETIMEDOUT);
	ck_assert_int_eq(write(fds[1], "x", 1), 1);
	ck_assert_int_eq(sbx_fd_wait(fds[0], POLLIN, -1), 0);
	ck_assert_int_eq(sbx_fd_wait(fds[0], POLLIN, 0), 0);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

START_TEST(write_all_writes_everything)
{
	char big[200000], back[sizeof(big)];
	size_t got = 0;
	int fds[2], status;
	pid_t pid;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i % 251);
	/* More than a pipe holds: the short writes are retried until it is all out. */
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		_exit(sbx_write_all(fds[1], big, sizeof(big)) == 0 ? 0 : 1);
	}
	close(fds[1]);
	while (got < sizeof(back)) {
		ssize_t n = read(fds[0], back + got, sizeof(back) - got);

		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	close(fds[0]);
	ck_assert_mem_eq(back, big, sizeof(big));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(sbx_write_all(-1, "x", 1), -EBADF);
	ck_assert_int_eq(sbx_write_all(-1, "", 0), 0);
}
END_TEST

START_TEST(pwrite_all_keeps_the_offset)
{
	char path[] = "/tmp/sbx-util-pwrite-XXXXXX", back[8] = {0};
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(sbx_pwrite_all(fd, "world", 5, 3), 0);
	ck_assert_int_eq(sbx_pwrite_all(fd, "abc", 3, 0), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 0);
	ck_assert_int_eq(pread(fd, back, sizeof(back), 0), 8);
	ck_assert_mem_eq(back, "abcworld", 8);
	close(fd);
}
END_TEST

START_TEST(hostguard_refuses_rebound_names)
{
	char *extra[] = {"sandbox", "box.internal:8080"};
	/* The relay's rules: its own port, Host required. */
	const sbx_hostguard relay = {.port = 4711, .require_host = true};
	/* The server's: any port, Host optional, names from --allowed-host. */
	const sbx_hostguard srv = {.extra = extra, .n_extra = 2};
	const struct {
		const sbx_hostguard *g;
		const char *host, *origin;
		sbx_hostguard_verdict want;
	} v[] = {
		{&relay, "127.0.0.1:4711", NULL, SBX_HOSTGUARD_OK},
		{&relay, "LocalHost:4711", "http://[::1]:4711", SBX_HOSTGUARD_OK},
		{&relay, NULL, NULL, SBX_HOSTGUARD_BAD_HOST},
		{&relay, "127.0.0.1:4712", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&relay, "127.0.0.1", NULL, SBX_HOSTGUARD_BAD_HOST}, /* port 80 */
		{&relay, "evil.example:4711", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&relay, "127.0.0.1:4711", "http://evil.example:4711", SBX_HOSTGUARD_BAD_ORIGIN},
		{&relay, "127.0.0.1:4711", "http://localhost:3000", SBX_HOSTGUARD_BAD_ORIGIN},
		{&relay, "127.0.0.1:4711", "null", SBX_HOSTGUARD_BAD_ORIGIN},
		{&srv, NULL, NULL, SBX_HOSTGUARD_OK},
		{&srv, "localhost:8765", "http://localhost:3000", SBX_HOSTGUARD_OK},
		{&srv, "SANDBOX:1", "https://sandbox", SBX_HOSTGUARD_OK},
		{&srv, "box.internal:8080", NULL, SBX_HOSTGUARD_OK},
		{&srv, "evil.example", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "localhost.evil.example", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "127.0.0.1@evil.example", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "localhost:80x", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "localhost:99999999999999999999", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "[::1", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "", NULL, SBX_HOSTGUARD_BAD_HOST},
		{&srv, "localhost", "http://localhost/path", SBX_HOSTGUARD_BAD_ORIGIN},
		{&srv, "localhost", "file://localhost", SBX_HOSTGUARD_BAD_ORIGIN},
		{&srv, "localhost", "http://evil.example", SBX_HOSTGUARD_BAD_ORIGIN},
	};

	for (size_t i = 0; i < SBX_ELEMENTSOF(v); i++)
		ck_assert_msg(sbx_hostguard_check(v[i].g, v[i].host, v[i].origin) == v[i].want,
			      "case %zu: Host '%s', Origin '%s'", i, v[i].host ? v[i].host : "-",
			      v[i].origin ? v[i].origin : "-");
}
END_TEST

/* True when the server's side of pair p was shut down (its peer reads end of file). */
static bool shut(const int p[2])
{
	char c;

	return recv(p[1], &c, 1, MSG_DONTWAIT) == 0;
}

START_TEST(connguard_evicts_the_idle_and_times_out_heads)
{
	_cleanup_(sbx_connguard_freep) sbx_connguard *g = NULL;
	int p[6][2];
	sbx_connguard_stats st;

	for (size_t i = 0; i < SBX_ELEMENTSOF(p); i++)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p[i]), 0);
	ck_assert_int_eq(sbx_connguard_new(&g, 2, 400, NULL), 0);
	sbx_connguard_opened(g, p[0], p[0][0]);
	sbx_connguard_opened(g, p[1], p[1][0]);
	sbx_connguard_busy(g, p[1]);
	/* Past the slots: the one still waiting for a head goes, not the request under way. */
	sbx_connguard_opened(g, p[2], p[2][0]);
	ck_assert(shut(p[0]));
	ck_assert(!shut(p[1]) && !shut(p[2]));
	sbx_connguard_closed(g, p[0]);
	sbx_connguard_busy(g, p[2]);
	sbx_connguard_idle(g, p[2]);
	/* An idle keep-alive connection is next. */
	sbx_connguard_opened(g, p[3], p[3][0]);
	ck_assert(shut(p[2]) && !shut(p[1]) && !shut(p[3]));
	sbx_connguard_closed(g, p[2]);
	/* Every slot under way: the newcomer is the one refused. */
	sbx_connguard_busy(g, p[3]);
	sbx_connguard_opened(g, p[4], p[4][0]);
	ck_assert(shut(p[4]) && !shut(p[1]) && !shut(p[3]));
	sbx_connguard_closed(g, p[4]);
	/* No head within the deadline: ended by the watchdog; a request under way is not. */
	sbx_connguard_closed(g, p[3]);
	sbx_connguard_opened(g, p[5], p[5][0]);
	ck_assert(!shut(p[5]));
	sbx_sleep_ms(900);
	ck_assert(shut(p[5]) && !shut(p[1]));
	st = sbx_connguard_get_stats(g);
	ck_assert_uint_eq(st.evicted, 3);
	ck_assert_uint_eq(st.timed_out, 1);
	for (size_t i = 0; i < SBX_ELEMENTSOF(p); i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}
END_TEST

/*
 * A tokenless request, answered 401 and lingering, goes before an idle
 * connection of a client with the token, even an older one (the reviewer's
 * attack: a flood of refused requests pushing the real client's keep-alive
 * connections out).
 */
START_TEST(connguard_evicts_the_refused_before_the_real_client)
{
	_cleanup_(sbx_connguard_freep) sbx_connguard *g = NULL;
	int p[3][2];

	for (size_t i = 0; i < SBX_ELEMENTSOF(p); i++)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p[i]), 0);
	ck_assert_int_eq(sbx_connguard_new(&g, 2, 10000, NULL), 0);
	sbx_connguard_opened(g, p[0], p[0][0]); /* the real client: a request, then idle */
	sbx_connguard_busy(g, p[0]);
	sbx_connguard_idle(g, p[0]);
	sbx_sleep_ms(5);
	sbx_connguard_opened(g, p[1], p[1][0]); /* the attacker: refused, then "idle" */
	sbx_connguard_busy(g, p[1]);
	sbx_connguard_refused(g, p[1]);
	sbx_connguard_idle(g, p[1]);
	sbx_connguard_opened(g, p[2], p[2][0]);
	ck_assert(shut(p[1]) && !shut(p[0]) && !shut(p[2]));
	for (size_t i = 0; i < SBX_ELEMENTSOF(p); i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}
END_TEST

void util_io_tests(TCase *tc)
{
	SBX_TEST_ADD(tc, suggest_finds_typos_only, clock_is_monotonic_and_sleeps,
		     base64_round_trips_and_refuses, utf8_sequences_and_refusals,
		     fd_wait_times_out_then_sees_data, write_all_writes_everything,
		     pwrite_all_keeps_the_offset, hostguard_refuses_rebound_names,
		     connguard_evicts_the_idle_and_times_out_heads,
		     connguard_evicts_the_refused_before_the_real_client);
}
