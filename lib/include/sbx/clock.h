/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Monotonic time and sleeping. Deadlines, timeouts and phase timings all
 * count on CLOCK_MONOTONIC, which a change of the wall clock cannot move;
 * wall-clock time (timestamps in files) stays with the caller.
 */

#include <pthread.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in whole milliseconds (for deadlines and timeouts). */
int64_t sbx_now_ms(void);

/* CLOCK_MONOTONIC in milliseconds with the fraction (for measured durations). */
double sbx_now_msf(void);

/*
 * pthread_cond_timedwait for at most ms milliseconds, on a condition of the
 * default (CLOCK_REALTIME) clock; its result (ETIMEDOUT when the time ran out).
 */
int sbx_cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *lock, int64_t ms);

/* Sleeps ms milliseconds (nothing when ms <= 0), resuming after a signal. */
void sbx_sleep_ms(double ms);
