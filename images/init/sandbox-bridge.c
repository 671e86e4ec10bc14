/* SPDX-License-Identifier: MIT */
/*
 * sandbox-bridge: joins stdin/stdout to a unix socket.
 *
 * The container has no network; the host reaches the MCP server by running
 * this through `docker exec` with attached stdio. Bytes from stdin go to the
 * socket and bytes from the socket go to stdout, in both directions at once
 * (non-blocking, one bounded buffer per direction, so neither side can stall
 * the other). End of stdin half-closes the socket; the bridge exits when the
 * socket has no more to say and stdout has it all. With -r (a sandbox reset
 * in place restarts the server) the server closing the socket does not end
 * the bridge: the next bytes from stdin go to a new connection, so the
 * host's stream (a docker exec) outlives the server.
 *
 * Only libc; built static so it runs on any base.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE	   65536
#define CONNECT_RETRY_MS   20
#define RECONNECT_RETRY_MS 1 /* -r: a new server binds within milliseconds of a reset */
#define EXIT_FAILURE_IO	   1
#define EXIT_USAGE	   2

typedef struct pipe_dir {
	int in, out;
	char buf[BUF_SIZE];
	size_t len, off;
	bool eof;  /* no more input */
	bool done; /* input ended and everything was written */
} pipe_dir;

/*
 * -r: the bytes sent since the server last said anything. A server that
 * closes the connection (restarted by a reset) after taking a request but
 * before a byte of its answer never answers it: only the host's poll for the
 * reset's verdict goes again to the next server (only_reset_poll); anything
 * else ends the bridge. More than a buffer's worth is never replayed.
 */
static struct {
	char buf[BUF_SIZE];
	size_t len;
	bool overflow;
} unanswered;

/*
 * The one request that may go again to the next server: the host's poll for
 * the reset's verdict (idempotent, sent while the old server may still be
 * dying), whole and alone. Anything else unanswered when the server goes is
 * an earlier episode's (a tool call the reset cut): it must never run in the
 * next one, so the bridge ends instead (the host sees its stream end).
 */
static bool is_reset_poll(const char *p, size_t n)
{
	static const char line[] = "GET /control/reset HTTP/1.1\r\n";
	const char *end;

	if (n < sizeof(line) - 1 || memcmp(p, line, sizeof(line) - 1) != 0)
		return false;
	end = memmem(p, n, "\r\n\r\n", 4);
	return end && (size_t)(end + 4 - p) == n;
}

/* What went unanswered, and what had not gone yet, is the verdict's poll alone. */
static bool only_reset_poll(const pipe_dir *up)
{
	if (unanswered.overflow)
		return false;
	if (unanswered.len)
		return up->len == 0 && is_reset_poll(unanswered.buf, unanswered.len);
	return is_reset_poll(up->buf + up->off, up->len);
}

static void die_usage(void)
{
	fputs("Usage: sandbox-bridge [-r] [-w SECONDS] UNIX_SOCKET_PATH\n"
	      "Copies stdin to the socket and the socket to stdout. -w: keep retrying the\n"
	      "connection this long while the socket is missing or refuses (default 10).\n"
	      "-r: when the server closes the connection, connect again for the next bytes\n"
	      "from stdin instead of exiting.\n",
	      stderr);
	exit(EXIT_USAGE);
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_socket(const char *path, long long wait_ms, long retry_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	long long until = mono_ms() + wait_ms;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sandbox-bridge: socket path '%s' is too long\n", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			fprintf(stderr, "sandbox-bridge: socket: %s\n", strerror(errno));
			return -1;
		}
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		int e = errno;

		close(fd);
		if ((e != ENOENT && e != ECONNREFUSED && e != EAGAIN) || mono_ms() >= until) {
			fprintf(stderr, "sandbox-bridge: cannot connect to '%s': %s\n", path,
				strerror(e));
			return -1;
		}
		nanosleep(&(struct timespec){0, retry_ms * 1000000L}, NULL);
	}
}

/* stdin/stdout may be shared with the caller's terminal: flags are put back at exit. */
static int saved_flags[2] = {-1, -1};

static void restore_flags(void)
{
	for (int fd = 0; fd < 2; fd++)
		if (saved_flags[fd] >= 0)
			fcntl(fd, F_SETFL, saved_flags[fd]);
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fd < 2)
		saved_flags[fd] = fl;
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Moves what it can; returns -1 on a hard error. up: stdin to the socket (recorded while
 * unanswered). */
static int pump(pipe_dir *d, short in_ev, short out_ev, bool up)
{
	if (d->len == 0 && !d->eof && (in_ev & (POLLIN | POLLHUP | POLLERR))) {
		ssize_t n = read(d->in, d->buf, sizeof(d->buf));

		if (n > 0) {
			d->len = (size_t)n;
			d->off = 0;
			if (!up) {
				unanswered.len = 0; /* the server answered */
				unanswered.overflow = false;
			}
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			d->eof = true;
		}
	}
	while (d->len > 0 && (out_ev & (POLLOUT | POLLERR | POLLHUP))) {
		ssize_t n = write(d->out, d->buf + d->off, d->len);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return -1;
		}
		if (up && unanswered.len + (size_t)n <= sizeof(unanswered.buf)) {
			memcpy(unanswered.buf + unanswered.len, d->buf + d->off, (size_t)n);
			unanswered.len += (size_t)n;
		} else if (up) {
			unanswered.overflow = true;
		}
		d->off += (size_t)n;
		d->len -= (size_t)n;
	}
	if (d->eof && d->len == 0)
		d->done = true;
	return 0;
}

int main(int argc, char **argv)
{
	static pipe_dir up, down; /* up: stdin -> socket, down: socket -> stdout */
	long long wait_s = 10;
	bool again = false;
	int opt, sock;

	while ((opt = getopt(argc, argv, "hrw:")) != -1) {
		char *end;

		switch (opt) {
		case 'r':
			again = true;
			break;
		case 'w':
			errno = 0;
			wait_s = strtoll(optarg, &end, 10);
			if (errno || *end || wait_s < 0 || wait_s > 3600)
				die_usage();
			break;
		default:
			die_usage();
		}
	}
	if (optind != argc - 1)
		die_usage();
	signal(SIGPIPE, SIG_IGN);
	sock = connect_socket(argv[optind], wait_s * 1000, CONNECT_RETRY_MS);
	if (sock < 0)
		return EXIT_FAILURE_IO;
	atexit(restore_flags);
	set_nonblock(sock);
	set_nonblock(STDIN_FILENO);
	set_nonblock(STDOUT_FILENO);
	up.in = STDIN_FILENO;
	up.out = sock;
	down.in = sock;
	down.out = STDOUT_FILENO;

	bool shut_wr = false;

	for (;;) {
		if (down.done) {
			struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};

			if (!again || up.eof)
				break;
			/* The server closed (restarted): connect again once there is more to send.
			 */
			close(sock);
			bool pending = up.len > 0 || unanswered.len > 0 || unanswered.overflow;

			if (pending && !only_reset_poll(&up))
				break;

			if (!pending && poll(&in, 1, -1) < 0 && errno != EINTR)
				return EXIT_FAILURE_IO;
			if (!pending && (in.revents & POLLIN) == 0 && in.revents)
				break; /* stdin closed with nothing more to send */
			sock = connect_socket(argv[optind], wait_s * 1000, RECONNECT_RETRY_MS);
			if (sock < 0)
				return EXIT_FAILURE_IO;
			set_nonblock(sock);
			up.out = down.in = sock;
			down.eof = down.done = false;
			down.len = down.off = 0;
			/* Unanswered bytes first, then what had not gone yet. */
			if (unanswered.len && !unanswered.overflow &&
			    unanswered.len + up.len <= sizeof(up.buf)) {
				memmove(up.buf + unanswered.len, up.buf + up.off, up.len);
				memcpy(up.buf, unanswered.buf, unanswered.len);
				up.len += unanswered.len;
				up.off = 0;
			}
			unanswered.len = 0;
			unanswered.overflow = false;
			continue;
		}
		struct pollfd p[4] = {
			{.fd = up.len == 0 && !up.eof ? up.in : -1, .events = POLLIN},
			{.fd = up.len > 0 ? up.out : -1, .events = POLLOUT},
			{.fd = down.len == 0 && !down.eof ? down.in : -1, .events = POLLIN},
			{.fd = down.len > 0 ? down.out : -1, .events = POLLOUT},
		};

		if (poll(p, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			return EXIT_FAILURE_IO;
		}
		if (pump(&up, p[0].revents, p[1].revents, true) < 0) {
			/* The server closed its side for reading: nothing more to send; with
			 * -r, what it did not take goes to the next server, on a new connection. */
			if (again) {
				down.eof = true;
			} else {
				up.len = 0;
				up.eof = up.done = true;
			}
		}
		if (up.done && !shut_wr) {
			shutdown(sock, SHUT_WR);
			shut_wr = true;
		}
		if (pump(&down, p[2].revents, p[3].revents, false) < 0)
			return EXIT_FAILURE_IO; /* stdout is gone: nobody is listening */
	}
	return 0;
}
