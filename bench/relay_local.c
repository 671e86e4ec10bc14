/* SPDX-License-Identifier: MIT */
/*
 * The relay alone: sandboxctl's relay on 127.0.0.1 in front of an in-process
 * fake server on a unix socket (a fixed keep-alive JSON answer), so a
 * benchmark (wrk) measures the relay's own framing, pooling and accounting,
 * not docker exec or the real server. Uses the public relay API only, so the
 * same file builds against older trees for before/after figures.
 * Usage: bench-relay-local [SECONDS]   prints the port, serves SECONDS (60).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sbx/relay.h"
#include "sbx/stream.h"

static char sock_path[108];

static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			    "Content-Length: 20\r\n\r\n{\"status\":\"running\"}";

static void *serve(void *arg)
{
	int fd = (int)(long)arg;
	char buf[65536];
	size_t len = 0;

	for (;;) {
		char *end = len ? memmem(buf, len, "\r\n\r\n", 4) : NULL;
		ssize_t n;

		if (end) {
			const char *cl = memmem(buf, (size_t)(end - buf), "Content-Length: ", 16);
			size_t used =
				(size_t)(end + 4 - buf) + (cl ? strtoul(cl + 16, NULL, 10) : 0);

			if (used <= len) {
				if (write(fd, reply, sizeof(reply) - 1) < 0)
					break;
				memmove(buf, buf + used, len - used);
				len -= used;
				continue;
			}
		}
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return NULL;
}

static void *accept_loop(void *arg)
{
	int lfd = (int)(long)arg;

	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		pthread_t t;

		if (fd < 0)
			return NULL;
		pthread_create(&t, NULL, serve, (void *)(long)fd);
		pthread_detach(t);
	}
}

static int open_fake(sbx_stream **out, void *ud, sbx_error *err)
{
	int r = sbx_stream_connect_unix(out, sock_path);

	(void)ud;
	return r < 0 ? sbx_error_set(err, r, "connect: %s", strerror(-r)) : 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	sbx_relay_opts o = SBX_RELAY_OPTS_INIT;
	sbx_error err = SBX_ERROR_INIT;
	sbx_relay *relay;
	pthread_t t;
	int lfd;

	snprintf(sock_path, sizeof(sock_path), "/tmp/sbx-relay-bench-%d.sock", (int)getpid());
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	unlink(sock_path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 64) < 0) {
		perror("fake server");
		return 1;
	}
	pthread_create(&t, NULL, accept_loop, (void *)(long)lfd);
	o.open = open_fake;
	o.warm = 2;
	if (sbx_relay_start(&relay, &o, &err) < 0) {
		fprintf(stderr, "relay: %s\n", sbx_error_message(&err));
		return 1;
	}
	sbx_relay_warm(relay);
	printf("%u\n", sbx_relay_port(relay));
	fflush(stdout);
	sleep(argc > 1 ? (unsigned)atoi(argv[1]) : 60);
	sbx_relay_free(relay);
	unlink(sock_path);
	return 0;
}
