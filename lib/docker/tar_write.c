/* SPDX-License-Identifier: MIT */
/* Building tars in memory with libarchive: files for a container, build contexts, rootfs. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "docker-internal.h"
#include "sbx/log.h"
#include "sbx/path.h"

#define DEFAULT_MAX    ((size_t)1 << 30)
#define MAX_TREE_DEPTH 64

struct sbx_docker_tar {
	struct archive *a;
	sbx_buf out;
	int64_t mtime;
	bool finished;
	int write_error; /* from the output callback */
};

static la_ssize_t out_write(struct archive *a, void *payload, const void *p, size_t n)
{
	sbx_docker_tar *t = payload;
	int r = sbx_buf_append(&t->out, p, n);

	if (r < 0) {
		t->write_error = r;
		archive_set_error(a, -r, "archive larger than %zu bytes", t->out.max);
		return -1;
	}
	return (la_ssize_t)n;
}

void sbx_docker_tar_free(sbx_docker_tar *t)
{
	if (!t)
		return;
	archive_write_free(t->a);
	sbx_buf_free(&t->out);
	free(t);
}

int sbx_docker_tar_new(sbx_docker_tar **out, size_t max_bytes, sbx_error *err)
{
	sbx_docker_tar *t = calloc(1, sizeof(*t));

	if (!t)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	sbx_buf_init(&t->out, max_bytes ? max_bytes : DEFAULT_MAX);
	t->mtime = (int64_t)time(NULL);
	t->a = archive_write_new();
	if (!t->a || archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(t->a, 1) != ARCHIVE_OK ||
	    archive_write_open(t->a, t, NULL, out_write, NULL) != ARCHIVE_OK) {
		sbx_docker_tar_free(t);
		return sbx_error_set(err, -ENOMEM, "tar: cannot start an archive");
	}
	*out = t;
	return 0;
}

void sbx_docker_tar_set_mtime(sbx_docker_tar *t, int64_t mtime)
{
	t->mtime = mtime;
}

static int tar_fail(sbx_docker_tar *t, const char *name, sbx_error *err)
{
	if (t->write_error)
		return sbx_error_set(err, t->write_error,
				     "tar: '%s': archive larger than %zu bytes", name, t->out.max);
	return sbx_error_set(err, -EIO, "tar: '%s': %s", name, archive_error_string(t->a));
}

static int add_entry(sbx_docker_tar *t, const char *name, mode_t type, mode_t mode, uid_t uid,
		     gid_t gid, const char *link, const void *data, size_t len, sbx_error *err)
{
	struct archive_entry *e;
	int r = 0;

	if (t->finished)
		return sbx_error_set(err, -EINVAL, "tar: '%s': archive already finished", name);
	r = sbx_path_check_relative(name, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "tar");
	e = archive_entry_new();
	if (!e)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, mode & 07777);
	archive_entry_set_uid(e, uid);
	archive_entry_set_gid(e, gid);
	archive_entry_set_mtime(e, t->mtime, 0);
	archive_entry_set_size(e, type == AE_IFREG ? (la_int64_t)len : 0);
	if (link)
		archive_entry_set_symlink(e, link);
	if (archive_write_header(t->a, e) != ARCHIVE_OK)
		r = tar_fail(t, name, err);
	else if (len && archive_write_data(t->a, data, len) != (la_ssize_t)len)
		r = tar_fail(t, name, err);
	archive_entry_free(e);
	return r;
}

int sbx_docker_tar_add_file(sbx_docker_tar *t, const char *name, const void *data, size_t len,
			    mode_t mode, uid_t uid, gid_t gid, sbx_error *err)
{
	return add_entry(t, name, AE_IFREG, mode, uid, gid, NULL, data, len, err);
}

int sbx_docker_tar_add_dir(sbx_docker_tar *t, const char *name, mode_t mode, uid_t uid, gid_t gid,
			   sbx_error *err)
{
	return add_entry(t, name, AE_IFDIR, mode, uid, gid, NULL, NULL, 0, err);
}

int sbx_docker_tar_add_symlink(sbx_docker_tar *t, const char *name, const char *target,
			       sbx_error *err)
{
	if (!target || !*target)
		return sbx_error_set(err, -EINVAL, "tar: '%s': empty symlink target", name);
	return add_entry(t, name, AE_IFLNK, 0777, 0, 0, target, NULL, 0, err);
}

/* Streams one regular file into the archive without holding it in memory twice. */
static int add_host_file(sbx_docker_tar *t, int dirfd, const char *entry, const char *host_name,
			 const struct stat *st, uid_t uid, gid_t gid, sbx_error *err)
{
	_cleanup_close_ int fd = openat(dirfd, host_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct archive_entry *e;
	char buf[65536];
	int r = 0;

	if (fd < 0)
		return sbx_error_set(err, -errno, "tar: '%s': %s", entry, strerror(errno));
	e = archive_entry_new();
	if (!e)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	archive_entry_set_pathname(e, entry);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, st->st_mode & 0777);
	archive_entry_set_uid(e, uid == (uid_t)-1 ? st->st_uid : uid);
	archive_entry_set_gid(e, gid == (gid_t)-1 ? st->st_gid : gid);
	archive_entry_set_mtime(e, t->mtime, 0);
	archive_entry_set_size(e, st->st_size);
	if (archive_write_header(t->a, e) != ARCHIVE_OK)
		r = tar_fail(t, entry, err);
	for (off_t left = st->st_size; r == 0 && left > 0;) {
		ssize_t n = read(fd, buf, sizeof(buf) < (size_t)left ? sizeof(buf) : (size_t)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = sbx_error_set(err, n < 0 ? -errno : -EIO, "tar: '%s': %s", entry,
					  n < 0 ? strerror(errno) : "file shrank while reading");
			break;
		}
		if (archive_write_data(t->a, buf, (size_t)n) != n)
			r = tar_fail(t, entry, err);
		left -= n;
	}
	archive_entry_free(e);
	return r;
}

static int add_tree(sbx_docker_tar *t, int fd, const char *prefix, uid_t uid, gid_t gid, int depth,
		    sbx_error *err)
{
	DIR *dir;
	struct dirent *de;
	int r = 0;

	if (depth > MAX_TREE_DEPTH)
		return sbx_error_set(err, -ELOOP, "tar: '%s': deeper than %d directories", prefix,
				     MAX_TREE_DEPTH);
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return sbx_error_set(err, -errno, "tar: '%s': %s", prefix, strerror(errno));
	}
	while (r == 0 && (errno = 0, de = readdir(dir))) {
		_cleanup_free_ char *entry = NULL;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (asprintf(&entry, "%s%s%s", prefix, *prefix ? "/" : "", de->d_name) < 0) {
			entry = NULL;
			r = sbx_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = sbx_error_set(err, -errno, "tar: '%s': %s", entry, strerror(errno));
			break;
		}
		if (S_ISREG(st.st_mode)) {
			r = add_host_file(t, dirfd(dir), entry, de->d_name, &st, uid, gid, err);
		} else if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(dir), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				r = sbx_error_set(err, -errno, "tar: '%s': %s", entry,
						  strerror(errno));
				break;
			}
			r = add_entry(t, entry, AE_IFDIR, st.st_mode,
				      uid == (uid_t)-1 ? st.st_uid : uid,
				      gid == (gid_t)-1 ? st.st_gid : gid, NULL, NULL, 0, err);
			if (r == 0)
				r = add_tree(t, sub, entry, uid, gid, depth + 1, err);
			else
				close(sub);
		} else if (S_ISLNK(st.st_mode)) {
			char target[4097];
			ssize_t n = readlinkat(dirfd(dir), de->d_name, target, sizeof(target) - 1);
			if (n < 0) {
				r = sbx_error_set(err, -errno, "tar: '%s': %s", entry,
						  strerror(errno));
				break;
			}
			target[n] = '\0';
			r = sbx_docker_tar_add_symlink(t, entry, target, err);
		} else {
			sbx_log_warning("tar: '%s': not a file, directory or symlink; skipped",
					entry);
		}
	}
	if (r == 0 && errno)
		r = sbx_error_set(err, -errno, "tar: '%s': %s", prefix, strerror(errno));
	closedir(dir);
	return r;
}

int sbx_docker_tar_add_tree(sbx_docker_tar *t, const char *host_dir, const char *prefix, uid_t uid,
			    gid_t gid, sbx_error *err)
{
	int fd;

	if (t->finished)
		return sbx_error_set(err, -EINVAL, "tar: archive already finished");
	if (prefix && *prefix) {
		int r = sbx_path_check_relative(prefix, err);
		if (r < 0)
			return r;
	}
	fd = open(host_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, -errno, "'%s': %s", host_dir, strerror(errno));
	return add_tree(t, fd, prefix ? prefix : "", uid, gid, 0, err);
}

int sbx_docker_tar_finish(sbx_docker_tar *t, const void **data, size_t *len, sbx_error *err)
{
	if (!t->finished) {
		if (archive_write_close(t->a) != ARCHIVE_OK)
			return tar_fail(t, "(end)", err);
		t->finished = true;
	}
	*data = t->out.data ? (const void *)t->out.data : (const void *)"";
	*len = t->out.len;
	return 0;
}
