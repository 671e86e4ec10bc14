/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/path.h"
#include "sbx/view.h"

static bool named_connection(const char *path)
{
	const char *base = strrchr(path, '/');

	return strcmp(base ? base + 1 : path, "connection.json") == 0;
}

/*
 * connection.json holds a live run's token, so it is never reached by another
 * name: a regular file with more than one link (a hard link to it leaves no
 * trace of its name, so none is served), or a symlink whose file is named
 * connection.json. Its own name is the callers' to refuse or read.
 */
static int check_not_a_secret_alias(int fd, const char *rel, sbx_error *err)
{
	char proc[64], target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, -errno, "'%s': cannot stat: %s", rel, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return 0;
	if (st.st_nlink > 1)
		return sbx_error_set(err, -EACCES,
				     "'%s': not served: a hard-linked file (it may be a run's "
				     "connection.json, which holds its token)",
				     rel);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, target, sizeof(target) - 1);
	if (n < 0)
		return sbx_error_set(err, -errno, "'%s': cannot resolve: %s", rel, strerror(errno));
	target[n] = '\0';
	if (named_connection(target) && !named_connection(rel))
		return sbx_error_set(err, -EACCES,
				     "'%s': not served: a link to a connection.json, which holds "
				     "a run's token",
				     rel);
	return 0;
}

int sbx_view_open(int rootfd, const char *rel, int flags, sbx_error *err)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (!rel || !*rel)
		rel = ".";
	else if ((r = sbx_path_check_relative(rel, err)) < 0)
		return r;
	/* RESOLVE_BENEATH: symlinks that stay inside the root work, one pointing out is refused. */
	fd = sbx_path_open_beneath(rootfd, rel, flags, 0, false, err);
	if (fd < 0)
		return fd;
	r = check_not_a_secret_alias(fd, rel, err);
	if (r < 0)
		return r;
	return TAKE_FD(fd);
}

int sbx_view_read(int rootfd, const char *rel, size_t max, char **out, size_t *len_out,
		  sbx_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r;

	fd = sbx_view_open(rootfd, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, -errno, "'%s': cannot stat: %s", rel, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return sbx_error_set(err, -EINVAL, "'%s': not a regular file", rel);
	if ((size_t)st.st_size > max)
		return sbx_error_set(err, -EFBIG, "'%s': larger than %zu bytes (limit)", rel, max);
	r = sbx_file_read_fd(fd, (size_t)st.st_size, out, len_out);
	if (r < 0)
		return sbx_error_set(err, r, "'%s': read failed: %s", rel, strerror(-r));
	return 0;
}
