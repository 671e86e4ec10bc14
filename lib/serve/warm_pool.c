/* SPDX-License-Identifier: MIT */
/*
 * The warm pool: per image, sandboxes created and started with no task,
 * their server answering. Each is single-use (the clean slate is the
 * point), unless --reuse N: then a sandbox serves up to N episodes or
 * /v1/sandboxes sandboxes, reset in place and checked between two
 * (lib/run/warm.c). While out on an episode it counts toward its image's
 * target, so the fillers do not replace it, and it comes back to its slot
 * at the episode's end. A /v1/sandboxes one is replaced as a single-use
 * one is (its client may keep it for an hour), and after its DELETE's reset
 * it joins its image's pool even past the target, up to the caller's
 * bound: the pool grows to what its clients use at once, and the idle TTL
 * trims it back (a create that finds none ready waits for one whose reset
 * is under way rather than start cold).
 * Filler threads, `concurrency` of them, keep every image at its target;
 * one unclaimed for idle_ttl_s is removed and replaced, so none runs into
 * the PID 1 deadline it was created with (idle TTL + the longest episode),
 * which ends it on its own if the service is killed.
 *
 * With several engines each keeps every image's target. An engine that
 * fails SBX_SERVE_ENGINE_FAILS times in a row (warm starts, episodes) is
 * drained while another is left: its warm sandboxes go, claims and cold
 * starts go elsewhere, and one warm start every DRAINED_PROBE_MS tries it
 * again (a success brings it back).
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve-internal.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/log.h"

#define FAIL_BACKOFF_MS	 1000
#define DRAINED_PROBE_MS 30000

typedef struct slot {
	sbx_warm *w;
	int64_t ready_s; /* unix seconds it became ready */
} slot;

typedef struct pool_engine {
	char *url;	   /* NULL: the default */
	unsigned live;	   /* episodes on it now */
	unsigned failures; /* in a row */
	bool drained;
	int64_t probe_after_ms; /* drained: when a warm start may try it again */
} pool_engine;

typedef struct image_pool {
	char *image;
	size_t engine; /* index in serve_pool.engines */
	unsigned target, filling, n;
	unsigned out;	    /* --reuse: on an episode, coming back after it */
	unsigned resetting; /* --reuse: /v1/sandboxes ones being reset to come back now */
	unsigned cap;	    /* of slots: the target, more once reset ones come back */
	slot *slots;
	int64_t retry_after_ms;
} image_pool;

struct serve_pool {
	serve_pool_opts o;
	char *service_id;
	pool_engine *engines;
	size_t n_engines;
	image_pool
		*images; /* engine-major: engine e's pools are [e * n_pools, (e + 1) * n_pools) */
	size_t n_images;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t *fillers;
	size_t n_fillers;
	bool stop;
	uint64_t seq;
	/*
	 * Where the next scan for a pool to fill, or to claim from, starts: ties
	 * go round the engines instead of to the lowest index (a simulated
	 * 1,000-engine service filled and claimed on its first 16 engines only,
	 * while the rest sat idle after their first sandboxes).
	 */
	size_t fill_from, take_from;
};

/* The image that most needs a sandbox, or NULL. Under the lock. */
static image_pool *neediest(serve_pool *p)
{
	image_pool *best = NULL;
	int64_t now = sbx_now_ms();

	p->fill_from = p->n_images ? (p->fill_from + 1) % p->n_images : 0;
	for (size_t j = 0; j < p->n_images; j++) {
		image_pool *ip = &p->images[(p->fill_from + j) % p->n_images];
		pool_engine *en = &p->engines[ip->engine];

		if (ip->n + ip->filling + ip->out >= ip->target || now < ip->retry_after_ms)
			continue;
		/* A drained engine gets one probe at a time. */
		if (en->drained && (now < en->probe_after_ms || ip->filling > 0))
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

/*
 * Counts a success or a failure on engine e; a failure streak drains it
 * when another engine is left (the last is never drained: its failures
 * show as errors instead). A drained engine's warm sandboxes move to *out
 * (at most max) for the caller to remove, unlocked. Under the lock.
 */
static size_t engine_result(serve_pool *p, size_t e, bool failed, sbx_warm **out, size_t max)
{
	pool_engine *en = &p->engines[e];
	size_t left = 0, n = 0;

	if (!failed) {
		if (en->drained)
			sbx_log_warning("serve: engine '%s' answers again: back in use",
					en->url ? en->url : "default");
		en->failures = 0;
		en->drained = false;
		return 0;
	}
	en->failures++;
	if (en->drained) {
		en->probe_after_ms = sbx_now_ms() + DRAINED_PROBE_MS;
		return 0;
	}
	for (size_t i = 0; i < p->n_engines; i++)
		left += i != e && !p->engines[i].drained;
	if (en->failures < SBX_SERVE_ENGINE_FAILS || left == 0)
		return 0;
	en->drained = true;
	en->probe_after_ms = sbx_now_ms() + DRAINED_PROBE_MS;
	sbx_log_warning("serve: engine '%s' failed %u times in a row: drained, its episodes go "
			"to the other engines",
			en->url ? en->url : "default", en->failures);
	for (size_t i = 0; i < p->n_images; i++) {
		image_pool *ip = &p->images[i];

		while (ip->engine == e && ip->n > 0 && n < max)
			out[n++] = ip->slots[--ip->n].w;
	}
	return n;
}

static void free_warm(sbx_warm **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbx_warm_free(w[i]);
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
			/* Woken by a claim; a tick for the TTL and the back-off. */
			sbx_cond_wait_ms(&p->wake, &p->lock, 250);
			continue;
		}
		{
			sbx_warm_opts wo = SBX_WARM_OPTS_INIT;
			sbx_error err = SBX_ERROR_INIT;
			sbx_warm *w = NULL, *gone[64];
			size_t n_gone;
			char id[160];
			bool no_reset;
			int r;

			ip->filling++;
			snprintf(id, sizeof(id), "%s-pool-%llu", p->service_id,
				 (unsigned long long)++p->seq);
			pthread_mutex_unlock(&p->lock);

			wo.image = ip->image;
			wo.id = id;
			wo.engine = p->engines[ip->engine].url;
			wo.ttl_s = sbx_serve__pool_ttl_s(p);
			wo.test = p->o.test;
			sbx_limits_set_runtime(&wo.limits, p->o.runtime);
			wo.backend = p->o.backend;
			wo.backend_userdata = p->o.backend_userdata;
			wo.reuse = p->o.reuse;
			r = sbx_warm_new(&w, &wo, &err);
			/* -ENOTSUP: --reuse on an image built before reset in place (lib/run
			 * said so, once): not the engine's fault, and no pool for it. */
			no_reset = r == -ENOTSUP;
			pthread_mutex_lock(p->o.lock);
			if (r < 0 && !no_reset)
				p->o.metrics->engine_errors++;
			else if (r >= 0)
				p->o.metrics->warm_started++;
			pthread_mutex_unlock(p->o.lock);
			if (r < 0 && !no_reset)
				sbx_log_warning("serve: warm sandbox for '%s': %s", ip->image,
						sbx_error_message(&err));

			pthread_mutex_lock(&p->lock);
			ip->filling--;
			n_gone = no_reset ? 0
					  : engine_result(p, ip->engine, r < 0, gone,
							  SBX_ELEMENTSOF(gone));
			if (n_gone > 0) {
				pthread_mutex_unlock(&p->lock);
				free_warm(gone, n_gone);
				pthread_mutex_lock(&p->lock);
			}
			if (no_reset) {
				ip->retry_after_ms = INT64_MAX; /* its claims start cold */
			} else if (r < 0) {
				ip->retry_after_ms = sbx_now_ms() + FAIL_BACKOFF_MS;
			} else if (p->stop || ip->n >= ip->target ||
				   p->engines[ip->engine].drained) {
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
	assert(o->n_engines > 0);
	p->service_id = strdup(o->service_id);
	p->engines = calloc(o->n_engines, sizeof(*p->engines));
	p->images = calloc(o->n_pools ? o->n_engines * o->n_pools : 1, sizeof(*p->images));
	if (!p->service_id || !p->engines || !p->images)
		goto oom;
	for (; p->n_engines < o->n_engines; p->n_engines++) {
		const char *url = o->engines[p->n_engines];

		if (url && !(p->engines[p->n_engines].url = strdup(url)))
			goto oom;
	}
	for (size_t e = 0; e < o->n_engines; e++) {
		for (size_t i = 0; i < o->n_pools; i++) {
			image_pool *ip = &p->images[p->n_images];

			ip->image = strdup(o->pools[i].image);
			ip->engine = e;
			ip->target = o->pools[i].target;
			ip->cap = ip->target ? ip->target : 1;
			ip->slots = calloc(ip->cap, sizeof(*ip->slots));
			p->n_images++;
			if (!ip->image || !ip->slots)
				goto oom;
			total += ip->target;
		}
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

uint32_t sbx_serve__pool_ttl_s(const serve_pool *p)
{
	return p->o.idle_ttl_s + p->o.max_timeout_s + 60;
}

/* Whether this sandbox may come back after its use: reuse left. */
static bool reusable(const sbx_warm_info *i)
{
	return i->reuse > 1 && i->reused + 1 < i->reuse;
}

/* The first fitting slot of ip (the oldest first keeps the TTL from retiring ready ones), or -1. */
static int first_fit(const image_pool *ip, serve_fit_fn fits, const void *arg)
{
	for (unsigned k = 0; k < ip->n; k++)
		if (fits(ip->slots[k].w, arg))
			return (int)k;
	return -1;
}

static bool run_fits(const sbx_warm *w, const void *run)
{
	return sbx_run_warm_fits(run, w);
}

sbx_warm *sbx_serve__pool_take(serve_pool *p, const sbx_run *run, size_t *engine)
{
	return sbx_serve__pool_take_fit(p, run_fits, run, engine);
}

sbx_warm *sbx_serve__pool_take_fit(serve_pool *p, serve_fit_fn fits, const void *arg,
				   size_t *engine)
{
	image_pool *best = NULL;
	sbx_warm *w = NULL;
	int best_k = -1;

	pthread_mutex_lock(&p->lock);
	/* Of the engines with a fitting sandbox, the one with the most ready: the
	 * claims spread as the fillers keep up (ties round the engines). */
	p->take_from = p->n_images ? (p->take_from + 1) % p->n_images : 0;
	for (size_t j = 0; j < p->n_images; j++) {
		image_pool *ip = &p->images[(p->take_from + j) % p->n_images];
		int k;

		if (p->engines[ip->engine].drained || (best && ip->n <= best->n))
			continue;
		k = first_fit(ip, fits, arg);
		if (k >= 0) {
			best = ip;
			best_k = k;
		}
	}
	if (best) {
		const sbx_warm_info *i;

		w = best->slots[best_k].w;
		i = sbx_warm_get_info(w);
		/* An episode's run comes back to its slot (sbx_serve__pool_end's
		 * come_back); a /v1/sandboxes one is replaced (pool_end_sandbox). */
		if (fits == run_fits && reusable(i))
			best->out++;
		memmove(&best->slots[best_k], &best->slots[best_k + 1],
			(best->n - (unsigned)best_k - 1) * sizeof(*best->slots));
		best->n--;
		p->engines[best->engine].live++;
		*engine = best->engine;
		pthread_cond_broadcast(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
	return w;
}

size_t sbx_serve__pool_cold_engine(serve_pool *p)
{
	size_t best = 0;
	bool found = false;

	pthread_mutex_lock(&p->lock);
	for (size_t e = 0; e < p->n_engines; e++) {
		if (p->engines[e].drained)
			continue;
		if (!found || p->engines[e].live < p->engines[best].live)
			best = e;
		found = true;
	}
	pthread_mutex_unlock(&p->lock);
	return best;
}

const char *sbx_serve__pool_engine_url(serve_pool *p, size_t engine)
{
	assert(engine < p->n_engines);
	return p->engines[engine].url;
}

void sbx_serve__pool_begin(serve_pool *p, size_t engine)
{
	pthread_mutex_lock(&p->lock);
	p->engines[engine].live++;
	pthread_mutex_unlock(&p->lock);
}

/* The pool of image on engine, or NULL. Under the lock. */
static image_pool *pool_of(serve_pool *p, size_t engine, const char *image)
{
	for (size_t i = 0; image && i < p->n_images; i++)
		if (p->images[i].engine == engine && strcmp(p->images[i].image, image) == 0)
			return &p->images[i];
	return NULL;
}

/*
 * --reuse: a finished run's sandbox back to its slot (reset clean), or its
 * slot freed for a filler (retired, spent, failed). Under the lock; what is
 * not kept goes to *drop for the caller to remove, unlocked.
 */
static void come_back(serve_pool *p, size_t engine, sbx_run *run, sbx_warm **drop)
{
	const sbx_run_result *r = run ? sbx_run_get_result(run) : NULL;
	image_pool *ip;
	sbx_warm *w;

	/* The sandbox's own reuse, as its claim counted it (a foreign image's is 1). */
	if (!r || !r->warm || r->reuse <= 1 || r->reused + 1 >= r->reuse)
		return; /* it was not counted out */
	ip = pool_of(p, engine, r->image);
	w = sbx_run_take_warm(run);
	if (ip && ip->out > 0)
		ip->out--;
	pthread_mutex_lock(p->o.lock);
	if (r->retired)
		p->o.metrics->reset_retired++;
	if (w)
		p->o.metrics->resets++;
	pthread_mutex_unlock(p->o.lock);
	if (w && ip && !p->stop && !p->engines[engine].drained && ip->n < ip->target) {
		ip->slots[ip->n++] = (slot){w, (int64_t)time(NULL)};
		w = NULL;
	}
	*drop = w;
}

void sbx_serve__pool_end(serve_pool *p, size_t engine, bool engine_failed, sbx_run *run)
{
	sbx_warm *gone[64], *drop = NULL;
	size_t n;

	pthread_mutex_lock(&p->lock);
	assert(p->engines[engine].live > 0);
	p->engines[engine].live--;
	come_back(p, engine, run, &drop);
	n = engine_result(p, engine, engine_failed, gone, SBX_ELEMENTSOF(gone));
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	free_warm(gone, n);
	sbx_warm_free(drop);
}

bool sbx_serve__pool_reset_begin(serve_pool *p, size_t engine, const sbx_warm *w, unsigned max)
{
	const sbx_warm_info *i = sbx_warm_get_info(w);
	image_pool *ip;
	bool ok = false;

	pthread_mutex_lock(&p->lock);
	ip = pool_of(p, engine, i->image);
	/* Its PID 1's deadline, moved on by the reset, must outlast an idle TTL and
	 * the longest use after it, as a filler's does: else it could sit there
	 * fitting no create. */
	if (ip && !p->stop && !p->engines[engine].drained && reusable(i) &&
	    i->deadline - i->created >= (int64_t)sbx_serve__pool_ttl_s(p) &&
	    ip->n + ip->resetting < (ip->target > max ? ip->target : max)) {
		ip->resetting++;
		ok = true;
	}
	pthread_mutex_unlock(&p->lock);
	return ok;
}

/* Room for one more slot in ip (past the target). Under the lock. */
static bool slot_room(image_pool *ip)
{
	slot *n;
	unsigned cap;

	if (ip->n < ip->cap)
		return true;
	cap = ip->cap ? ip->cap * 2 : 4;
	n = realloc(ip->slots, cap * sizeof(*n));
	if (!n)
		return false;
	ip->slots = n;
	ip->cap = cap;
	return true;
}

void sbx_serve__pool_end_sandbox(serve_pool *p, size_t engine, bool engine_failed,
				 const char *image, bool resetting, sbx_warm *w)
{
	sbx_warm *gone[64], *drop = w;
	image_pool *ip;
	size_t n;

	pthread_mutex_lock(&p->lock);
	assert(p->engines[engine].live > 0);
	p->engines[engine].live--;
	ip = pool_of(p, engine, image);
	if (ip && resetting && ip->resetting > 0)
		ip->resetting--;
	if (w && ip && !p->stop && !p->engines[engine].drained && slot_room(ip)) {
		ip->slots[ip->n++] = (slot){w, (int64_t)time(NULL)};
		drop = NULL;
	}
	n = engine_result(p, engine, engine_failed, gone, SBX_ELEMENTSOF(gone));
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	free_warm(gone, n);
	sbx_warm_free(drop);
}

bool sbx_serve__pool_wait_back(serve_pool *p, const char *image, int64_t until_ms)
{
	unsigned resetting = 0;
	int64_t left = until_ms - sbx_now_ms();

	if (left <= 0)
		return false;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n_images; i++)
		if (!p->engines[p->images[i].engine].drained &&
		    strcmp(p->images[i].image, image) == 0)
			resetting += p->images[i].resetting;
	if (resetting > 0)
		sbx_cond_wait_ms(&p->wake, &p->lock, left);
	pthread_mutex_unlock(&p->lock);
	return resetting > 0;
}

size_t sbx_serve__pool_engine_gauges(serve_pool *p, serve_engine_gauge **out)
{
	serve_engine_gauge *g = calloc(p->n_engines, sizeof(*g));

	*out = g;
	if (!g)
		return 0;
	pthread_mutex_lock(&p->lock);
	for (size_t e = 0; e < p->n_engines; e++)
		g[e] = (serve_engine_gauge){p->engines[e].url, p->engines[e].live, 0,
					    p->engines[e].drained, p->engines[e].failures};
	for (size_t i = 0; i < p->n_images; i++)
		g[p->images[i].engine].warm += p->images[i].n;
	pthread_mutex_unlock(&p->lock);
	return p->n_engines;
}

size_t sbx_serve__pool_gauges(serve_pool *p, serve_pool_gauge **out)
{
	size_t n = p->n_images / p->n_engines; /* the images, counted over every engine */
	serve_pool_gauge *g = calloc(n ? n : 1, sizeof(*g));

	*out = g;
	if (!g)
		return 0;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n_images; i++) {
		const image_pool *ip = &p->images[i];
		serve_pool_gauge *x = &g[i % n];

		x->image = ip->image;
		x->size += ip->n;
		x->filling += ip->filling;
		if (!p->engines[ip->engine].drained)
			x->target += ip->target;
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

bool sbx_serve__pool_full(serve_pool *p)
{
	bool full = true;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n_images; i++)
		if (!p->engines[p->images[i].engine].drained &&
		    p->images[i].n < p->images[i].target)
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
	sbx_free_all(p->images, p->fillers, p->service_id);
	for (size_t e = 0; e < p->n_engines; e++)
		free(p->engines[e].url);
	free(p->engines);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	free(p);
}
