/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <time.h>

#include "clock.h"

double gui_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void gui_sleep_ms(double ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)((long)ms % 1000) * 1000000L};

	while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
