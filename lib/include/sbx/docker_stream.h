/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A hijacked, bidirectional stream to a process in a container: an exec (or
 * the container's own stdio via attach), upgraded from HTTP to a raw
 * connection. Write its stdin, read its stdout/stderr (demultiplexed from
 * the engine's 8-byte frames unless the process has a TTY), close stdin to
 * send EOF. This is how the host talks to an MCP server in a container that
 * has no network.
 *
 * Threads: on unix:// and plain tcp:// one thread may read while another
 * writes; with TLS use one thread. For poll(): sbx_docker_stream_fd gives the
 * socket, but check sbx_docker_stream_pending first (data may be buffered).
 *
 *   sbx_docker_exec_opts o = SBX_DOCKER_EXEC_OPTS_INIT;
 *   o.cmd = (const char *[]){"sandbox-mcp", "--stdio", NULL};
 *   o.attach_stdin = true;
 *   sbx_docker_exec_create(d, cid, &o, &exec_id, &err);
 *   sbx_docker_stream_open_exec(d, exec_id, false, &s, &err);
 *   sbx_docker_stream_write(s, req, len, 5000, &err);
 *   n = sbx_docker_stream_read(s, buf, sizeof buf, &which, 5000, &err);
 *   sbx_docker_stream_close_write(s, &err);   (EOF on the process's stdin)
 *   sbx_docker_stream_free(s);
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sbx/docker.h"

typedef struct sbx_docker_stream sbx_docker_stream;

enum {
	SBX_DOCKER_STDIN = 0,
	SBX_DOCKER_STDOUT = 1,
	SBX_DOCKER_STDERR = 2,
};

/*
 * POST /exec/{id}/start with Upgrade: tcp. The exec must have been created
 * with attach_stdin (to write) and tty as given here. The stream has its own
 * connection; d may be used (or freed) independently afterwards.
 */
int sbx_docker_stream_open_exec(sbx_docker *d, const char *exec_id, bool tty,
				sbx_docker_stream **out, sbx_error *err);

/*
 * POST /containers/{id}/attach?stream=1&stdin=1&stdout=1&stderr=1: the
 * container's main process (created with open_stdin, and tty as given).
 * Attach before start to see all output.
 */
int sbx_docker_stream_open_attach(sbx_docker *d, const char *container_id, bool tty,
				  sbx_docker_stream **out, sbx_error *err);

/*
 * Writes all len bytes to the process's stdin. timeout_ms: -1 forever,
 * otherwise -ETIMEDOUT when not all was written in time. -EPIPE once the
 * other side closed.
 */
int sbx_docker_stream_write(sbx_docker_stream *s, const void *data, size_t len, int timeout_ms,
			    sbx_error *err);

/*
 * Reads up to cap bytes of output from one stream (all bytes returned by a
 * call belong to the same stream, written to *which when not NULL:
 * SBX_DOCKER_STDOUT or SBX_DOCKER_STDERR). Returns the number of bytes (> 0),
 * 0 at end of stream (the process exited and its output is drained),
 * -EAGAIN when timeout_ms is 0 and nothing is ready, -ETIMEDOUT after
 * timeout_ms (> 0), or another negative errno (-EPROTO on a malformed frame).
 * timeout_ms -1 waits forever.
 */
ssize_t sbx_docker_stream_read(sbx_docker_stream *s, void *buf, size_t cap, int *which,
			       int timeout_ms, sbx_error *err);

/* Sends EOF to the process's stdin (half-close); output can still be read. */
int sbx_docker_stream_close_write(sbx_docker_stream *s, sbx_error *err);

/* The socket, for poll(POLLIN). */
int sbx_docker_stream_fd(const sbx_docker_stream *s);

/* True when read can return data without touching the socket. */
bool sbx_docker_stream_pending(const sbx_docker_stream *s);

/* Closes the connection and frees. Accepts NULL. */
void sbx_docker_stream_free(sbx_docker_stream *s);
