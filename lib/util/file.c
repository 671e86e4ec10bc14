/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/file.h"

ssize_t sbx_read_retry(int fd, void *p, size_t n)
{
	ssize_t r;

	do
		r = read(fd, p, n);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

int sbx_file_read_fd(int fd, size_t size, char **out, size_t *len_out)
{
	_cleanup_free_ char *buf = NULL;
	size_t got = 0;

	buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	while (got < size) {
		ssize_t n = sbx_read_retry(fd, buf + got, size - got);

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*out = TAKE_PTR(buf);
	*len_out = got;
	return 0;
}

int sbx_file_read_capped(int dirfd, const char *path, size_t max, char **out, size_t *len_out,
			 sbx_error *err)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	int r;

	if (fd < 0)
		return sbx_error_set(err, -errno, "'%s': cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, -errno, "'%s': cannot stat: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return sbx_error_set(err, -EINVAL, "'%s': not a regular file", path);
	if ((unsigned long long)st.st_size > max)
		return sbx_error_set(err, -EFBIG, "'%s': larger than %zu bytes (limit)", path, max);
	r = sbx_file_read_fd(fd, (size_t)st.st_size, out, len_out);
	if (r == -ENOMEM)
		return sbx_error_set(err, r, "'%s': out of memory", path);
	if (r < 0)
		return sbx_error_set(err, r, "'%s': read failed: %s", path, strerror(-r));
	return 0;
}

/* off < 0: write() at the file position; else pwrite() from off. */
static int write_loop(int fd, const void *p, size_t n, off_t off)
{
	while (n > 0) {
		ssize_t w = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p = (const char *)p + w;
		n -= (size_t)w;
		if (off >= 0)
			off += w;
	}
	return 0;
}

int sbx_write_all(int fd, const void *p, size_t n)
{
	return write_loop(fd, p, n, -1);
}

int sbx_pwrite_all(int fd, const void *p, size_t n, off_t off)
{
	return off < 0 ? -EINVAL : write_loop(fd, p, n, off);
}

int sbx_fd_wait(int fd, short events, long deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		long left = deadline < 0 ? -1 : deadline - (long)sbx_now_ms();
		int n = poll(&p, 1, deadline >= 0 && left < 0 ? 0 : (int)left);

		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}
