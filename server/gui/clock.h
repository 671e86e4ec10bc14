/* SPDX-License-Identifier: MIT */
#pragma once

/* Monotonic milliseconds and sleeping, for the settle and pacing waits of the GUI tools. */

/* CLOCK_MONOTONIC in milliseconds. */
double gui_now_ms(void);

/* Sleeps ms milliseconds (nothing when ms <= 0), resuming after signals. */
void gui_sleep_ms(double ms);
