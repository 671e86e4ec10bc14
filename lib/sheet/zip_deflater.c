/* SPDX-License-Identifier: MIT */
/*
 * Deflating on a second thread, the write side of zip_pipe.c: while the
 * caller builds the next chunk of a big part (content.xml of a 100,000-cell
 * book is 23 MB), this thread runs crc32 and deflate over the previous one.
 * Those two are about 40% of saving such a book, so on two cores the save's
 * wall time drops by about that much. Chunks are handed over by swapping
 * buffers, never copied; the bytes deflate sees, and so the file, are the
 * same as without the thread. Small parts never start it.
 *
 * Ownership: while busy, the entry's stream state (crc, z_stream, the output
 * buffer) is the thread's; the caller touches it only after wait_idle(),
 * whose lock orders the two threads' accesses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "sheet-internal.h"
#include "sbx/thread.h"
#include "zip.h"

struct sheet_zip_deflater {
	sheet_zip_writer *w;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	sbx_buf pending; /* handed over, not yet deflated */
	bool busy;	 /* pending holds a chunk the thread has not finished */
	bool stop;
	int rc; /* the first failure of sbx_sheet__zipw_consume, as -errno */
};

static void *deflater(void *arg)
{
	sheet_zip_deflater *d = arg;

	for (;;) {
		pthread_mutex_lock(&d->mu);
		while (!d->busy && !d->stop)
			pthread_cond_wait(&d->cv, &d->mu);
		if (!d->busy) {
			pthread_mutex_unlock(&d->mu);
			return NULL;
		}
		bool failed = d->rc < 0;
		pthread_mutex_unlock(&d->mu);

		/* busy: the chunk and the stream are ours, so no lock while deflating. */
		int r = failed ? 0 : sbx_sheet__zipw_consume(d->w, d->pending.data, d->pending.len);

		pthread_mutex_lock(&d->mu);
		if (r < 0)
			d->rc = r;
		sbx_buf_reset(&d->pending);
		d->busy = false;
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->mu);
	}
}

/* Waits until the thread has finished the chunk it holds; its first failure, or 0. */
static int wait_idle(sheet_zip_deflater *d)
{
	int r;

	pthread_mutex_lock(&d->mu);
	while (d->busy)
		pthread_cond_wait(&d->cv, &d->mu);
	r = d->rc;
	pthread_mutex_unlock(&d->mu);
	return r;
}

sheet_zip_deflater *sbx_sheet__deflater_start(sheet_zip_writer *w, size_t max)
{
	sheet_zip_deflater *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->w = w;
	sbx_buf_init(&d->pending, max);
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	if (pthread_create(&d->thread, NULL, deflater, d) != 0) {
		pthread_mutex_destroy(&d->mu);
		pthread_cond_destroy(&d->cv);
		free(d);
		return NULL; /* the caller deflates by itself */
	}
	return d;
}

int sbx_sheet__deflater_hand(sheet_zip_deflater *d, sbx_buf *b)
{
	int r = wait_idle(d);

	if (r < 0)
		return r;
	sbx_buf spare = d->pending; /* empty: reset by the thread */
	d->pending = *b;
	*b = spare;
	sbx_thread_raise(&d->mu, &d->cv, &d->busy);
	return 0;
}

int sbx_sheet__deflater_sync(sheet_zip_deflater *d)
{
	return wait_idle(d);
}

int sbx_sheet__deflater_stop(sheet_zip_deflater *d)
{
	int r;

	if (!d)
		return 0;
	r = wait_idle(d);
	sbx_thread_stop(d->thread, &d->mu, &d->cv, &d->stop);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->cv);
	sbx_buf_free(&d->pending);
	free(d);
	return r;
}
