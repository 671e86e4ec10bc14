/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "sessions.h"
#include "sbx/clock.h"

#define MAX_SESSIONS 1024

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static http_session *table;
static size_t n_sessions;

static int new_id(char *out, size_t size)
{
	unsigned char raw[16];
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(raw) && 2 * i + 2 < size; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

static void destroy(http_session *s)
{
	if (s->stream) {
		sse_stream_close(s->stream);
		sse_stream_unref(s->stream);
	}
	free(s);
}

/* Unlinks s from the table (locked); the table's reference is dropped by the caller. */
static void unlink_locked(http_session *s)
{
	for (http_session **p = &table; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			n_sessions--;
			s->ended = true;
			return;
		}
}

static void release_locked(http_session *s, bool *destroy_out)
{
	*destroy_out = --s->refs == 0;
}

static http_session *evict_locked(void)
{
	http_session *oldest = NULL;

	for (http_session *s = table; s; s = s->next)
		if (!s->legacy && (!oldest || s->last_used < oldest->last_used))
			oldest = s;
	if (oldest)
		unlink_locked(oldest);
	return oldest;
}

/* Drops legacy sessions whose SSE client went away (each sweep frees at most a few). */
static void sweep_locked(void)
{
	for (int round = 0; round < 8; round++) {
		http_session *dead = NULL;
		bool gone = false;

		for (http_session *s = table; s && !dead; s = s->next)
			if (s->legacy && sse_stream_gone(s->stream))
				dead = s;
		if (!dead)
			return;
		unlink_locked(dead);
		release_locked(dead, &gone);
		if (gone)
			destroy(dead);
	}
}

http_session *http_session_create(bool legacy)
{
	http_session *s = calloc(1, sizeof(*s)), *evicted = NULL;
	bool gone = false;

	if (!s)
		return NULL;
	mcp_session_init(&s->mcp);
	if (new_id(s->mcp.id, sizeof(s->mcp.id)) < 0) {
		free(s);
		return NULL;
	}
	s->legacy = legacy;
	if (legacy && !(s->stream = sse_stream_new())) {
		free(s);
		return NULL;
	}
	s->refs = 2; /* the table and the caller */
	s->last_used = sbx_now_ms();
	pthread_mutex_lock(&table_lock);
	sweep_locked();
	if (n_sessions >= MAX_SESSIONS) {
		evicted = evict_locked();
		if (evicted)
			release_locked(evicted, &gone);
		if (!evicted) {
			pthread_mutex_unlock(&table_lock);
			destroy(s);
			return NULL;
		}
	}
	s->next = table;
	table = s;
	n_sessions++;
	pthread_mutex_unlock(&table_lock);
	if (gone)
		destroy(evicted);
	return s;
}

http_session *http_session_find(const char *id)
{
	http_session *found = NULL;

	if (!id)
		return NULL;
	pthread_mutex_lock(&table_lock);
	for (http_session *s = table; s; s = s->next)
		if (strcmp(s->mcp.id, id) == 0) {
			found = s;
			s->refs++;
			s->last_used = sbx_now_ms();
			break;
		}
	pthread_mutex_unlock(&table_lock);
	return found;
}

void http_session_unref(http_session *s)
{
	bool gone;

	if (!s)
		return;
	pthread_mutex_lock(&table_lock);
	release_locked(s, &gone);
	pthread_mutex_unlock(&table_lock);
	if (gone)
		destroy(s);
}

int http_session_end(const char *id)
{
	http_session *s = NULL;
	bool gone = false;

	pthread_mutex_lock(&table_lock);
	for (http_session *it = table; it; it = it->next)
		if (strcmp(it->mcp.id, id) == 0) {
			s = it;
			break;
		}
	if (s) {
		unlink_locked(s);
		release_locked(s, &gone);
		if (s->stream)
			sse_stream_close(s->stream);
	}
	pthread_mutex_unlock(&table_lock);
	if (gone)
		destroy(s);
	return s ? 0 : -ENOENT;
}

void http_session_end_all(void)
{
	for (;;) {
		char id[sizeof(table->mcp.id)];

		pthread_mutex_lock(&table_lock);
		if (!table) {
			pthread_mutex_unlock(&table_lock);
			return;
		}
		memcpy(id, table->mcp.id, sizeof(id));
		pthread_mutex_unlock(&table_lock);
		http_session_end(id);
	}
}
