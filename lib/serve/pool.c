/* SPDX-License-Identifier: MIT */
/*
 * The warm pool: per image, sandboxes created and started with no task,
 * their server answering. Each is single-use (the clean slate is the
 * point). Filler threads, `concurrency` of them, keep every image at its
 * target; one unclaimed for idle_ttl_s is removed and replaced, so none
 * runs into the PID 1 deadline it was created with (idle TTL + the longest
 * episode), which ends it on its own if the service is killed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve-internal.h"
#include "sbx/cleanup.h"
#include "sbx/log.h"

#define FAIL_BACKOFF_MS 1000

typedef struct slot {
	sbx_warm *w;
	int64_t ready_s; /* unix seconds it became ready */
} slot;

typedef struct image_pool {
	char *image;
	unsigned target, filling, n;
	slot *slots; /* target of them */
	int64_t retry_after_ms;
} image_pool;

struct serve_pool {
	serve_pool_opts o;
	char *service_id;
	char *engine;
	image_pool *images;
	size_t n_images;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t *fillers;
	size_t n_fillers;
	bool stop;
	uint64_t seq;
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The image that most needs a sandbox, or NULL. Under the lock. */
static image_pool *neediest(serve_pool *p)
{
	image_pool *best = NULL;
	int64_t now = mono_ms();

	for (size_t i = 0; i < p->n_images; i++) {
		image_pool *ip = &p->images[i];

		if (ip->n + ip->filling >= ip->target || now < ip->retry_after_ms)
			continue;
		if (!best || ip->n + ip->filling < best->n + best->filling)
			best = ip;
	}
	return best;
}

/* Takes out the sandboxes idle past the TTL; the caller removes them, unlocked. */
static size_t expire(serve_pool *p, sbx_warm **out, size_t max)
{
	int64_t now = (int64_t)time(NULL);
	size_t n = 0;

	for (size_t i = 0; i < p->n_images; i++) {
		image_pool *ip = &p->images[i];

		for (unsigned k = 0; k < ip->n && n < max;) {
			if (now - ip->slots[k].ready_s < (int64_t)p->o.idle_ttl_s) {
				k++;
				continue;
			}
			out[n++] = ip->slots[k].w;
			ip->slots[k] = ip->slots[--ip->n];
		}
	}
	return n;
}

static void *filler_main(void *arg)
{
	serve_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		sbx_warm *old[8];
		size_t n_old = expire(p, old, SBX_ELEMENTSOF(old));
		image_pool *ip;

		if (n_old > 0) {
			pthread_mutex_unlock(&p->lock);
			for (size_t i = 0; i < n_old; i++)
				sbx_warm_free(old[i]);
			pthread_mutex_lock(p->o.lock);
			p->o.metrics->warm_retired += n_old;
			pthread_mutex_unlock(p->o.lock);
			pthread_mutex_lock(&p->lock);
			continue;
		}
		ip = neediest(p);
		if (!ip) {
			struct timespec ts;

			/* Woken by a claim; a tick for the TTL and the back-off. */
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 250 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&p->wake, &p->lock, &ts);
			continue;
		}
		{
			sbx_warm_opts wo = SBX_WARM_OPTS_INIT;
			sbx_error err = SBX_ERROR_INIT;
			sbx_warm *w = NULL;
			char id[160];
			int r;

			ip->filling++;
			snprintf(id, sizeof(id), "%s-pool-%llu", p->service_id,
				 (unsigned long long)++p->seq);
			pthread_mutex_unlock(&p->lock);

			wo.image = ip->image;
			wo.id = id;
			wo.engine = p->engine;
			wo.ttl_s = p->o.idle_ttl_s + p->o.max_timeout_s + 60;
			wo.test = p->o.test;
			r = sbx_warm_new(&w, &wo, &err);
			pthread_mutex_lock(p->o.lock);
			if (r < 0)
				p->o.metrics->engine_errors++;
			else
				p->o.metrics->warm_started++;
			pthread_mutex_unlock(p->o.lock);
			if (r < 0)
				sbx_log_warning("serve: warm sandbox for '%s': %s", ip->image,
						sbx_error_message(&err));

			pthread_mutex_lock(&p->lock);
			ip->filling--;
			if (r < 0) {
				ip->retry_after_ms = mono_ms() + FAIL_BACKOFF_MS;
			} else if (p->stop || ip->n >= ip->target) {
				pthread_mutex_unlock(&p->lock);
				sbx_warm_free(w);
				pthread_mutex_lock(&p->lock);
			} else {
				ip->slots[ip->n++] = (slot){w, (int64_t)time(NULL)};
			}
			pthread_cond_broadcast(&p->wake);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int sbx_serve__pool_new(serve_pool **out, const serve_pool_opts *o, sbx_error *err)
{
	serve_pool *p = calloc(1, sizeof(*p));
	unsigned total = 0;

	if (!p)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	p->o = *o;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	p->service_id = strdup(o->service_id);
	p->engine = o->engine ? strdup(o->engine) : NULL;
	p->images = calloc(o->n_pools ? o->n_pools : 1, sizeof(*p->images));
	if (!p->service_id || (o->engine && !p->engine) || !p->images)
		goto oom;
	for (size_t i = 0; i < o->n_pools; i++) {
		image_pool *ip = &p->images[p->n_images];

		ip->image = strdup(o->pools[i].image);
		ip->target = o->pools[i].target;
		ip->slots = calloc(ip->target ? ip->target : 1, sizeof(*ip->slots));
		p->n_images++;
		if (!ip->image || !ip->slots)
			goto oom;
		total += ip->target;
	}
	if (total > 0) {
		size_t n = o->concurrency ? o->concurrency : 2;

		p->fillers = calloc(n, sizeof(*p->fillers));
		if (!p->fillers)
			goto oom;
		for (; p->n_fillers < n; p->n_fillers++)
			if (pthread_create(&p->fillers[p->n_fillers], NULL, filler_main, p) != 0)
				break;
		if (p->n_fillers == 0) {
			sbx_serve__pool_free(p);
			return sbx_error_set(err, -EAGAIN, "pool: cannot start a thread");
		}
	}
	*out = p;
	return 0;
oom:
	sbx_serve__pool_free(p);
	return sbx_error_set(err, -ENOMEM, "out of memory");
}

sbx_warm *sbx_serve__pool_take(serve_pool *p, const sbx_run *run)
{
	sbx_warm *w = NULL;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; !w && i < p->n_images; i++) {
		image_pool *ip = &p->images[i];

		for (unsigned k = 0; k < ip->n; k++) {
			if (!sbx_run_warm_fits(run, ip->slots[k].w))
				continue;
			w = ip->slots[k].w;
			/* The oldest first keeps the TTL from retiring ready sandboxes. */
			memmove(&ip->slots[k], &ip->slots[k + 1],
				(ip->n - k - 1) * sizeof(*ip->slots));
			ip->n--;
			break;
		}
	}
	if (w)
		pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	return w;
}

size_t sbx_serve__pool_gauges(serve_pool *p, serve_pool_gauge **out)
{
	serve_pool_gauge *g = calloc(p->n_images ? p->n_images : 1, sizeof(*g));

	*out = g;
	if (!g)
		return 0;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n_images; i++)
		g[i] = (serve_pool_gauge){p->images[i].image, p->images[i].n, p->images[i].target,
					  p->images[i].filling};
	pthread_mutex_unlock(&p->lock);
	return p->n_images;
}

bool sbx_serve__pool_full(serve_pool *p)
{
	bool full = true;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n_images; i++)
		if (p->images[i].n < p->images[i].target)
			full = false;
	pthread_mutex_unlock(&p->lock);
	return full;
}

void sbx_serve__pool_free(serve_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < p->n_fillers; i++)
		pthread_join(p->fillers[i], NULL);
	for (size_t i = 0; i < p->n_images; i++) {
		for (unsigned k = 0; k < p->images[i].n; k++)
			sbx_warm_free(p->images[i].slots[k].w);
		free(p->images[i].slots);
		free(p->images[i].image);
	}
	free(p->images);
	free(p->fillers);
	free(p->service_id);
	free(p->engine);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	free(p);
}
