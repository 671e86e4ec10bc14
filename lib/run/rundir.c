/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rundir.h"
#include "sbx/cleanup.h"
#include "sbx/path.h"

#define COPY_MAX (1024LL * 1024 * 1024)

static int mkdir_p(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);

	if (!copy)
		return -ENOMEM;
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(copy, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int sbx_rundir__create(const char *runs_dir, const char *run_id, char **out, sbx_error *err)
{
	static const char *const sub[] = {"task", "inputs", "outputs"};
	_cleanup_free_ char *dir = NULL;
	int r;

	r = mkdir_p(runs_dir);
	if (r < 0)
		return sbx_error_set(err, r, "runs directory '%s': %s", runs_dir, strerror(-r));
	if (asprintf(&dir, "%s/%s", runs_dir, run_id) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (mkdir(dir, 0755) < 0)
		return sbx_error_set(err, -errno, "run directory '%s': %s", dir,
				     errno == EEXIST ? "already exists" : strerror(errno));
	for (size_t i = 0; i < SBX_ELEMENTSOF(sub); i++) {
		_cleanup_free_ char *p = NULL;

		if (asprintf(&p, "%s/%s", dir, sub[i]) < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		if (mkdir(p, 0755) < 0)
			return sbx_error_set(err, -errno, "'%s': %s", p, strerror(errno));
	}
	*out = TAKE_PTR(dir);
	return 0;
}

int sbx_rundir__read(const char *dir, const char *rel, size_t max, char **out, size_t *len,
		     sbx_error *err)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got = 0;
	int r;

	r = sbx_path_check_relative(rel, err);
	if (r < 0)
		return r;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return sbx_error_set(err, -errno, "'%s': %s", dir, strerror(errno));
	fd = sbx_path_open_beneath(dfd, rel, O_RDONLY, 0, true, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return sbx_error_set(err, -EINVAL, "'%s/%s': not a regular file", dir, rel);
	if ((size_t)st.st_size > max)
		return sbx_error_set(err, -EFBIG, "'%s/%s': larger than %zu bytes", dir, rel, max);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
	*out = TAKE_PTR(buf);
	return 0;
}

int sbx_rundir__copy(const char *src_dir, const char *rel, const char *dst_dir, const char *dst_rel,
		     sbx_error *err)
{
	_cleanup_free_ char *data = NULL, *dcopy = NULL;
	_cleanup_close_ int dfd = -1, sub = -1, fd = -1;
	size_t len;
	const char *base;
	int r;

	r = sbx_rundir__read(src_dir, rel, COPY_MAX, &data, &len, err);
	if (r < 0)
		return r;
	r = sbx_path_check_relative(dst_rel, err);
	if (r < 0)
		return r;
	dfd = open(dst_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return sbx_error_set(err, -errno, "'%s': %s", dst_dir, strerror(errno));
	dcopy = strdup(dst_rel);
	if (!dcopy)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	base = strrchr(dst_rel, '/');
	if (base) {
		dcopy[base - dst_rel] = '\0';
		sub = sbx_path_mkdirs_beneath(dfd, dcopy, 0755, err);
		if (sub < 0)
			return sub;
		base++;
	} else {
		base = dst_rel;
	}
	fd = sbx_path_open_beneath(sub >= 0 ? sub : dfd, base, O_WRONLY | O_CREAT | O_TRUNC, 0644,
				   true, err);
	if (fd < 0)
		return fd;
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sbx_error_set(err, -errno, "writing '%s/%s': %s", dst_dir, dst_rel,
					     strerror(errno));
		off += (size_t)n;
	}
	return 0;
}

int sbx_rundir__write(const char *dir, const char *name, const void *data, size_t len,
		      sbx_error *err)
{
	_cleanup_free_ char *p = NULL;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return sbx_path_write_atomic(p, data, len, err);
}
