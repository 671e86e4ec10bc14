/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Small pieces of the mutex + condition variable protocol the threaded parts
 * share (stream queues, task timers, zip producer threads).
 */

#include <pthread.h>
#include <stdbool.h>

/*
 * Sets *flag under lock and wakes every thread waiting on cond: how one thread
 * tells another to stop, or that its peer is gone. The waiter re-checks the
 * flag under the same lock, so the wake-up cannot be missed.
 */
static inline void sbx_thread_raise(pthread_mutex_t *lock, pthread_cond_t *cond, bool *flag)
{
	pthread_mutex_lock(lock);
	*flag = true;
	pthread_cond_broadcast(cond);
	pthread_mutex_unlock(lock);
}

/* Tells a worker thread to stop (sbx_thread_raise on its stop flag) and waits for it to end. */
static inline void sbx_thread_stop(pthread_t thread, pthread_mutex_t *lock, pthread_cond_t *cond,
				   bool *stop)
{
	sbx_thread_raise(lock, cond, stop);
	pthread_join(thread, NULL);
}
