/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/file.h"
#include "task_session.h"
#include "wbcache.h"
#include "workspace.h"

#define CACHE_SLOTS   4
#define MAX_FILE_SIZE (256u << 20)

typedef struct wb_entry {
	char *rel;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	sbx_book *book;
	unsigned long long used;
} wb_entry;

struct wb_cache {
	pthread_mutex_t lock; /* serialises the spreadsheet tools */
	wb_entry slots[CACHE_SLOTS];
	unsigned long long ticks;
};

static void entry_drop(wb_entry *e)
{
	sbx_book_free(e->book);
	free(e->rel);
	memset(e, 0, sizeof(*e));
}

wb_cache *wb_cache_new(void)
{
	wb_cache *c = calloc(1, sizeof(*c));

	if (c)
		pthread_mutex_init(&c->lock, NULL);
	return c;
}

void wb_cache_free(wb_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		entry_drop(&c->slots[i]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void wb_cache_clear(wb_cache *c)
{
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		entry_drop(&c->slots[i]);
	pthread_mutex_unlock(&c->lock);
}

static bool same_file(const wb_entry *e, const struct stat *st)
{
	return e->book && e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static void entry_key(wb_entry *e, const struct stat *st)
{
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->size = st->st_size;
	e->mtime = st->st_mtim;
}

/* Exactly size bytes, or -EIO when the file is shorter than fstat said. */
static int read_all(int fd, size_t size, char **out)
{
	char *data;
	size_t got;
	int r;

	r = sbx_file_read_fd(fd, size, &data, &got);
	if (r < 0)
		return r;
	if (got != size) {
		free(data);
		return -EIO;
	}
	*out = data;
	return 0;
}

static wb_entry *find_or_evict(wb_cache *c, const char *rel, bool *hit)
{
	wb_entry *cache = c->slots, *victim = &cache[0];

	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (cache[i].rel && strcmp(cache[i].rel, rel) == 0) {
			*hit = true;
			return &cache[i];
		}
	/* An empty slot, else the least recently used one. */
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		if (!cache[i].rel) {
			victim = &cache[i];
			break;
		}
		if (cache[i].used < victim->used)
			victim = &cache[i];
	}
	*hit = false;
	entry_drop(victim);
	return victim;
}

int wb_open(tool_context *ctx, const cJSON *args, wb_handle *h, tool_result *out)
{
	const char *arg = sbx_json_get_string(args, "file_path", "");
	sbx_error err = SBX_ERROR_INIT;
	_cleanup_free_ char *data = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	const char *rel;
	wb_entry *e;
	bool hit;
	int r;

	*h = (wb_handle){.arg = arg, .cache = ctx->srv->wbcache};
	rel = workspace_relative(ctx, arg, out);
	if (!rel)
		return -EINVAL;
	h->rel = strdup(rel);
	if (!h->rel)
		return -ENOMEM;
	/*
	 * Lock before the open and stat: a writer renames a new file in; an fd
	 * opened before that would reload the old content over its write.
	 */
	pthread_mutex_lock(&h->cache->lock);
	h->locked = true;
	fd = workspace_open_regular(ctx, arg, &st, out);
	if (fd < 0) {
		wb_close(h);
		return fd;
	}
	e = find_or_evict(h->cache, rel, &hit);
	if (hit && !same_file(e, &st)) {
		entry_drop(e);
		hit = false;
	}
	if (!hit) {
		if ((uint64_t)st.st_size > MAX_FILE_SIZE) {
			tool_fail(out, TOOL_E_ARGUMENT, "File too large: %s (%lld bytes)", arg,
				  (long long)st.st_size);
			wb_close(h);
			return -EFBIG;
		}
		r = read_all(fd, (size_t)st.st_size, &data);
		if (r < 0) {
			tool_fail(out, TOOL_E_ARGUMENT, "Cannot read %s: %s", arg, strerror(-r));
			wb_close(h);
			return r;
		}
		r = sbx_book_open_memory(data, (size_t)st.st_size, rel, NULL, &e->book, &err);
		if (r < 0) {
			tool_fail(out, r == -ENOMEM ? TOOL_E_INTERNAL : TOOL_E_ARGUMENT,
				  "Cannot open %s as a spreadsheet: %s", arg,
				  sbx_error_message(&err));
			e->book = NULL;
			wb_close(h);
			return r;
		}
		e->rel = strdup(rel);
		if (!e->rel) {
			entry_drop(e);
			wb_close(h);
			return -ENOMEM;
		}
		entry_key(e, &st);
	}
	e->used = ++h->cache->ticks;
	h->entry = e;
	h->book = e->book;
	return 0;
}

sbx_sheet *wb_sheet(wb_handle *h, const cJSON *args, const char *key, tool_result *out)
{
	const char *name = sbx_json_get_string(args, key ? key : "sheet_name", NULL);
	sbx_sheet *s;

	if (!name) {
		s = sbx_book_sheet(h->book, 0);
		if (!s)
			tool_fail(out, TOOL_E_ARGUMENT, "%s has no sheets", h->arg);
		return s;
	}
	s = sbx_book_find(h->book, name);
	if (!s)
		tool_fail(out, TOOL_E_ARGUMENT, "Sheet '%s' not found", name);
	return s;
}

int wb_save(tool_context *ctx, wb_handle *h, tool_result *out)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_buf data = SBX_BUF_INIT(1u << 30);
	struct stat st;
	int r;

	r = sbx_book_save_memory(h->book, SBX_FORMAT_AUTO, &data, &err);
	if (r >= 0)
		r = workspace_write_atomic(ctx->workspace_fd, h->rel, data.data, data.len, &st,
					   &err);
	sbx_buf_free(&data);
	if (r < 0) {
		/* The cached book now differs from the file: forget it. */
		entry_drop(h->entry);
		h->entry = NULL;
		h->book = NULL;
		return tool_fail(out, r == -ENOMEM ? TOOL_E_INTERNAL : TOOL_E_ARGUMENT,
				 "Cannot save %s: %s", h->arg, sbx_error_message(&err)),
		       r;
	}
	entry_key(h->entry, &st);
	task_session_note_file(ctx->task, h->rel);
	return 0;
}

void wb_close(wb_handle *h)
{
	if (h->locked)
		pthread_mutex_unlock(&h->cache->lock);
	h->locked = false;
	free(h->rel);
	h->rel = NULL;
	h->book = NULL;
}

void wb_discard(wb_handle *h)
{
	if (h->entry)
		entry_drop(h->entry);
	h->entry = NULL;
	h->book = NULL;
}

sbx_sheet *wb_open_sheet(tool_context *ctx, const cJSON *args, wb_handle *h, tool_result *out)
{
	sbx_sheet *s;

	if (wb_open(ctx, args, h, out) < 0)
		return NULL;
	s = wb_sheet(h, args, NULL, out);
	if (!s)
		wb_close(h);
	return s;
}

int wb_fail(wb_handle *h, tool_result *out, bool discard, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	/* Formatted first: the arguments may point into the book. */
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (discard)
		wb_discard(h);
	wb_close(h);
	return tool_fail(out, TOOL_E_ARGUMENT, "%s", msg ? msg : "out of memory");
}

int wb_save_answer(tool_context *ctx, wb_handle *h, tool_result *out, cJSON *o, bool changed)
{
	if (!o) {
		wb_discard(h);
		wb_close(h);
		return -ENOMEM;
	}
	if (changed && wb_save(ctx, h, out) < 0) {
		cJSON_Delete(o);
		wb_close(h);
		return 0;
	}
	out->structured = o;
	wb_close(h);
	return 0;
}

int wb_replace_file(tool_context *ctx, const char *rel, const void *data, size_t len,
		    const struct stat *expected, sbx_error *err)
{
	sbx_buf b = {(char *)data, len, len, len};
	wb_cache *c = ctx->srv->wbcache;
	struct stat st;
	int r = 0;

	pthread_mutex_lock(&c->lock);
	if (expected) {
		int fd = sbx_path_open_beneath(ctx->workspace_fd, rel, O_RDONLY | O_NONBLOCK, 0,
					       false, err);

		if (fd >= 0 && fstat(fd, &st) == 0) {
			if (st.st_dev != expected->st_dev || st.st_ino != expected->st_ino ||
			    st.st_size != expected->st_size ||
			    st.st_mtim.tv_sec != expected->st_mtim.tv_sec ||
			    st.st_mtim.tv_nsec != expected->st_mtim.tv_nsec)
				r = sbx_error_set(err, -EAGAIN,
						  "the file changed meanwhile; try again");
		} else if (fd >= 0) {
			r = sbx_error_set(err, -errno, "%s", strerror(errno));
		} else {
			r = fd;
		}
		if (fd >= 0)
			close(fd);
	}
	if (r == 0)
		r = workspace_write_atomic(ctx->workspace_fd, rel, b.data, b.len, &st, err);
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		if (c->slots[i].rel && strcmp(c->slots[i].rel, rel) == 0)
			entry_drop(&c->slots[i]);
	pthread_mutex_unlock(&c->lock);
	if (r == 0)
		task_session_note_file(ctx->task, rel);
	return r;
}
