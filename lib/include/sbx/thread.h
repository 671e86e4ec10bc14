/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Small pieces of the mutex + condition variable protocol the threaded parts
 * share (stream queues, task timers, zip producer threads).
 */

#include <pthread.h>
#include <stdbool.h>

/*
 * Initialises cond for pthread_cond_timedwait deadlines on CLOCK_MONOTONIC,
 * so that setting the wall clock neither shortens nor stretches a wait.
 */
void sbx_cond_init_monotonic(pthread_cond_t *cond);

/*
 * Sets *flag under lock and wakes every thread waiting on cond: how one thread
 * tells another to stop, or that its peer is gone. The waiter re-checks the
 * flag under the same lock, so the wake-up cannot be missed.
 */
void sbx_thread_raise(pthread_mutex_t *lock, pthread_cond_t *cond, bool *flag);

/* Tells a worker thread to stop (sbx_thread_raise on its stop flag) and waits for it to end. */
void sbx_thread_stop(pthread_t thread, pthread_mutex_t *lock, pthread_cond_t *cond, bool *stop);
