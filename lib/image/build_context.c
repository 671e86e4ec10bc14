/* SPDX-License-Identifier: MIT */
/* The build context: the files images/context.list names, read once, hashed and tarred. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "image-internal.h"
#include "sbx/path.h"

#define CONTEXT_LIST_MAX (64u << 10)

typedef struct entry {
	char *path;
	char type; /* 'f' file, 'd' directory, 'l' symlink */
	bool exec;
	char *data; /* file content or link target (NUL-terminated) */
	size_t len;
} entry;

struct sbx_image_context {
	entry *v;
	size_t n, cap;
	size_t total; /* bytes of file content */
};

void sbx_image_context_free(sbx_image_context *ctx)
{
	if (!ctx)
		return;
	for (size_t i = 0; i < ctx->n; i++) {
		free(ctx->v[i].path);
		free(ctx->v[i].data);
	}
	free(ctx->v);
	free(ctx);
}

SBX_DEFINE_CLEANUP(sbx_image_context, sbx_image_context_free)

size_t sbx_image_context_count(const sbx_image_context *ctx)
{
	return ctx->n;
}

const char *sbx_image_context_path(const sbx_image_context *ctx, size_t i)
{
	return i < ctx->n ? ctx->v[i].path : NULL;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const entry *)a)->path, ((const entry *)b)->path);
}

static const entry *find_entry(const sbx_image_context *ctx, const char *path)
{
	entry key = {.path = (char *)path};

	return ctx->n ? bsearch(&key, ctx->v, ctx->n, sizeof(entry), cmp_entry) : NULL;
}

const void *sbx_image_context_file(const sbx_image_context *ctx, const char *path, size_t *len)
{
	const entry *e = find_entry(ctx, path);

	if (!e || e->type != 'f')
		return NULL;
	if (len)
		*len = e->len;
	return e->data;
}

/* Takes ownership of path and data, also on failure. */
static int add_entry(sbx_image_context *ctx, char *path, char type, bool exec, char *data,
		     size_t len, sbx_error *err)
{
	if (ctx->n >= SBX_IMAGE_CONTEXT_MAX_FILES) {
		free(path);
		free(data);
		return sbx_error_set(err, -E2BIG, "build context: more than %d entries",
				     SBX_IMAGE_CONTEXT_MAX_FILES);
	}
	if (ctx->total + len > SBX_IMAGE_CONTEXT_MAX_BYTES) {
		sbx_error_set(err, -EFBIG, "build context: '%s' takes it past %u bytes", path,
			      SBX_IMAGE_CONTEXT_MAX_BYTES);
		free(path);
		free(data);
		return -EFBIG;
	}
	if (ctx->n == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 256;
		entry *v = realloc(ctx->v, cap * sizeof(*v));

		if (!v) {
			free(path);
			free(data);
			return sbx_error_set(err, -ENOMEM, "build context: out of memory");
		}
		ctx->v = v;
		ctx->cap = cap;
	}
	ctx->v[ctx->n++] = (entry){path, type, exec, data, len};
	ctx->total += len;
	return 0;
}

/* Reads at most max bytes of the file at at/name (no symlinks followed). */
int sbx_image__read_file_at(int at, const char *name, const char *display, size_t max, char **out,
			    size_t *len_out, sbx_error *err)
{
	_cleanup_close_ int fd = openat(at, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	sbx_buf b = SBX_BUF_INIT(max);
	char chunk[65536];
	ssize_t n;
	int r;

	if (fd < 0)
		return sbx_error_set(err, -errno, "'%s': %s", display, strerror(errno));
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			sbx_buf_free(&b);
			return sbx_error_set(err, r, "'%s': read failed: %s", display,
					     strerror(-r));
		}
		r = sbx_buf_append(&b, chunk, (size_t)n);
		if (r < 0)
			return sbx_error_set(err, r == -ENOBUFS ? -EFBIG : r,
					     "'%s': larger than %zu bytes", display, max);
	}
	*out = sbx_buf_steal(&b, len_out);
	return *out ? 0 : sbx_error_set(err, -ENOMEM, "'%s': out of memory", display);
}

static bool skipped_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] == '.' || strcmp(name, "__pycache__") == 0 ||
	       (n > 2 && strcmp(name + n - 2, ".o") == 0) ||
	       (n > 4 && strcmp(name + n - 4, ".pyc") == 0) ||
	       (n > 3 && strcmp(name + n - 3, ".md") == 0) || name[n - 1] == '~';
}

static int add_path(sbx_image_context *ctx, int at, const char *name, const char *path, int depth,
		    sbx_error *err);

static int add_dir(sbx_image_context *ctx, int at, const char *name, const char *path, int depth,
		   sbx_error *err)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *dir;
	int r = 0;

	if (depth > SBX_IMAGE_CONTEXT_MAX_DEPTH)
		return sbx_error_set(err, -ELOOP, "build context: '%s' is nested too deep", path);
	if (fd < 0)
		return sbx_error_set(err, -errno, "build context: '%s': %s", path, strerror(errno));
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return sbx_error_set(err, -errno, "build context: '%s': %s", path, strerror(errno));
	}
	while (r >= 0 && (de = readdir(dir))) {
		_cleanup_free_ char *child = NULL;

		if (skipped_name(de->d_name))
			continue;
		if (asprintf(&child, "%s/%s", path, de->d_name) < 0) {
			child = NULL;
			r = sbx_error_set(err, -ENOMEM, "build context: out of memory");
			break;
		}
		r = add_path(ctx, dirfd(dir), de->d_name, child, depth + 1, err);
	}
	closedir(dir);
	return r;
}

/* Adds the entry at/name, known in the context as path. */
static int add_path(sbx_image_context *ctx, int at, const char *name, const char *path, int depth,
		    sbx_error *err)
{
	struct stat s;
	char *copy, *data = NULL;
	size_t len = 0;
	int r;

	if (fstatat(at, name, &s, AT_SYMLINK_NOFOLLOW) < 0)
		return sbx_error_set(err, -errno, "build context: '%s': %s", path, strerror(errno));
	if (S_ISDIR(s.st_mode)) {
		copy = strdup(path);
		r = copy ? add_entry(ctx, copy, 'd', false, NULL, 0, err)
			 : sbx_error_set(err, -ENOMEM, "build context: out of memory");
		return r < 0 ? r : add_dir(ctx, at, name, path, depth, err);
	}
	if (S_ISREG(s.st_mode)) {
		r = sbx_image__read_file_at(at, name, path, SBX_IMAGE_CONTEXT_MAX_FILE_BYTES, &data,
					    &len, err);
		if (r < 0)
			return sbx_error_prefix(err, r, "build context");
	} else if (S_ISLNK(s.st_mode)) {
		data = calloc(1, PATH_MAX);
		if (!data)
			return sbx_error_set(err, -ENOMEM, "build context: out of memory");
		ssize_t n = readlinkat(at, name, data, PATH_MAX - 1);

		if (n < 0) {
			r = -errno;
			free(data);
			return sbx_error_set(err, r, "build context: '%s': %s", path, strerror(-r));
		}
		len = (size_t)n;
	} else {
		sbx_log_debug("build context: skipping '%s' (not a file, directory or symlink)",
			      path);
		return 0;
	}
	copy = strdup(path);
	if (!copy) {
		free(data);
		return sbx_error_set(err, -ENOMEM, "build context: out of memory");
	}
	return add_entry(ctx, copy, S_ISLNK(s.st_mode) ? 'l' : 'f', (s.st_mode & 0111) != 0, data,
			 len, err);
}

/* Strips a trailing slash and checks the path is a plain relative one. */
static int check_listed(char *line, sbx_error *err)
{
	size_t n = strlen(line);

	while (n > 1 && line[n - 1] == '/')
		line[--n] = '\0';
	if (sbx_path_check_relative(line, err) < 0 || strcmp(line, ".") == 0)
		return sbx_error_replace(err, -EINVAL,
					 "'%s': '%s' is not a relative path inside the tree",
					 SBX_IMAGE_CONTEXT_LIST, line);
	return 0;
}

int sbx_image_context_collect(sbx_image_context **out, const char *source_dir, sbx_error *err)
{
	_cleanup_(sbx_image_context_freep) sbx_image_context *ctx = calloc(1, sizeof(*ctx));
	_cleanup_close_ int root = open(source_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *list = NULL;
	size_t list_len;
	char *save = NULL;
	int r;

	if (!ctx)
		return sbx_error_set(err, -ENOMEM, "build context: out of memory");
	if (root < 0)
		return sbx_error_set(err, -errno, "source tree '%s': %s", source_dir,
				     strerror(errno));
	r = sbx_image__read_file_at(root, SBX_IMAGE_CONTEXT_LIST, SBX_IMAGE_CONTEXT_LIST,
				    CONTEXT_LIST_MAX, &list, &list_len, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "source tree '%s'", source_dir);
	for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');

		if (hash)
			*hash = '\0';
		line += strspn(line, " \t\r");
		line[strcspn(line, " \t\r")] = '\0';
		if (!*line)
			continue;
		r = check_listed(line, err);
		if (r < 0)
			return r;
		r = add_path(ctx, root, line, line, 0, err);
		if (r == -ENOENT)
			return sbx_error_replace(err, r,
						 "source tree '%s': '%s' (named in %s) is missing",
						 source_dir, line, SBX_IMAGE_CONTEXT_LIST);
		if (r < 0)
			return r;
	}
	if (ctx->n)
		qsort(ctx->v, ctx->n, sizeof(entry), cmp_entry);
	/* A path listed twice, or inside a listed directory, is kept once. */
	size_t w = 0;

	for (size_t i = 0; i < ctx->n; i++) {
		if (w > 0 && strcmp(ctx->v[w - 1].path, ctx->v[i].path) == 0) {
			ctx->total -= ctx->v[i].len;
			free(ctx->v[i].path);
			free(ctx->v[i].data);
			continue;
		}
		ctx->v[w++] = ctx->v[i];
	}
	ctx->n = w;
	if (!find_entry(ctx, SBX_IMAGE_DOCKERFILE))
		return sbx_error_set(err, -ENOENT, "source tree '%s': the context holds no '%s'",
				     source_dir, SBX_IMAGE_DOCKERFILE);
	*out = TAKE_PTR(ctx);
	return 0;
}

void sbx_image__hash_hex(const unsigned char digest[32], char out[SBX_IMAGE_HASH_LEN])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[64] = '\0';
}

void sbx_image__sha256(const void *data, size_t len, char out[SBX_IMAGE_HASH_LEN])
{
	unsigned char digest[32];
	unsigned int dlen = 0;

	EVP_Digest(data, len, digest, &dlen, EVP_sha256(), NULL);
	sbx_image__hash_hex(digest, out);
}

void sbx_image_context_hash(const sbx_image_context *ctx, char out[SBX_IMAGE_HASH_LEN])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char digest[32];
	unsigned int dlen = 0;

	/* A failed allocation leaves an all-zero hash: it matches nothing, so it only rebuilds. */
	memset(digest, 0, sizeof(digest));
	if (md && EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		static const char version[] = "sandboxctl-context/1\n";

		EVP_DigestUpdate(md, version, sizeof(version) - 1);
		for (size_t i = 0; i < ctx->n; i++) {
			const entry *e = &ctx->v[i];
			char head[64];
			int n;

			/* Length-prefixed fields, so no two different trees hash the same bytes. */
			EVP_DigestUpdate(md, e->path, strlen(e->path) + 1);
			n = snprintf(head, sizeof(head), "%c%c%zu", e->type, e->exec ? 'x' : '-',
				     e->len);
			EVP_DigestUpdate(md, head, (size_t)n + 1);
			if (e->len)
				EVP_DigestUpdate(md, e->data, e->len);
		}
		EVP_DigestFinal_ex(md, digest, &dlen);
	}
	EVP_MD_CTX_free(md);
	sbx_image__hash_hex(digest, out);
}

int sbx_image_context_tar(const sbx_image_context *ctx, sbx_docker_tar **tar_out, const void **data,
			  size_t *len, sbx_error *err)
{
	sbx_docker_tar *t = NULL;
	int r;

	r = sbx_docker_tar_new(&t, ctx->total + ctx->n * 1024 + (1u << 20), err);
	if (r < 0)
		return r;
	/* A fixed mtime keeps the tar, and the builder's cache keys, the same for the same tree. */
	sbx_docker_tar_set_mtime(t, 1);
	for (size_t i = 0; r >= 0 && i < ctx->n; i++) {
		const entry *e = &ctx->v[i];

		if (e->type == 'd')
			r = sbx_docker_tar_add_dir(t, e->path, 0755, 0, 0, err);
		else if (e->type == 'l')
			r = sbx_docker_tar_add_symlink(t, e->path, e->data, err);
		else
			r = sbx_docker_tar_add_file(t, e->path, e->data, e->len,
						    e->exec ? 0755 : 0644, 0, 0, err);
	}
	if (r >= 0)
		r = sbx_docker_tar_finish(t, data, len, err);
	if (r < 0) {
		sbx_docker_tar_free(t);
		return sbx_error_prefix(err, r, "build context");
	}
	*tar_out = t;
	return 0;
}
