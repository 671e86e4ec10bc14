/* SPDX-License-Identifier: MIT */
/* Slots and a head deadline for a thread-per-connection server: see sbx/connguard.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sbx/clock.h"
#include "sbx/connguard.h"

#define WATCH_MS 200

enum conn_state { WAITING_HEAD, BUSY, IDLE, ENDED };

typedef struct conn {
	const void *key;
	int fd; /* the guard's dup: shutdown(2) reaches the socket, close() only ours */
	enum conn_state state;
	int64_t since_ms;
} conn;

struct sbx_connguard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t watchdog;
	bool stopping;
	unsigned slots, head_ms;
	size_t n, cap;
	conn *conns;
	sbx_connguard_stats stats;
};

static void end(conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->state = ENDED;
}

static size_t live(const sbx_connguard *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->n; i++)
		n += g->conns[i].state != ENDED;
	return n;
}

static conn *find(sbx_connguard *g, const void *key)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->conns[i].key == key)
			return &g->conns[i];
	return NULL;
}

/* The one to evict for newcomer: waiting for its first head longest, else idle longest. */
static conn *victim(sbx_connguard *g, const conn *newcomer)
{
	conn *best = NULL;

	for (size_t i = 0; i < g->n; i++) {
		conn *c = &g->conns[i];

		if (c == newcomer || (c->state != WAITING_HEAD && c->state != IDLE))
			continue;
		if (!best || (c->state == WAITING_HEAD && best->state == IDLE) ||
		    (c->state == best->state && c->since_ms < best->since_ms))
			best = c;
	}
	return best;
}

static void *watch(void *arg)
{
	sbx_connguard *g = arg;
	struct timespec ts;

	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		int64_t now = sbx_now_ms();

		for (size_t i = 0; i < g->n; i++) {
			conn *c = &g->conns[i];

			if (c->state == WAITING_HEAD && now - c->since_ms >= g->head_ms) {
				end(c);
				g->stats.timed_out++;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += WATCH_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->lock, &ts);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int sbx_connguard_new(sbx_connguard **out, unsigned slots, unsigned head_ms, sbx_error *err)
{
	sbx_connguard *g = calloc(1, sizeof(*g));
	pthread_condattr_t ca;
	int r;

	if (!g)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	g->slots = slots ? slots : 1;
	g->head_ms = head_ms ? head_ms : 1;
	/* Evicted connections keep an entry until their server closes them. */
	g->cap = (size_t)g->slots * 4 + 16;
	g->conns = calloc(g->cap, sizeof(*g->conns));
	if (!g->conns) {
		free(g);
		return sbx_error_set(err, -ENOMEM, "out of memory");
	}
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->wake, &ca);
	pthread_condattr_destroy(&ca);
	r = pthread_create(&g->watchdog, NULL, watch, g);
	if (r != 0) {
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->lock);
		free(g->conns);
		free(g);
		return sbx_error_set(err, -r, "connection guard: thread: %s", strerror(r));
	}
	*out = g;
	return 0;
}

void sbx_connguard_free(sbx_connguard *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->stopping = true;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->watchdog, NULL);
	for (size_t i = 0; i < g->n; i++)
		close(g->conns[i].fd);
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g->conns);
	free(g);
}

void sbx_connguard_opened(sbx_connguard *g, const void *key, int fd)
{
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	conn *c;

	pthread_mutex_lock(&g->lock);
	if (own < 0 || g->n == g->cap) {
		/* No room to watch it: not let in. */
		shutdown(fd, SHUT_RDWR);
		g->stats.evicted++;
		pthread_mutex_unlock(&g->lock);
		if (own >= 0)
			close(own);
		return;
	}
	c = &g->conns[g->n++];
	*c = (conn){key, own, WAITING_HEAD, sbx_now_ms()};
	if (live(g) > g->slots) {
		conn *v = victim(g, c);

		/* Every other slot holds a request under way: the newcomer is refused. */
		end(v ? v : c);
		g->stats.evicted++;
	}
	pthread_mutex_unlock(&g->lock);
}

static void set_state(sbx_connguard *g, const void *key, enum conn_state st)
{
	conn *c;

	pthread_mutex_lock(&g->lock);
	c = find(g, key);
	if (c && c->state != ENDED) {
		c->state = st;
		c->since_ms = sbx_now_ms();
	}
	pthread_mutex_unlock(&g->lock);
}

void sbx_connguard_busy(sbx_connguard *g, const void *key)
{
	set_state(g, key, BUSY);
}

void sbx_connguard_idle(sbx_connguard *g, const void *key)
{
	set_state(g, key, IDLE);
}

void sbx_connguard_closed(sbx_connguard *g, const void *key)
{
	conn *c;

	pthread_mutex_lock(&g->lock);
	c = find(g, key);
	if (c) {
		close(c->fd);
		*c = g->conns[--g->n];
	}
	pthread_mutex_unlock(&g->lock);
}

sbx_connguard_stats sbx_connguard_get_stats(sbx_connguard *g)
{
	sbx_connguard_stats s;

	pthread_mutex_lock(&g->lock);
	s = g->stats;
	pthread_mutex_unlock(&g->lock);
	return s;
}
