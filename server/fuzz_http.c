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

#include "server.h"
#include "sbx/file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static server srv;
static http_options opt;
static char sock_path[108];
static char book_path[96];
static char *seed_book;
static size_t seed_book_len;

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

static void init_once(void)
{
	static char ws[] = "/tmp/sbx-fuzz-http-XXXXXX";
	sbx_error err = SBX_ERROR_INIT;
	pthread_t t;

	if (!mkdtemp(ws) || server_init(&srv, ws, NULL, 0, NULL, &err) < 0 ||
	    sbx_file_read_capped(AT_FDCWD, SBX_FUZZ_SEED_BOOK, 16 << 20, &seed_book, &seed_book_len,
				 &err) < 0) {
		fprintf(stderr, "fuzz: cannot set up: %s\n", sbx_error_message(&err));
		abort();
	}
	snprintf(book_path, sizeof(book_path), "%s/cash_flows.ods", ws);
	snprintf(sock_path, sizeof(sock_path), "%s.sock", ws);
	opt.unix_path = sock_path;
	opt.max_body = 1 << 20;
	opt.max_connections = 64;
	if (pthread_create(&t, NULL, serve, NULL) != 0)
		abort();
	for (int i = 0; i < 500 && access(sock_path, F_OK) != 0; i++)
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
}

static void restore_workbook(void)
{
	FILE *f = fopen(book_path, "wbe");

	if (!f || fwrite(seed_book, 1, seed_book_len, f) != seed_book_len || fclose(f) != 0)
		abort();
}

static bool runs_processes(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"execute_python", "execute_shell", "recalculate", "\\u",
					    "%"};

	/* "%" and "\u" could spell a tool name in a URL or in JSON. */
	for (size_t i = 0; i < SBX_ELEMENTSOF(names); i++)
		if (memmem(data, size, names[i], strlen(names[i])))
			return true;
	return false;
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
	restore_workbook();
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
