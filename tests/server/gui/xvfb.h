/* SPDX-License-Identifier: MIT */
#pragma once

/* A private Xvfb for a test: started on a free display, killed in teardown. */

#include <stdbool.h>
#include <sys/types.h>

typedef struct test_xvfb {
	pid_t pid;
	char display[16]; /* ":N" */
} test_xvfb;

/*
 * Starts `Xvfb -displayfd ... -screen 0 WxHx24 -nolisten tcp` ($SBX_XVFB or
 * Xvfb from PATH), letting the server pick a free display number, and waits
 * until it accepts connections. Returns 0 or -1 (with a message on stderr).
 */
int test_xvfb_start(test_xvfb *x, int width, int height);

/* Kills and reaps the server. Accepts a stopped or never-started one. */
void test_xvfb_stop(test_xvfb *x);

/* Milliseconds on the monotonic clock. */
double test_now_ms(void);

/* Spawns argv with DISPLAY=display and stdout/stderr to log_path (or /dev/null). */
pid_t test_spawn(char *const argv[], const char *display, const char *log_path);

/* Kills (SIGTERM, then SIGKILL after grace_ms) and reaps pid and its process group. */
void test_kill(pid_t pid, int grace_ms);
