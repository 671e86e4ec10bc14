/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "task_session.h"
#include "workspace.h"

#define WALK_MAX_DEPTH 16

const char *workspace_relative(const tool_context *ctx, const char *arg, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	size_t n = strlen(ctx->workspace);

	if (arg[0] == '/' && strncmp(arg, ctx->workspace, n) == 0 && arg[n] == '/') {
		arg += n;
		while (*arg == '/')
			arg++;
	}
	while (arg[0] == '.' && arg[1] == '/')
		arg += 2;
	if (sbx_path_check_relative(arg, &err) < 0) {
		if (err.code == -EXDEV) {
			tool_fail(out, TOOL_E_ARGUMENT, "Path '%s' is outside the workspace", arg);
			return NULL;
		}
		tool_fail(out, TOOL_E_ARGUMENT, "Invalid path '%s': %s", arg,
			  sbx_error_message(&err));
		return NULL;
	}
	return arg;
}

int workspace_open_regular(const tool_context *ctx, const char *arg, struct stat *st,
			   tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	struct stat sb;
	const char *rel;
	int fd;

	rel = workspace_relative(ctx, arg, out);
	if (!rel)
		return -EINVAL;
	fd = sbx_path_open_beneath(ctx->workspace_fd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0,
				   false, &err);
	if (fd < 0) {
		switch (fd) {
		case -ENOENT:
		case -ENOTDIR:
			tool_fail(out, TOOL_E_ARGUMENT, "File not found: %s", arg);
			break;
		case -EXDEV:
		case -ELOOP:
			tool_fail(out, TOOL_E_ARGUMENT, "Path '%s' is outside the workspace", arg);
			break;
		default:
			tool_fail(out, TOOL_E_ARGUMENT, "Cannot open '%s': %s", arg, strerror(-fd));
		}
		return fd;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		tool_fail(out, TOOL_E_ARGUMENT, "'%s' is not a regular file", arg);
		return -EINVAL;
	}
	/* Back to blocking reads: O_NONBLOCK only kept a FIFO from hanging the open. */
	fcntl(fd, F_SETFL, 0);
	if (st)
		*st = sb;
	return fd;
}

static bool temp_name(const char *name)
{
	return strstr(name, ".tmp.") != NULL && name[0] == '.';
}

static int walk(int dirfd, char *prefix, size_t prefix_cap, int depth,
		int (*fn)(const char *, const struct stat *, void *), void *payload, size_t *left)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > WALK_MAX_DEPTH)
		return 0;
	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return -errno;
	}
	while (r == 0 && *left > 0 && (de = readdir(d))) {
		struct stat st;
		size_t n = strlen(prefix);

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    temp_name(de->d_name) || (depth == 0 && strcmp(de->d_name, TASK_MARKER) == 0))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (n + strlen(de->d_name) + 2 >= prefix_cap)
			continue;
		snprintf(prefix + n, prefix_cap - n, "%s%s", n ? "/" : "", de->d_name);
		if (S_ISREG(st.st_mode)) {
			(*left)--;
			r = fn(prefix, &st, payload);
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				r = walk(sub, prefix, prefix_cap, depth + 1, fn, payload, left);
		}
		prefix[n] = '\0';
	}
	closedir(d);
	return r;
}

int workspace_walk(int workspace_fd, int (*fn)(const char *rel, const struct stat *st, void *),
		   void *payload, size_t max)
{
	char prefix[4096] = "";
	int fd = openat(workspace_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return walk(fd, prefix, sizeof(prefix), 0, fn, payload, &max);
}

int workspace_write_atomic(int workspace_fd, const char *rel, const void *data, size_t len,
			   struct stat *st, sbx_error *err)
{
	_cleanup_free_ char *dir = strdup(rel), *tmp = NULL;
	_cleanup_close_ int dfd = -1, fd = -1;
	const char *base;
	char *slash;
	int r;

	if (!dir)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		base = slash + 1;
		dfd = sbx_path_open_beneath(workspace_fd, dir, O_PATH | O_DIRECTORY, 0, false, err);
		if (dfd < 0)
			return dfd;
	} else {
		base = rel;
		dfd = fcntl(workspace_fd, F_DUPFD_CLOEXEC, 3);
		if (dfd < 0)
			return sbx_error_set(err, -errno, "%s", strerror(errno));
	}
	for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
		free(tmp);
		if (asprintf(&tmp, ".%s.tmp.%d.%d", base, getpid(), rand()) < 0) {
			tmp = NULL;
			return sbx_error_set(err, -ENOMEM, "out of memory");
		}
		/* 0666 less the umask: in a sandbox (umask 002) the agent's uid may write it too.
		 */
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			return sbx_error_set(err, -errno, "cannot create a temp file: %s",
					     strerror(errno));
	}
	if (fd < 0)
		return sbx_error_set(err, -EEXIST, "cannot create a temp file");
	r = sbx_write_all(fd, data, len);
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		return sbx_error_set(err, r, "write failed: %s", strerror(-r));
	}
	if (fsync(fd) < 0 || (st && fstat(fd, st) < 0) || renameat(dfd, tmp, dfd, base) < 0) {
		r = -errno;
		unlinkat(dfd, tmp, 0);
		return sbx_error_set(err, r, "cannot replace the file: %s", strerror(-r));
	}
	return 0;
}

const char *workspace_mime_type(const char *name)
{
	static const struct {
		const char *ext, *mime;
	} types[] = {
		{".ods", "application/vnd.oasis.opendocument.spreadsheet"},
		{".xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
		{".csv", "text/csv"},
		{".txt", "text/plain"},
		{".md", "text/markdown"},
		{".json", "application/json"},
		{".py", "text/x-python"},
		{".yaml", "application/yaml"},
		{".yml", "application/yaml"},
		{".png", "image/png"},
	};
	const char *dot = strrchr(name, '.');

	if (dot)
		for (size_t i = 0; i < SBX_ELEMENTSOF(types); i++)
			if (strcasecmp(dot, types[i].ext) == 0)
				return types[i].mime;
	return "application/octet-stream";
}
