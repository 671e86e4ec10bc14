/* SPDX-License-Identifier: MIT */
/*
 * Inflating on a second thread: a producer decompresses a zip entry into a
 * small ring of buffers while the caller parses the previous ones. Inflate
 * is about a third of reading a big content.xml, so on two cores this cuts
 * the wall time of opening a million-cell sheet by about that much. All
 * limits stay with the producer (sbx_sheet__zip_read); the consumer only
 * sees bytes or the producer's error. Without a thread (creation failed)
 * it reads synchronously.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sheet-internal.h"
#include "sbx/thread.h"
#include "zip.h"

#define NBUF	 4
#define BUF_SIZE ((size_t)256 << 10)

struct sheet_zip_pipe {
	sheet_zip *z;
	pthread_t thread;
	bool threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *bufs[NBUF];
	size_t lens[NBUF];
	unsigned head, count; /* filled slots: head .. head+count-1 */
	bool held;	      /* the consumer holds bufs[head] */
	bool eof, stop;
	int rc;
	sbx_error err; /* the producer's */
};

static void *producer(void *arg)
{
	sheet_zip_pipe *p = arg;

	for (;;) {
		unsigned slot;
		pthread_mutex_lock(&p->mu);
		while (p->count == NBUF && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		slot = (p->head + p->count) % NBUF;
		pthread_mutex_unlock(&p->mu);

		/* The slot is free: neither filled nor held, so no lock while inflating. */
		ssize_t n = sbx_sheet__zip_read(p->z, p->bufs[slot], BUF_SIZE, &p->err);

		pthread_mutex_lock(&p->mu);
		if (n <= 0) {
			p->rc = (int)n;
			p->eof = true;
		} else {
			p->lens[slot] = (size_t)n;
			p->count++;
		}
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (n <= 0)
			return NULL;
	}
}

void sbx_sheet__pipe_stop(sheet_zip_pipe *p)
{
	if (!p)
		return;
	if (p->threaded)
		sbx_thread_stop(p->thread, &p->mu, &p->cv, &p->stop);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	for (int i = 0; i < NBUF; i++)
		free(p->bufs[i]);
	free(p);
}

int sbx_sheet__pipe_start(sheet_zip_pipe **out, sheet_zip *z, sbx_error *err)
{
	sheet_zip_pipe *p = calloc(1, sizeof(*p));

	if (!p)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	p->z = z;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (int i = 0; i < NBUF; i++) {
		p->bufs[i] = malloc(BUF_SIZE);
		if (!p->bufs[i]) {
			sbx_sheet__pipe_stop(p);
			return sbx_error_set(err, -ENOMEM, "out of memory");
		}
	}
	p->threaded = pthread_create(&p->thread, NULL, producer, p) == 0;
	*out = p;
	return 0;
}

ssize_t sbx_sheet__pipe_next(sheet_zip_pipe *p, const char **chunk, sbx_error *err)
{
	ssize_t n;

	if (!p->threaded) {
		n = sbx_sheet__zip_read(p->z, p->bufs[0], BUF_SIZE, err);
		*chunk = p->bufs[0];
		return n;
	}
	pthread_mutex_lock(&p->mu);
	if (p->held) {
		/* Done with the previous chunk: hand its slot back. */
		p->held = false;
		p->head = (p->head + 1) % NBUF;
		p->count--;
		pthread_cond_broadcast(&p->cv);
	}
	while (p->count == 0 && !p->eof)
		pthread_cond_wait(&p->cv, &p->mu);
	if (p->count > 0) {
		p->held = true;
		*chunk = p->bufs[p->head];
		n = (ssize_t)p->lens[p->head];
	} else {
		n = p->rc;
		*chunk = NULL;
		if (n < 0 && err && !err->code)
			*err = p->err;
	}
	pthread_mutex_unlock(&p->mu);
	return n;
}
