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
#include "sbx/file.h"
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
	return sbx_path_read_beneath(dir, rel, max, out, len, err);
}

int sbx_rundir__copy(const char *src_dir, const char *rel, const char *dst_dir, const char *dst_rel,
		     sbx_error *err)
{
	_cleanup_free_ char *data = NULL;
	size_t len;
	int r;

	r = sbx_rundir__read(src_dir, rel, COPY_MAX, &data, &len, err);
	if (r < 0)
		return r;
	return sbx_path_write_beneath(dst_dir, dst_rel, data, len, err);
}

int sbx_rundir__write(const char *dir, const char *name, const void *data, size_t len,
		      sbx_error *err)
{
	_cleanup_free_ char *p = NULL;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return sbx_path_write_atomic(p, data, len, err);
}
