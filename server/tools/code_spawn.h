/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Runs one program for the server and waits for it: in a sandbox through
 * sandbox-spawner, as the agent's uid (spawn-protocol.h); anywhere else (tests,
 * a host) forked here. The child gets its own process group, the given
 * rlimits, stdin from a memfd holding stdin_data, and its output handed to
 * the sinks as it arrives; at the timeout, on a cancel and (unless
 * keep_leftovers) when it exits, its whole tree is killed. Used by execute_python/execute_shell
 * (exec_tools.c) and the host's /control/sandbox API (sandbox_api.c).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbx/error.h"

typedef struct spawn_limits {
	uint32_t cpu_seconds;	 /* RLIMIT_CPU */
	uint32_t max_processes;	 /* RLIMIT_NPROC */
	uint64_t address_space;	 /* RLIMIT_AS, bytes */
	uint64_t max_file_bytes; /* RLIMIT_FSIZE */
} spawn_limits;

typedef void (*spawn_sink_fn)(void *userdata, const char *data, size_t n);

typedef struct spawn_job {
	const char *prog; /* absolute path */
	char *const *argv;
	char *const *envp;
	const void *stdin_data; /* may be NULL */
	size_t stdin_len;
	int cwd_fd; /* a directory fd: the child's working directory */
	long long timeout_ms;
	spawn_limits limits;
	/* What the child leaves running at its exit stays (a kill or the timeout still ends it). */
	bool keep_leftovers;
	spawn_sink_fn out, err; /* NULL: dropped */
	void *out_userdata, *err_userdata;
	/* Optional: a cancel flag, and a progress report about once a second. */
	const atomic_bool *cancelled;
	void (*progress)(void *payload, double progress, double total, const char *message);
	void *progress_payload;
} spawn_job;

typedef struct spawn_outcome {
	int exit_code; /* the exit status, or -signal */
	int signal;    /* the signal that ended it, 0 when it exited */
	bool timed_out, cancelled;
	long long duration_ms;
} spawn_outcome;

/*
 * Runs job to its end. 0 with *o filled; a negative errno with err when it
 * could not start (-EPIPE: the spawner is gone; the program's own execve
 * errno when it could not be run).
 */
int spawn_run(const spawn_job *job, spawn_outcome *o, sbx_error *err);

/* The child environment's base: the server's own, as tool code always had it. */
extern char **environ;
