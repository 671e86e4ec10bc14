/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <time.h>

#include "sbx/clock.h"

int64_t sbx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double sbx_now_msf(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void sbx_sleep_ms(double ms)
{
	struct timespec ts;

	if (!(ms > 0))
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int sbx_cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *lock, int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	ts.tv_sec += (time_t)(ms / 1000 + ts.tv_nsec / 1000000000L);
	ts.tv_nsec %= 1000000000L;
	return pthread_cond_timedwait(cond, lock, &ts);
}
