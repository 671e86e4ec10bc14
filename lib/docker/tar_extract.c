/* SPDX-License-Identifier: MIT */
/*
 * Extracting an UNTRUSTED tar (what a container hands back) beneath a
 * directory. Lexical checks give clear messages; the kernel (openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS via sbx/path.h) enforces; a final
 * pass resolves every symlink created and removes those that leave.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/log.h"

#define DEFAULT_MAX_FILE    ((uint64_t)256 << 20)
#define DEFAULT_MAX_TOTAL   ((uint64_t)1 << 30)
#define DEFAULT_MAX_ENTRIES 100000
#define MAX_NAME	    4096

typedef struct extractor {
	struct archive *a;
	int dirfd;
	sbx_docker_extract_opts o;
	sbx_docker_extract_stats st;
	char *first_refused; /* "'name': reason" */
	char **links;	     /* symlinks created, re-checked at the end */
	size_t n_links;
	char **refused; /* names refused: nothing is written beneath them */
	size_t n_refused;
} extractor;

static bool under_refused(const extractor *x, const char *name, const char **which)
{
	for (size_t i = 0; i < x->n_refused; i++) {
		size_t n = strlen(x->refused[i]);
		if (strncmp(name, x->refused[i], n) == 0 && name[n] == '/') {
			*which = x->refused[i];
			return true;
		}
	}
	return false;
}

/* Up to 1024 names: beyond, entries under them are still confined, only less tidy. */
static void remember_refused(extractor *x, const char *name)
{
	char **v;

	if (x->n_refused >= 1024)
		return;
	v = realloc(x->refused, (x->n_refused + 1) * sizeof(*v));

	if (!v)
		return;
	x->refused = v;
	v[x->n_refused] = strdup(name);
	if (v[x->n_refused])
		x->n_refused++;
}

bool sbx_docker__symlink_stays_inside(const char *link_name, const char *target)
{
	long depth = 0;
	const char *p;

	if (!target || !*target || target[0] == '/')
		return false;
	/* The link's own directory: every component of its name but the last. */
	for (p = link_name; (p = strchr(p, '/')); p++)
		depth++;
	for (p = target; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return false;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			depth++;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

/*
 * Normalises an entry name into out: drops "./" and empty components and
 * the first strip components. Returns 1 with a relative name, 0 when nothing
 * is left (the archive's root: skipped quietly), or -1 with *why set.
 */
static int normalise(const char *name, unsigned int strip, char *out, size_t cap, const char **why)
{
	size_t len = 0;
	const char *p = name;

	if (!name || !*name) {
		*why = "empty name";
		return -1;
	}
	if (name[0] == '/') {
		*why = "absolute path";
		return -1;
	}
	if (strnlen(name, MAX_NAME + 1) > MAX_NAME) {
		*why = "name longer than 4096 bytes";
		return -1;
	}
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			*why = "'..' in the path";
			return -1;
		}
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (strip > 0) {
				strip--;
			} else {
				if (len + n + 2 > cap) {
					*why = "name too long";
					return -1;
				}
				if (len)
					out[len++] = '/';
				memcpy(out + len, p, n);
				len += n;
			}
		}
		p += n;
		if (*p == '/')
			p++;
	}
	out[len] = '\0';
	return len > 0 ? 1 : 0;
}

static void refuse(extractor *x, const char *entry, const char *reason)
{
	x->st.refused++;
	if (!x->first_refused && asprintf(&x->first_refused, "'%s': %s", entry, reason) < 0)
		x->first_refused = NULL;
	sbx_log_warning("extract: refused '%s': %s", entry, reason);
	if (x->o.refused)
		x->o.refused(entry, reason, x->o.refused_payload);
}

/* An fd of the entry's parent directory (created as needed), and its last component. */
static int open_parent(extractor *x, char *name, const char **base, sbx_error *err)
{
	char *slash = strrchr(name, '/');
	int fd;

	if (!slash) {
		*base = name;
		fd = fcntl(x->dirfd, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? sbx_error_set(err, -errno, "%s", strerror(errno)) : fd;
	}
	*slash = '\0';
	fd = sbx_path_mkdirs_beneath(x->dirfd, name, 0755, err);
	*slash = '/';
	*base = slash + 1;
	return fd;
}

static mode_t safe_mode(mode_t m)
{
	return (m & 0755) | 0600;
}

static int check_caps(extractor *x, const char *entry, uint64_t size, sbx_error *err)
{
	if (size > x->o.max_file_bytes)
		return sbx_error_set(err, -EFBIG,
				     "'%s': %llu bytes, more than the %llu allowed per file; "
				     "extraction stopped",
				     entry, (unsigned long long)size,
				     (unsigned long long)x->o.max_file_bytes);
	if (size > x->o.max_total_bytes - x->st.bytes)
		return sbx_error_set(err, -EFBIG,
				     "'%s': would exceed the %llu bytes allowed in total; "
				     "extraction stopped",
				     entry, (unsigned long long)x->o.max_total_bytes);
	return 0;
}

/* Opens the destination file: regular files only, never through or onto a symlink. */
static int create_file(extractor *x, char *name, mode_t mode, sbx_error *err)
{
	_cleanup_close_ int parent = -1;
	const char *base;
	struct stat st;
	int fd;

	parent = open_parent(x, name, &base, err);
	if (parent < 0)
		return parent;
	fd = sbx_path_open_beneath(parent, base, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK,
				   safe_mode(mode), true, err);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return sbx_error_set(err, -EEXIST, "exists and is not a regular file");
	}
	if (ftruncate(fd, 0) < 0 || fchmod(fd, safe_mode(mode)) < 0) {
		int r = -errno;
		close(fd);
		return sbx_error_set(err, r, "%s", strerror(-r));
	}
	return fd;
}

static int extract_file(extractor *x, struct archive_entry *e, char *name, sbx_error *err,
			sbx_error *why)
{
	_cleanup_close_ int fd = -1;
	uint64_t size = (uint64_t)archive_entry_size(e);
	const void *block;
	size_t n;
	la_int64_t off;
	int r;

	r = check_caps(x, name, size, err);
	if (r < 0)
		return r;
	fd = create_file(x, name, archive_entry_perm(e), why);
	if (fd < 0)
		return 1; /* refused; why says */
	while ((r = archive_read_data_block(x->a, &block, &n, &off)) == ARCHIVE_OK) {
		if (off < 0 || (uint64_t)off + n > size)
			return sbx_error_set(err, -EPROTO, "'%s': data beyond the declared size",
					     name);
		r = sbx_pwrite_all(fd, block, n, off);
		if (r < 0)
			return sbx_error_set(err, r, "'%s': write failed: %s", name, strerror(-r));
	}
	if (r != ARCHIVE_EOF)
		return sbx_error_set(err, -EPROTO, "'%s': truncated or malformed data: %s", name,
				     archive_error_string(x->a));
	/* Sparse files end in a hole: give the file its declared size. */
	if (ftruncate(fd, (off_t)size) < 0)
		return sbx_error_set(err, -errno, "'%s': %s", name, strerror(errno));
	x->st.bytes += size;
	return 0;
}

/* Hardlinks become copies of a file already extracted inside the target. */
static int extract_hardlink(extractor *x, char *name, const char *link, sbx_error *err,
			    sbx_error *why)
{
	char src[MAX_NAME + 1];
	const char *reason = NULL;
	_cleanup_close_ int in = -1, out = -1;
	struct stat st;
	char buf[65536];
	off_t off = 0;
	int r;

	r = normalise(link, x->o.strip_components, src, sizeof(src), &reason);
	if (r <= 0)
		return sbx_error_set(why, -EPERM, "hardlink target '%s': %s", link,
				     r < 0 ? reason : "is the root"),
		       1;
	in = sbx_path_open_beneath(x->dirfd, src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0, true, why);
	if (in < 0)
		return sbx_error_prefix(why, in, "hardlink target '%s'", link), 1;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return sbx_error_set(why, -EPERM, "hardlink target '%s' is not a regular file",
				     link),
		       1;
	r = check_caps(x, name, (uint64_t)st.st_size, err);
	if (r < 0)
		return r;
	out = create_file(x, name, st.st_mode, why);
	if (out < 0)
		return 1;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sbx_error_set(err, -errno, "'%s': %s", name, strerror(errno));
		if (n == 0)
			break;
		r = sbx_pwrite_all(out, buf, (size_t)n, off);
		if (r < 0)
			return sbx_error_set(err, r, "'%s': %s", name, strerror(-r));
		off += n;
	}
	x->st.bytes += (uint64_t)off;
	return 0;
}

static int extract_symlink(extractor *x, char *name, const char *target, sbx_error *why)
{
	_cleanup_close_ int parent = -1;
	const char *base;
	char **links;

	if (x->o.no_symlinks)
		return sbx_error_set(why, -EPERM, "symbolic links are not allowed"), 1;
	if (!target || !*target)
		return sbx_error_set(why, -EPERM, "symlink with an empty target"), 1;
	if (target[0] == '/')
		return sbx_error_set(why, -EPERM, "symlink to an absolute path '%s'", target), 1;
	if (!sbx_docker__symlink_stays_inside(name, target))
		return sbx_error_set(why, -EPERM, "symlink target '%s' leaves the directory",
				     target),
		       1;
	parent = open_parent(x, name, &base, why);
	if (parent < 0)
		return 1;
	if (symlinkat(target, parent, base) < 0)
		return sbx_error_set(why, -errno, "cannot create symlink: %s", strerror(errno)), 1;
	links = realloc(x->links, (x->n_links + 1) * sizeof(*links));
	if (!links || !(links[x->n_links] = strdup(name))) {
		if (links)
			x->links = links;
		unlinkat(parent, base, 0);
		return -ENOMEM;
	}
	x->links = links;
	x->n_links++;
	return 0;
}

static int extract_dir(extractor *x, const char *name, sbx_error *why)
{
	int fd = sbx_path_mkdirs_beneath(x->dirfd, name, 0755, why);

	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

/* One entry: 0 extracted, 1 refused (why set), negative: stop with err. */
static int one_entry(extractor *x, struct archive_entry *e, sbx_error *err)
{
	char name[MAX_NAME + 1];
	const char *raw = archive_entry_pathname(e), *reason = NULL, *hardlink;
	sbx_error why = SBX_ERROR_INIT;
	mode_t type = archive_entry_filetype(e);
	int r;

	r = normalise(raw, x->o.strip_components, name, sizeof(name), &reason);
	if (r == 0)
		return 0;
	if (r < 0) {
		refuse(x, raw ? raw : "(unnamed)", reason);
		return 1;
	}
	hardlink = archive_entry_hardlink(e);
	if (under_refused(x, name, &reason))
		r = (sbx_error_set(&why, -EPERM, "inside the refused entry '%s'", reason), 1);
	else if (hardlink)
		r = extract_hardlink(x, name, hardlink, err, &why);
	else if (type == AE_IFREG)
		r = extract_file(x, e, name, err, &why);
	else if (type == AE_IFDIR)
		r = extract_dir(x, name, &why);
	else if (type == AE_IFLNK)
		r = extract_symlink(x, name, archive_entry_symlink(e), &why);
	else if (type == AE_IFCHR || type == AE_IFBLK)
		r = (sbx_error_set(&why, -EPERM, "device node"), 1);
	else if (type == AE_IFIFO)
		r = (sbx_error_set(&why, -EPERM, "fifo"), 1);
	else if (type == AE_IFSOCK)
		r = (sbx_error_set(&why, -EPERM, "socket"), 1);
	else
		r = (sbx_error_set(&why, -EPERM, "unknown entry type 0%o", (unsigned)type), 1);
	if (r == -ENOMEM)
		return sbx_error_set(err, r, "out of memory");
	if (r == 1) {
		refuse(x, name, sbx_error_message(&why));
		remember_refused(x, name);
	} else if (r == 0)
		x->st.extracted++;
	return r;
}

/*
 * Resolves a symlink's path beneath root the way the kernel would, one
 * component at a time, following links (40 at most): 0 when it stays inside
 * or dangles, -EXDEV when it leaves, -ELOOP, -ENAMETOOLONG. Done in user
 * space so it works where openat2 does not (valgrind, old kernels).
 */
static int resolve_inside(int root, const char *link)
{
	char cur[MAX_NAME + 1] = "", rest[2 * MAX_NAME + 2], next[sizeof(rest)],
			    target[MAX_NAME + 1];
	char *p = rest, *slash;
	int budget = 40;

	snprintf(rest, sizeof(rest), "%s", link);
	while (*p) {
		size_t n = strcspn(p, "/"), cl = strlen(cur);
		struct stat st;
		ssize_t tl;

		if (n == 0 || (n == 1 && p[0] == '.')) {
			p += n + (p[n] == '/');
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (!cur[0])
				return -EXDEV;
			slash = strrchr(cur, '/');
			*(slash ? slash : cur) = '\0';
			p += n + (p[n] == '/');
			continue;
		}
		if (cl + n + 2 > sizeof(cur))
			return -ENAMETOOLONG;
		if (cl)
			cur[cl++] = '/';
		memcpy(cur + cl, p, n);
		cur[cl + n] = '\0';
		p += n + (p[n] == '/');
		/* cur holds no symlink but the last component: fstatat cannot be fooled. */
		if (fstatat(root, cur, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
		if (!S_ISLNK(st.st_mode))
			continue;
		if (--budget < 0)
			return -ELOOP;
		tl = readlinkat(root, cur, target, sizeof(target) - 1);
		if (tl < 0)
			return -errno;
		target[tl] = '\0';
		if (target[0] == '/')
			return -EXDEV;
		slash = strrchr(cur, '/');
		*(slash ? slash : cur) = '\0';
		if ((size_t)snprintf(next, sizeof(next), "%s%s%s", target, *p ? "/" : "", p) >=
		    sizeof(next))
			return -ENAMETOOLONG;
		memcpy(rest, next, sizeof(rest));
		p = rest;
	}
	return 0;
}

/* The final state may hold no symlink that resolves outside (chains of links included). */
static void recheck_links(extractor *x)
{
	for (size_t i = 0; i < x->n_links; i++) {
		int r = resolve_inside(x->dirfd, x->links[i]);

		if (r == 0)
			continue;
		unlinkat(x->dirfd, x->links[i], 0);
		x->st.extracted--;
		refuse(x, x->links[i],
		       r == -ELOOP ? "symlink loop (removed)"
				   : "symlink resolves outside the directory (removed)");
	}
}

typedef struct stream_ctx {
	docker_tar_read_fn fn;
	void *payload;
	int error;
} stream_ctx;

static la_ssize_t stream_read(struct archive *a, void *payload, const void **block)
{
	stream_ctx *s = payload;
	ssize_t n = s->fn(s->payload, block);

	if (n < 0) {
		s->error = (int)n;
		archive_set_error(a, (int)-n, "%s", strerror((int)-n));
		return -1;
	}
	return (la_ssize_t)n;
}

static int run(extractor *x, sbx_error *err, const stream_ctx *sc)
{
	struct archive_entry *e;
	int r;

	for (;;) {
		r = archive_read_next_header(x->a, &e);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			if (sc && sc->error)
				return sc->error;
			return sbx_error_set(err, -EPROTO, "malformed tar after %llu entries: %s",
					     (unsigned long long)x->st.entries,
					     archive_error_string(x->a));
		}
		if (++x->st.entries > x->o.max_entries)
			return sbx_error_set(err, -E2BIG,
					     "more than %llu entries; extraction stopped",
					     (unsigned long long)x->o.max_entries);
		r = one_entry(x, e, err);
		if (r < 0) {
			if (sc && sc->error)
				return sc->error;
			return r;
		}
	}
	return 0;
}

int sbx_docker__tar_extract_stream(docker_tar_read_fn read_fn, void *payload, int dirfd,
				   const sbx_docker_extract_opts *opts,
				   sbx_docker_extract_stats *stats, sbx_error *err)
{
	static const sbx_docker_extract_opts defaults = SBX_DOCKER_EXTRACT_OPTS_INIT;
	extractor x = {.dirfd = dirfd};
	stream_ctx sc = {.fn = read_fn, .payload = payload};
	int r;

	x.o = opts ? *opts : defaults;
	if (!x.o.max_file_bytes)
		x.o.max_file_bytes = DEFAULT_MAX_FILE;
	if (!x.o.max_total_bytes)
		x.o.max_total_bytes = DEFAULT_MAX_TOTAL;
	if (!x.o.max_entries)
		x.o.max_entries = DEFAULT_MAX_ENTRIES;
	x.a = archive_read_new();
	if (!x.a)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	archive_read_support_format_tar(x.a);
	if (archive_read_open(x.a, &sc, NULL, stream_read, NULL) != ARCHIVE_OK) {
		r = sc.error ? sc.error
			     : sbx_error_set(err, -EPROTO, "not a tar: %s",
					     archive_error_string(x.a));
	} else {
		r = run(&x, err, &sc);
	}
	recheck_links(&x);
	archive_read_free(x.a);
	if (r == 0 && x.st.refused)
		r = sbx_error_set(err, -EPERM, "%llu of %llu entries refused, first %s",
				  (unsigned long long)x.st.refused,
				  (unsigned long long)x.st.entries,
				  x.first_refused ? x.first_refused : "(out of memory)");
	if (stats)
		*stats = x.st;
	free(x.first_refused);
	sbx_strv_free_n(x.links, x.n_links);
	sbx_strv_free_n(x.refused, x.n_refused);
	return r;
}

typedef struct mem_src {
	const void *data;
	size_t len;
	bool done;
} mem_src;

static ssize_t mem_read(void *payload, const void **block)
{
	mem_src *m = payload;

	if (m->done)
		return 0;
	m->done = true;
	*block = m->data;
	return (ssize_t)m->len;
}

int sbx_docker_tar_extract(const void *tar, size_t len, int dirfd,
			   const sbx_docker_extract_opts *opts, sbx_docker_extract_stats *stats,
			   sbx_error *err)
{
	mem_src m = {.data = tar, .len = len};

	return sbx_docker__tar_extract_stream(mem_read, &m, dirfd, opts, stats, err);
}
