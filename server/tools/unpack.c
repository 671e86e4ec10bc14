/* SPDX-License-Identifier: MIT */
/*
 * The task's files from the host, as a tar over an open stream
 * (PUT /control/files): no docker exec, no container operation. The tar is
 * untrusted input to a process that owns the workspace, so the reader is
 * narrow on purpose: ustar headers (checksum checked), pax 'x' records for a
 * long path or size, regular files and directories only. Names are checked
 * lexically (relative, no `..`) and then resolved by the kernel beneath the
 * workspace with every symlink refused (sbx/path.h), so nothing lands
 * outside, whatever the lexical check missed. Files are written atomically
 * (workspace_write_atomic) in the server's uid and umask; a tar's owners and
 * modes are not applied. Any refused entry stops the unpacking with one
 * precise error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/path.h"
#include "unpack.h"
#include "workspace.h"

#define BLOCK	    512
#define PAX_MAX	    (64 * 1024)
#define NAME_MAX_   4096
#define ENTRIES_MAX 4096

typedef struct pending {
	char *path; /* from a pax record, for the next entry */
	long long size;
} pending;

static void pending_clear(pending *p)
{
	free(p->path);
	p->path = NULL;
	p->size = -1;
}

/* A ustar numeric field: octal digits, then spaces or NULs. Base-256 is refused. */
static long long octal(const unsigned char *f, size_t n)
{
	long long v = 0;
	size_t i = 0;

	while (i < n && f[i] == ' ')
		i++;
	if (i == n || f[i] < '0' || f[i] > '7')
		return -1;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v > (1LL << 40))
			return -1;
		v = v * 8 + (f[i] - '0');
	}
	for (; i < n; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return -1;
	return v;
}

static bool checksum_ok(const unsigned char *h)
{
	long long want = octal(h + 148, 8);
	long long sum = 0;

	for (int i = 0; i < BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return want == sum;
}

static bool zero_block(const unsigned char *h)
{
	for (int i = 0; i < BLOCK; i++)
		if (h[i])
			return false;
	return true;
}

/* A decimal of at most 18 digits from d[0..n), stopping at the first non-digit. */
static long long decimal(const char *d, size_t n, size_t *used)
{
	long long v = 0;
	size_t i = 0;

	for (; i < n && i < 18 && d[i] >= '0' && d[i] <= '9'; i++)
		v = v * 10 + (d[i] - '0');
	*used = i;
	return i ? v : -1;
}

/* Parses pax records ("LEN key=value\n"): path and size; other keys are ignored. */
static int parse_pax(const char *d, size_t n, pending *p, sbx_error *err)
{
	while (n > 0) {
		size_t used, vlen, klen;
		long long len = decimal(d, n, &used);
		const char *kv, *eq, *v;

		if (len < 0 || used >= n || d[used] != ' ' || len <= (long long)used + 1 ||
		    (unsigned long long)len > n || d[len - 1] != '\n')
			return sbx_error_set(err, -EINVAL, "a malformed pax record");
		kv = d + used + 1;
		eq = memchr(kv, '=', (size_t)(d + len - 1 - kv));
		if (!eq)
			return sbx_error_set(err, -EINVAL, "a pax record without '='");
		klen = (size_t)(eq - kv);
		v = eq + 1;
		vlen = (size_t)(d + len - 1 - v);
		if (klen == 4 && memcmp(kv, "path", 4) == 0) {
			if (vlen == 0 || vlen > NAME_MAX_ || memchr(v, '\0', vlen))
				return sbx_error_set(err, -EINVAL, "a pax path that is not a name");
			free(p->path);
			p->path = strndup(v, vlen);
			if (!p->path)
				return sbx_error_set(err, -ENOMEM, "out of memory");
		} else if (klen == 4 && memcmp(kv, "size", 4) == 0) {
			p->size = decimal(v, vlen, &used);
			if (p->size < 0 || used != vlen)
				return sbx_error_set(err, -EINVAL,
						     "a pax size that is not a number");
		}
		d += len;
		n -= (size_t)len;
	}
	return 0;
}

/* The entry's name: the pax path, else ustar's prefix "/" name; "./" dropped. */
static int entry_name(const unsigned char *h, pending *p, char out[NAME_MAX_ + 1], sbx_error *err)
{
	const char *name = (const char *)h, *prefix = (const char *)h + 345;
	size_t nl = strnlen(name, 100), pl = strnlen(prefix, 155);
	const char *s;

	if (p->path) {
		snprintf(out, NAME_MAX_ + 1, "%s", p->path);
	} else if (memcmp(h + 257, "ustar", 5) == 0 && pl > 0) {
		snprintf(out, NAME_MAX_ + 1, "%.*s/%.*s", (int)pl, prefix, (int)nl, name);
	} else {
		snprintf(out, NAME_MAX_ + 1, "%.*s", (int)nl, name);
	}
	for (s = out; s[0] == '.' && s[1] == '/';)
		for (s += 2; *s == '/'; s++)
			;
	memmove(out, s, strlen(s) + 1);
	/* A directory entry ends in '/'. */
	for (size_t l = strlen(out); l > 1 && out[l - 1] == '/'; l--)
		out[l - 1] = '\0';
	return sbx_path_check_relative(out, err);
}

/* A regular file: its directories made beneath the workspace, then the bytes, atomically. */
static int put_file(int ws_fd, const char *name, const void *data, size_t len, sbx_error *err)
{
	const char *slash = strrchr(name, '/');

	if (slash) {
		_cleanup_free_ char *dir = strndup(name, (size_t)(slash - name));
		int d;

		if (!dir)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		d = sbx_path_mkdirs_beneath(ws_fd, dir, 02775, err);
		if (d < 0)
			return d;
		close(d);
	}
	return workspace_write_atomic(ws_fd, name, data, len, NULL, err);
}

static int one_entry(int ws_fd, const unsigned char *h, const unsigned char *data, long long size,
		     pending *p, unpack_stats *stats, sbx_error *err)
{
	char name[NAME_MAX_ + 1];
	char type = (char)h[156];
	int r;

	if (type == 'x')
		return parse_pax((const char *)data, (size_t)size, p, err);
	if (type == 'g')
		return 0; /* global pax records: nothing we apply */
	r = entry_name(h, p, name, err);
	if (r < 0 && type == '5' && name[0] == '\0')
		return 0; /* "./": the workspace itself */
	if (r < 0)
		return r;
	if (type == '5') {
		int d = sbx_path_mkdirs_beneath(ws_fd, name, 02775, err);

		if (d < 0)
			return d;
		close(d);
		return 0;
	}
	if (type != '0' && type != '\0')
		return sbx_error_set(err, -EPERM,
				     "'%s': only regular files and directories are accepted "
				     "(type '%c')",
				     name, type >= 0x20 && type < 0x7f ? type : '?');
	r = put_file(ws_fd, name, data, (size_t)size, err);
	if (r < 0)
		return sbx_error_prefix(err, r, "'%s'", name);
	stats->files++;
	stats->bytes += (unsigned long long)size;
	return 0;
}

int workspace_unpack(int ws_fd, const void *tar, size_t len, unpack_stats *stats, sbx_error *err)
{
	const unsigned char *t = tar;
	_cleanup_(pending_clear) pending p = {NULL, -1};
	size_t off = 0, entries = 0;

	*stats = (unpack_stats){0};
	while (off + BLOCK <= len) {
		const unsigned char *h = t + off;
		long long size;
		int r;

		if (zero_block(h))
			return 0; /* the end-of-archive marker */
		if (memcmp(h + 257, "ustar", 5) != 0 || !checksum_ok(h))
			return sbx_error_set(err, -EINVAL, "not a tar (bad header at byte %zu)",
					     off);
		if (++entries > ENTRIES_MAX)
			return sbx_error_set(err, -E2BIG, "more than %d entries", ENTRIES_MAX);
		size = octal(h + 124, 12);
		if (h[156] != 'x' && h[156] != 'g' && p.size >= 0)
			size = p.size;
		if (size < 0)
			return sbx_error_set(err, -EINVAL, "a size that is not octal at byte %zu",
					     off);
		off += BLOCK;
		if ((unsigned long long)size > len - off)
			return sbx_error_set(err, -EINVAL,
					     "truncated: an entry of %lld bytes at byte %zu", size,
					     off - BLOCK);
		if ((h[156] == 'x' || h[156] == 'g') && size > PAX_MAX)
			return sbx_error_set(err, -E2BIG, "a pax header over %d bytes", PAX_MAX);
		r = one_entry(ws_fd, h, t + off, size, &p, stats, err);
		if (r < 0)
			return r;
		if (h[156] != 'x')
			pending_clear(&p);
		off += ((size_t)size + BLOCK - 1) / BLOCK * BLOCK;
	}
	/* Without the marker the sender may have been cut short: nothing says it finished. */
	return sbx_error_set(err, -EINVAL, "truncated: no end-of-archive marker");
}
