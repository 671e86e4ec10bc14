/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/path.h"
#include "sbx/view.h"

int sbx_view_open(int rootfd, const char *rel, int flags, sbx_error *err)
{
	int r;

	if (!rel || !*rel)
		rel = ".";
	else if ((r = sbx_path_check_relative(rel, err)) < 0)
		return r;
	/* RESOLVE_BENEATH: symlinks that stay inside the root work, one pointing out is refused. */
	return sbx_path_open_beneath(rootfd, rel, flags, 0, false, err);
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
