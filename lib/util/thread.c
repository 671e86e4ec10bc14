/* SPDX-License-Identifier: MIT */
#include <time.h>

#include "sbx/thread.h"

void sbx_cond_init_monotonic(pthread_cond_t *cond)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &ca);
	pthread_condattr_destroy(&ca);
}

void sbx_thread_raise(pthread_mutex_t *lock, pthread_cond_t *cond, bool *flag)
{
	pthread_mutex_lock(lock);
	*flag = true;
	pthread_cond_broadcast(cond);
	pthread_mutex_unlock(lock);
}

void sbx_thread_stop(pthread_t thread, pthread_mutex_t *lock, pthread_cond_t *cond, bool *stop)
{
	sbx_thread_raise(lock, cond, stop);
	pthread_join(thread, NULL);
}
