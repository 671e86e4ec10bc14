/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbx/util.h"
#include "sbx/thread.h"
#include "sse.h"

#define MAX_QUEUED  (64u << 20)
#define KEEPALIVE_S 15

struct sse_stream {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	sbx_buf queue;
	size_t sent; /* bytes of queue already handed to MHD */
	bool closed, gone;
	int refs;
	sse_registry *reg;	 /* NULL once the registry is gone */
	sse_stream *next, *prev; /* in reg */
};

struct sse_registry {
	pthread_mutex_t lock;
	sse_stream *head;
	bool shutting_down;
};

sse_registry *sse_registry_new(void)
{
	sse_registry *reg = calloc(1, sizeof(*reg));

	if (reg)
		pthread_mutex_init(&reg->lock, NULL);
	return reg;
}

void sse_registry_free(sse_registry *reg)
{
	if (!reg)
		return;
	/* Streams still referenced (a response MHD has not freed) just leave it. */
	pthread_mutex_lock(&reg->lock);
	for (sse_stream *s = reg->head; s; s = s->next)
		s->reg = NULL;
	pthread_mutex_unlock(&reg->lock);
	pthread_mutex_destroy(&reg->lock);
	free(reg);
}

sse_stream *sse_stream_new(sse_registry *reg)
{
	sse_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	sbx_cond_init_monotonic(&s->cond);
	sbx_buf_init(&s->queue, MAX_QUEUED);
	s->refs = 1;
	s->reg = reg;
	pthread_mutex_lock(&reg->lock);
	s->closed = reg->shutting_down;
	s->next = reg->head;
	if (reg->head)
		reg->head->prev = s;
	reg->head = s;
	pthread_mutex_unlock(&reg->lock);
	return s;
}

sse_stream *sse_stream_ref(sse_stream *s)
{
	pthread_mutex_lock(&s->lock);
	s->refs++;
	pthread_mutex_unlock(&s->lock);
	return s;
}

void sse_stream_unref(sse_stream *s)
{
	sse_registry *reg;
	bool last;

	if (!s)
		return;
	reg = s->reg;
	if (reg)
		pthread_mutex_lock(&reg->lock);
	pthread_mutex_lock(&s->lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (last && reg) {
		if (s->prev)
			s->prev->next = s->next;
		else
			reg->head = s->next;
		if (s->next)
			s->next->prev = s->prev;
	}
	if (reg)
		pthread_mutex_unlock(&reg->lock);
	if (!last)
		return;
	sbx_buf_free(&s->queue);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int sse_stream_push(sse_stream *s, const char *event, const char *data)
{
	int r;

	pthread_mutex_lock(&s->lock);
	if (s->closed || s->gone) {
		pthread_mutex_unlock(&s->lock);
		return -EPIPE;
	}
	r = sbx_buf_printf(&s->queue, "event: %s\ndata: %s\n\n", event, data);
	if (r < 0) {
		s->closed = true; /* the buffer is gone; so is this stream */
		s->sent = 0;
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return r;
}

void sse_stream_close(sse_stream *s)
{
	sbx_thread_raise(&s->lock, &s->cond, &s->closed);
}

bool sse_stream_gone(sse_stream *s)
{
	bool gone;

	pthread_mutex_lock(&s->lock);
	gone = s->gone;
	pthread_mutex_unlock(&s->lock);
	return gone;
}

void sse_stream_close_all(sse_registry *reg)
{
	pthread_mutex_lock(&reg->lock);
	reg->shutting_down = true;
	for (sse_stream *s = reg->head; s; s = s->next)
		sse_stream_close(s);
	pthread_mutex_unlock(&reg->lock);
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	sse_stream *s = cls;
	ssize_t n;

	pthread_mutex_lock(&s->lock);
	while (s->sent == s->queue.len && !s->closed) {
		struct timespec at;
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_sec += KEEPALIVE_S;
		if (pthread_cond_timedwait(&s->cond, &s->lock, &at) == ETIMEDOUT &&
		    s->sent == s->queue.len && !s->closed) {
			static const char ping[] = ": keepalive\n\n";
			size_t len = sizeof(ping) - 1 < max ? sizeof(ping) - 1 : max;
			memcpy(buf, ping, len);
			pthread_mutex_unlock(&s->lock);
			return (ssize_t)len;
		}
	}
	if (s->sent == s->queue.len) {
		pthread_mutex_unlock(&s->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = (ssize_t)(s->queue.len - s->sent < max ? s->queue.len - s->sent : max);
	memcpy(buf, s->queue.data + s->sent, (size_t)n);
	s->sent += (size_t)n;
	if (s->sent == s->queue.len) {
		sbx_buf_reset(&s->queue);
		s->sent = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void reader_free(void *cls)
{
	sse_stream *s = cls;

	sbx_thread_raise(&s->lock, &s->cond, &s->gone);
	sse_stream_unref(s);
}

struct MHD_Response *sse_stream_response(sse_stream *s)
{
	struct MHD_Response *r;

	sse_stream_ref(s);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, reader, s, reader_free);
	if (!r) {
		sse_stream_unref(s);
		return NULL;
	}
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	return r;
}
