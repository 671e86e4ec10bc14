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

struct http_sessions {
	pthread_mutex_t lock;
	http_session *head;
	size_t n;
	sse_registry *streams; /* where legacy sessions' streams live */
};

http_sessions *http_sessions_new(sse_registry *streams)
{
	http_sessions *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	t->streams = streams;
	return t;
}

void http_sessions_free(http_sessions *t)
{
	if (!t)
		return;
	http_session_end_all(t);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

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
static void unlink_locked(http_sessions *t, http_session *s)
{
	for (http_session **p = &t->head; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			t->n--;
			s->ended = true;
			return;
		}
}

static void release_locked(http_session *s, bool *destroy_out)
{
	*destroy_out = --s->refs == 0;
}

static http_session *evict_locked(http_sessions *t)
{
	http_session *oldest = NULL;

	for (http_session *s = t->head; s; s = s->next)
		if (!s->legacy && (!oldest || s->last_used < oldest->last_used))
			oldest = s;
	if (oldest)
		unlink_locked(t, oldest);
	return oldest;
}

/* Drops legacy sessions whose SSE client went away (each sweep frees at most a few). */
static void sweep_locked(http_sessions *t)
{
	for (int round = 0; round < 8; round++) {
		http_session *dead = NULL;
		bool gone = false;

		for (http_session *s = t->head; s && !dead; s = s->next)
			if (s->legacy && sse_stream_gone(s->stream))
				dead = s;
		if (!dead)
			return;
		unlink_locked(t, dead);
		release_locked(dead, &gone);
		if (gone)
			destroy(dead);
	}
}

http_session *http_session_create(http_sessions *t, bool legacy)
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
	if (legacy && !(s->stream = sse_stream_new(t->streams))) {
		free(s);
		return NULL;
	}
	s->owner = t;
	s->refs = 2; /* the table and the caller */
	s->last_used = sbx_now_ms();
	pthread_mutex_lock(&t->lock);
	sweep_locked(t);
	if (t->n >= MAX_SESSIONS) {
		evicted = evict_locked(t);
		if (evicted)
			release_locked(evicted, &gone);
		if (!evicted) {
			pthread_mutex_unlock(&t->lock);
			destroy(s);
			return NULL;
		}
	}
	s->next = t->head;
	t->head = s;
	t->n++;
	pthread_mutex_unlock(&t->lock);
	if (gone)
		destroy(evicted);
	return s;
}

http_session *http_session_find(http_sessions *t, const char *id)
{
	http_session *found = NULL;

	if (!id)
		return NULL;
	pthread_mutex_lock(&t->lock);
	for (http_session *s = t->head; s; s = s->next)
		if (strcmp(s->mcp.id, id) == 0) {
			found = s;
			s->refs++;
			s->last_used = sbx_now_ms();
			break;
		}
	pthread_mutex_unlock(&t->lock);
	return found;
}

void http_session_unref(http_session *s)
{
	bool gone;

	if (!s)
		return;
	pthread_mutex_lock(&s->owner->lock);
	release_locked(s, &gone);
	pthread_mutex_unlock(&s->owner->lock);
	if (gone)
		destroy(s);
}

int http_session_end(http_sessions *t, const char *id)
{
	http_session *s = NULL;
	bool gone = false;

	pthread_mutex_lock(&t->lock);
	for (http_session *it = t->head; it; it = it->next)
		if (strcmp(it->mcp.id, id) == 0) {
			s = it;
			break;
		}
	if (s) {
		unlink_locked(t, s);
		release_locked(s, &gone);
		if (s->stream)
			sse_stream_close(s->stream);
	}
	pthread_mutex_unlock(&t->lock);
	if (gone)
		destroy(s);
	return s ? 0 : -ENOENT;
}

void http_session_end_all(http_sessions *t)
{
	for (;;) {
		char id[sizeof(t->head->mcp.id)];

		pthread_mutex_lock(&t->lock);
		if (!t->head) {
			pthread_mutex_unlock(&t->lock);
			return;
		}
		memcpy(id, t->head->mcp.id, sizeof(id));
		pthread_mutex_unlock(&t->lock);
		http_session_end(t, id);
	}
}
