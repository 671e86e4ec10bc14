/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/path.h"

#define PATH_MAX_LEN 4096

bool sbx_path_within(const char *path, const char *top)
{
	size_t n = strlen(top);

	return strcmp(top, "/") == 0
		       ? path[0] == '/'
		       : strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int sbx_path_check_relative(const char *path, sbx_error *err)
{
	size_t len;
	const char *p;

	if (!path || !*path)
		return sbx_error_set(err, -EINVAL, "empty path");
	len = strnlen(path, PATH_MAX_LEN + 1);
	if (len > PATH_MAX_LEN)
		return sbx_error_set(err, -ENAMETOOLONG, "path longer than %d bytes", PATH_MAX_LEN);
	if (path[0] == '/')
		return sbx_error_set(err, -EXDEV, "'%s': absolute paths are not allowed", path);
	for (p = path; *p;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return sbx_error_set(err, -EXDEV, "'%s': '..' is not allowed", path);
		if (!slash)
			break;
		p = slash + 1;
	}
	return 0;
}

/*
 * Fallback where openat2 is unavailable: walk the path one component at a
 * time with O_NOFOLLOW, so no symlink is ever followed (stricter than
 * RESOLVE_BENEATH, which allows symlinks that stay inside). ".." was already
 * refused lexically by the caller.
 */
static int walk_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
	_cleanup_free_ char *copy = strdup(path);
	char *p, *slash;
	int cur;

	if (!copy)
		return -ENOMEM;
	cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return -errno;
	for (p = copy; *p == '/'; p++)
		;
	for (;;) {
		int next;

		slash = strchr(p, '/');
		if (slash) {
			*slash = '\0';
			while (slash[1] == '/')
				slash++;
		}
		if (!slash || !slash[1]) {
			const char *last = *p ? p : ".";
			next = openat(cur, last, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			next = next < 0 ? -errno : next;
			close(cur);
			return next;
		}
		if (*p && strcmp(p, ".") != 0) {
			next = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (next < 0) {
				int r = errno == ENOTDIR ? -ELOOP : -errno;
				close(cur);
				return r;
			}
			close(cur);
			cur = next;
		}
		p = slash + 1;
	}
}

static int openat2_beneath(int dirfd, const char *path, int flags, mode_t mode, bool no_symlinks)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (no_symlinks)
		how.resolve |= RESOLVE_NO_SYMLINKS;
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		return walk_beneath(dirfd, path, flags, mode); /* old kernel, seccomp, valgrind */
	return fd < 0 ? -errno : (int)fd;
}

int sbx_path_open_beneath(int dirfd, const char *path, int flags, mode_t mode, bool no_symlinks,
			  sbx_error *err)
{
	int fd, r;

	r = sbx_path_check_relative(path, err);
	if (r < 0)
		return r;
	fd = openat2_beneath(dirfd, path, flags, mode, no_symlinks);
	if (fd >= 0)
		return fd;
	switch (fd) {
	case -EXDEV:
		return sbx_error_set(err, fd, "'%s': resolves outside the allowed directory", path);
	case -ELOOP:
		return sbx_error_set(err, fd, "'%s': symbolic links are not allowed here", path);
	case -ENOSYS:
		return sbx_error_set(err, fd, "'%s': kernel lacks openat2 (needs Linux 5.6+)",
				     path);
	default:
		return sbx_error_set(err, fd, "'%s': %s", path, strerror(-fd));
	}
}

int sbx_path_mkdirs_beneath(int dirfd, const char *path, mode_t mode, sbx_error *err)
{
	_cleanup_free_ char *copy = NULL;
	int cur, r;
	char *p, *slash;

	r = sbx_path_check_relative(path, err);
	if (r < 0)
		return r;
	copy = strdup(path);
	if (!copy)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return sbx_error_set(err, -errno, "'%s': %s", path, strerror(errno));
	for (p = copy; p && *p; p = slash) {
		int next;

		slash = strchr(p, '/');
		if (slash)
			*slash++ = '\0';
		if (!*p || strcmp(p, ".") == 0)
			continue;
		if (mkdirat(cur, p, mode) < 0 && errno != EEXIST) {
			r = -errno;
			close(cur);
			return sbx_error_set(err, r, "'%s': cannot create directory: %s", path,
					     strerror(-r));
		}
		next = openat2_beneath(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0, true);
		close(cur);
		if (next < 0)
			return sbx_error_set(err, next,
					     "'%s': not a directory inside the target: %s", path,
					     strerror(-next));
		cur = next;
	}
	return cur;
}

/*
 * The process's umask, read without changing it (umask(2) can only swap, which
 * races with other threads creating files): Linux reports it in /proc.
 */
static mode_t current_umask(void)
{
	char line[128];
	unsigned m = 022;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 022;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	fclose(f);
	return (mode_t)(m & 0777);
}

int sbx_path_write_atomic(const char *path, const void *data, size_t len, sbx_error *err)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, -errno, "'%s': cannot create temp file: %s", path,
				     strerror(errno));
	r = sbx_write_all(fd, data, len);
	if (r < 0) {
		unlink(tmp);
		return sbx_error_set(err, r, "'%s': write failed: %s", path, strerror(-r));
	}
	/* mkostemp made it 0600; the file gets what open(0666) would (a shared group keeps g+w). */
	if (fchmod(fd, 0666 & ~current_umask()) < 0 || fsync(fd) < 0 || rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		return sbx_error_set(err, r, "'%s': cannot replace atomically: %s", path,
				     strerror(-r));
	}
	return 0;
}

/* dir opened as the root rel must stay beneath, once rel is known to be relative. */
static int open_root(const char *dir, const char *rel, sbx_error *err)
{
	int r = sbx_path_check_relative(rel, err), dfd;

	if (r < 0)
		return r;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return sbx_error_set(err, -errno, "'%s': %s", dir, strerror(errno));
	return dfd;
}

int sbx_path_read_beneath(const char *dir, const char *rel, size_t max, char **out, size_t *len,
			  sbx_error *err)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	struct stat st;
	int r;

	dfd = open_root(dir, rel, err);
	if (dfd < 0)
		return dfd;
	fd = sbx_path_open_beneath(dfd, rel, O_RDONLY, 0, true, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return sbx_error_set(err, -EINVAL, "'%s/%s': not a regular file", dir, rel);
	if ((size_t)st.st_size > max)
		return sbx_error_set(err, -EFBIG, "'%s/%s': larger than %zu bytes", dir, rel, max);
	r = sbx_file_read_fd(fd, (size_t)st.st_size, out, len);
	if (r < 0)
		return sbx_error_set(err, r, "'%s/%s': read failed: %s", dir, rel, strerror(-r));
	return 0;
}

int sbx_path_write_beneath(const char *dir, const char *rel, const void *data, size_t len,
			   sbx_error *err)
{
	_cleanup_close_ int dfd = -1, sub = -1, fd = -1;
	_cleanup_free_ char *parent = NULL;
	const char *base;
	int r;

	dfd = open_root(dir, rel, err);
	if (dfd < 0)
		return dfd;
	base = strrchr(rel, '/');
	if (base) {
		parent = strndup(rel, (size_t)(base - rel));
		if (!parent)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		sub = sbx_path_mkdirs_beneath(dfd, parent, 0755, err);
		if (sub < 0)
			return sub;
		base++;
	} else {
		base = rel;
	}
	fd = sbx_path_open_beneath(sub >= 0 ? sub : dfd, base, O_WRONLY | O_CREAT | O_TRUNC, 0644,
				   true, err);
	if (fd < 0)
		return fd;
	r = sbx_write_all(fd, data, len);
	if (r < 0)
		return sbx_error_set(err, r, "writing '%s/%s': %s", dir, rel, strerror(-r));
	return 0;
}

int sbx_path_remove_tree_at(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	int r = 0;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 && errno != ENOTDIR && errno != ELOOP)
		return -errno; /* a directory we may not open: say why, not EISDIR */
	if (fd < 0)	       /* a file or a symlink */
		return unlinkat(at, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	/* Depth first, so a directory is empty when its turn comes. */
	for (struct dirent *de; (de = readdir(d));)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			int k = sbx_path_remove_tree_at(dirfd(d), de->d_name);
			r = r ? r : k;
		}
	closedir(d);
	if (unlinkat(at, name, AT_REMOVEDIR) < 0 && !r)
		r = -errno;
	return r;
}
