/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sbx/clock.h"
#include "sbx/file.h"
#include "sbx/stream.h"

ssize_t sbx_stream_read(sbx_stream *s, void *buf, size_t n, int timeout_ms)
{
	return s->ops->read(s, buf, n, timeout_ms);
}

int sbx_stream_write(sbx_stream *s, const void *buf, size_t n)
{
	return s->ops->write(s, buf, n);
}

bool sbx_stream_stale(sbx_stream *s)
{
	return s->ops->stale(s);
}

void sbx_stream_close(sbx_stream *s)
{
	if (s)
		s->ops->close(s);
}

typedef struct fd_stream {
	sbx_stream base;
	int rfd, wfd;
} fd_stream;

static ssize_t fd_read(sbx_stream *s, void *buf, size_t n, int timeout_ms)
{
	fd_stream *f = (fd_stream *)s;
	ssize_t r;

	for (;;) {
		int k = sbx_fd_wait(f->rfd, POLLIN,
				    timeout_ms < 0 ? -1 : sbx_now_ms() + timeout_ms);

		if (k < 0)
			return k;
		r = read(f->rfd, buf, n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		return r < 0 ? -errno : r;
	}
}

static int fd_write(sbx_stream *s, const void *buf, size_t n)
{
	fd_stream *f = (fd_stream *)s;
	const char *p = buf;

	while (n > 0) {
		ssize_t w = send(f->wfd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == ENOTSOCK)
			w = write(f->wfd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pw = {.fd = f->wfd, .events = POLLOUT};
			poll(&pw, 1, 1000);
			continue;
		}
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static bool fd_stale(sbx_stream *s)
{
	fd_stream *f = (fd_stream *)s;
	struct pollfd p = {.fd = f->rfd, .events = POLLIN};

	/* An idle stream must have nothing to say: readable means EOF or junk. */
	return poll(&p, 1, 0) != 0;
}

static void fd_close(sbx_stream *s)
{
	fd_stream *f = (fd_stream *)s;

	if (f->wfd >= 0 && f->wfd != f->rfd)
		close(f->wfd);
	if (f->rfd >= 0)
		close(f->rfd);
	free(f);
}

static const sbx_stream_ops fd_ops = {fd_read, fd_write, fd_stale, fd_close};

int sbx_stream_from_fds(sbx_stream **out, int rfd, int wfd)
{
	fd_stream *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->base.ops = &fd_ops;
	f->rfd = rfd;
	f->wfd = wfd;
	*out = &f->base;
	return 0;
}

int sbx_stream_connect_unix(sbx_stream **out, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = sbx_stream_from_fds(out, fd, fd);
	if (r < 0)
		close(fd);
	return r;
}
