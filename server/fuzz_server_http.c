/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the server's HTTP front door: every input is written
 * as raw bytes to a real libmicrohttpd daemon on a unix socket, so the
 * routing, the Host/Origin guard, the REST handlers, the MCP Streamable HTTP
 * and SSE endpoints and the tools behind them all see it as a client would
 * send it. Inputs naming tools that start processes are skipped, as in
 * fuzz_rpc.c. Seeds: tests/data/fuzz/fuzz-server-http/.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_workspace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static server srv;
static http_options opt;
static char sock_path[108];

static void *serve(void *arg)
{
	sbx_error err = SBX_ERROR_INIT;

	(void)arg;
	if (http_serve(&srv, &opt, &err) < 0) {
		fprintf(stderr, "fuzz: server: %s\n", sbx_error_message(&err));
		abort();
	}
	return NULL;
}

static bool accepts(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static void init_once(void)
{
	pthread_t t;

	snprintf(sock_path, sizeof(sock_path), "%s.sock", fuzz_workspace_init(&srv));
	opt.unix_path = sock_path;
	opt.max_body = 1 << 20;
	opt.max_connections = 64;
	if (pthread_create(&t, NULL, serve, NULL) != 0)
		abort();
	/* Until it accepts: the socket's file exists from bind(), before listen(). */
	for (int i = 0; i < 500 && !accepts(sock_path); i++)
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
}

/* "%" and "\u" could spell a tool name in a URL or in JSON. */
static bool runs_processes(const uint8_t *data, size_t size)
{
	static const char *const escapes[] = {"\\u", "%"};

	return fuzz_input_runs_processes(data, size, escapes, SBX_ELEMENTSOF(escapes));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct timeval tv = {0, 50 * 1000}; /* an SSE stream stays open: stop reading */
	char buf[4096];
	ssize_t n;
	int fd;

	if (!ready) {
		init_once();
		ready = true;
	}
	if (runs_processes(data, size))
		return 0;
	fuzz_workspace_restore();
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		abort(); /* the server must still be there, whatever came before */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (size_t off = 0; off < size; off += (size_t)n) {
		n = send(fd, data + off, size - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
	}
	shutdown(fd, SHUT_WR);
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		if (memmem(buf, (size_t)n, "HTTP/1.1 500", 12))
			abort(); /* the server never fails on what a client sends */
	close(fd);
	return 0;
}
