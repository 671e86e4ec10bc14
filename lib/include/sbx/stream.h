/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A bidirectional byte stream to the in-container server: a docker-exec'd
 * `sandbox-bridge` in production, a plain socket in tests. The relay speaks
 * HTTP/1.1 over it and keeps idle streams for reuse, so an implementation
 * must tell when an idle stream went stale (the peer closed it).
 *
 * Implementations embed sbx_stream as their first member.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sbx/cleanup.h"

typedef struct sbx_stream sbx_stream;

typedef struct sbx_stream_ops {
	/*
	 * Reads up to n bytes, waiting at most timeout_ms (-1: no limit).
	 * Returns the count, 0 at end of stream, -ETIMEDOUT, or a negative errno.
	 */
	ssize_t (*read)(sbx_stream *s, void *buf, size_t n, int timeout_ms);
	/* Writes all n bytes. Returns 0 or a negative errno. */
	int (*write)(sbx_stream *s, const void *buf, size_t n);
	/* True when an idle stream can no longer be used (peer closed, stray data). */
	bool (*stale)(sbx_stream *s);
	/* Closes and frees. */
	void (*close)(sbx_stream *s);
} sbx_stream_ops;

struct sbx_stream {
	const sbx_stream_ops *ops;
};

/* Thin dispatchers; sbx_stream_close accepts NULL. */
ssize_t sbx_stream_read(sbx_stream *s, void *buf, size_t n, int timeout_ms);
int sbx_stream_write(sbx_stream *s, const void *buf, size_t n);
bool sbx_stream_stale(sbx_stream *s);
void sbx_stream_close(sbx_stream *s);

/*
 * Wraps a connected socket or pipe pair (rfd may equal wfd). The stream owns
 * the descriptors and closes them. Returns 0 and *out, or -ENOMEM (the fds
 * are then left open for the caller).
 */
int sbx_stream_from_fds(sbx_stream **out, int rfd, int wfd);

/* Connects to a unix socket. Returns 0 or a negative errno. */
int sbx_stream_connect_unix(sbx_stream **out, const char *path);

static inline void sbx_stream_closep(sbx_stream **s)
{
	sbx_stream_close(*s);
	*s = NULL;
}
#define _cleanup_stream_ _cleanup_(sbx_stream_closep)
