/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Monotonic time and sleeping. Deadlines, timeouts and phase timings all
 * count on CLOCK_MONOTONIC, which a change of the wall clock cannot move;
 * wall-clock time (timestamps in files) stays with the caller.
 */

#include <stdint.h>

/* CLOCK_MONOTONIC in whole milliseconds (for deadlines and timeouts). */
int64_t sbx_now_ms(void);

/* CLOCK_MONOTONIC in milliseconds with the fraction (for measured durations). */
double sbx_now_msf(void);

/* Sleeps ms milliseconds (nothing when ms <= 0), resuming after a signal. */
void sbx_sleep_ms(double ms);
