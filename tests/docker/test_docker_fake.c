/* SPDX-License-Identifier: MIT */
/*
 * The client against a fake engine on a unix socket in /tmp: version
 * negotiation, an engine too old, one that never answers, one that hangs
 * up, and garbage. No real engine involved.
 */
#include "check_main.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sbx/clock.h"
#include "sbx/docker.h"

typedef struct fake {
	char path[108];
	int listen_fd;
	const char *answer; /* NULL: never answer; "" hang up at once */
	pthread_t thread;
} fake;

static void *serve(void *payload)
{
	fake *f = payload;

	for (;;) {
		char buf[4096];
		size_t got = 0;
		int c = accept(f->listen_fd, NULL, NULL);

		if (c < 0)
			return NULL;
		/* Read the request headers (requests here have no body). */
		while (got < sizeof(buf) - 1) {
			ssize_t n = read(c, buf + got, sizeof(buf) - 1 - got);
			if (n <= 0)
				break;
			got += (size_t)n;
			buf[got] = '\0';
			if (strstr(buf, "\r\n\r\n"))
				break;
		}
		if (!f->answer) {
			/* Silent: wait for the client to give up. */
			while (read(c, buf, sizeof(buf)) > 0)
				;
		} else if (*f->answer) {
			ssize_t w = write(c, f->answer, strlen(f->answer));
			(void)w;
		}
		close(c);
	}
}

static void fake_start(fake *f, const char *answer)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};

	snprintf(f->path, sizeof(f->path), "/tmp/sbx-fake-engine-%d-%ld.sock", (int)getpid(),
		 (long)random());
	unlink(f->path);
	f->answer = answer;
	f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(f->listen_fd, 0);
	memcpy(a.sun_path, f->path, strlen(f->path) + 1);
	ck_assert_int_eq(bind(f->listen_fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(f->listen_fd, 8), 0);
	ck_assert_int_eq(pthread_create(&f->thread, NULL, serve, f), 0);
}

static void fake_stop(fake *f)
{
	/*
	 * shutdown() wakes the accept() with an error and the thread returns by
	 * itself (clients are closed by now). No pthread_cancel: ASan's thread
	 * teardown trips over a cancelled thread's alternate signal stack.
	 */
	shutdown(f->listen_fd, SHUT_RDWR);
	pthread_join(f->thread, NULL);
	close(f->listen_fd);
	unlink(f->path);
}

/*
 * Opens a client (request timeout timeout_ms) against a fake engine that
 * gives answer to every request, for as long as the open takes; its result.
 */
static int open_against(const char *answer, long timeout_ms, sbx_docker **d, sbx_error *err)
{
	sbx_docker_opts o = SBX_DOCKER_OPTS_INIT;
	char host[128];
	fake f;
	int r;

	fake_start(&f, answer);
	snprintf(host, sizeof(host), "unix://%s", f.path);
	o.host = host;
	o.request_timeout_ms = timeout_ms;
	r = sbx_docker_open(d, &o, err);
	fake_stop(&f);
	return r;
}

#define PING_OK(version)                                                                           \
	"HTTP/1.1 200 OK\r\nApi-Version: " version "\r\nContent-Length: 2\r\n"                     \
	"Connection: close\r\n\r\nOK"

START_TEST(negotiates_down_to_the_engine)
{
	sbx_docker *d = NULL;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_msg(open_against(PING_OK("1.41"), 2000, &d, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(sbx_docker_api_version(d), "1.41");
	sbx_docker_free(d);

	/* A newer engine: we speak the newest we know. */
	ck_assert_int_eq(open_against(PING_OK("1.99"), 2000, &d, &err), 0);
	ck_assert_str_eq(sbx_docker_api_version(d), SBX_DOCKER_API_MAX);
	sbx_docker_free(d);
}
END_TEST

START_TEST(too_old_an_engine_is_refused_clearly)
{
	sbx_docker *d = NULL;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(open_against(PING_OK("1.24"), 2000, &d, &err), -EPROTO);
	ck_assert_ptr_null(d);
	ck_assert_msg(strstr(err.msg, "speaks API 1.24, older than " SBX_DOCKER_API_MIN), "%s",
		      err.msg);
}
END_TEST

START_TEST(a_silent_engine_times_out)
{
	sbx_docker *d = NULL;
	sbx_error err = SBX_ERROR_INIT;
	int64_t t0 = sbx_now_ms();

	ck_assert_int_eq(open_against(NULL, 300, &d, &err), -ETIMEDOUT);
	ck_assert_int_lt(sbx_now_ms() - t0, 2000);
	ck_assert_msg(strstr(err.msg, "did not answer within 300 ms"), "%s", err.msg);
}
END_TEST

START_TEST(hang_ups_and_garbage_are_errors)
{
	sbx_docker *d = NULL;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_lt(open_against("", 2000, &d, &err), 0);
	ck_assert_ptr_null(d);
	ck_assert_ptr_null(strchr(err.msg, '\n'));

	sbx_error_clear(&err);
	ck_assert_int_lt(open_against("SSH-2.0-OpenSSH\r\n\r\n", 2000, &d, &err), 0);

	/* An HTTP error from /_ping carries the status and message. */
	sbx_error_clear(&err);
	ck_assert_int_eq(
		open_against(
			"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
			"Content-Length: 26\r\nConnection: close\r\n\r\n{\"message\":\"engine "
			"sick\"}\n",
			2000, &d, &err),
		-EIO);
	ck_assert_str_eq(err.msg, "ping failed: HTTP 500: engine sick");
	ck_assert_int_eq(err.http_status, 500);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("docker-fake-engine");

	srandom((unsigned)time(NULL) ^ (unsigned)getpid());

	SBX_TEST_CASE(s, "fake", NULL, NULL, 20, negotiates_down_to_the_engine,
		      too_old_an_engine_is_refused_clearly, a_silent_engine_times_out,
		      hang_ups_and_garbage_are_errors);
	return sbx_test_run(s);
}
