/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Host-side agent processes: started in their own process group with the
 * endpoint in their environment, output captured through a pipe, stopped as
 * a group. Internal to lib/run.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "sbx/error.h"

typedef struct sbx_agent_proc {
	pid_t pid;	  /* 0 when none */
	int out_fd;	  /* read end of the agent's stdout+stderr, -1 when closed */
	int log_fd;	  /* agent.log, -1 when none */
	int lifeline;	  /* write end the supervisor watches; closing it stops the agent */
	bool echo;	  /* copy the output to our stderr too */
	long long logged; /* bytes written to agent.log (capped) */
	int exit_code;	  /* -1 until it exited; 128+N for signal N */
	bool stopped;	  /* it was still running at the end: the host signalled it */
} sbx_agent_proc;

/*
 * Starts argv (argv[0] looked up in PATH) with env_extra ("KEY=value",
 * NULL-terminated) added to our environment. Output goes to log_path.
 */
int sbx_agent__spawn(sbx_agent_proc *a, char *const argv[], char *const env_extra[],
		     const char *log_path, bool echo, sbx_error *err);

/*
 * prog as execvp would find it: itself when it has a '/', else the first
 * executable regular file of that name in PATH. A new string (free it), or
 * NULL with errno ENOENT (none) or ENOMEM.
 */
char *sbx_agent__which(const char *prog);

/* Moves pending output to the log; returns true once the agent has exited (reaped). */
bool sbx_agent__poll(sbx_agent_proc *a);

/* Waits up to ms for the agent to exit on its own; true once it has. */
bool sbx_agent__wait(sbx_agent_proc *a, int ms);

/* SIGTERM to the group, then SIGKILL after grace_ms; reaps; closes fds. */
void sbx_agent__stop(sbx_agent_proc *a, int grace_ms);
