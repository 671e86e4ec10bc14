/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Slots and a head deadline for a thread-per-connection HTTP server
 * (libmicrohttpd in `serve` and `view`), as the relay holds them itself:
 * a connection must show its request head within head_ms of the connect,
 * and when every slot is taken a new connection evicts the one that has
 * waited longest without a request (never a request under way), so
 * connections that never send a request cannot lock real clients out.
 *
 * The server reports what its connections do; the guard ends a connection
 * by shutdown(2) on a dup of its socket (so the server's own close can
 * never race a reused descriptor), which the server sees as the peer
 * going away. Thread-safe; a watchdog thread enforces the deadline.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sbx/cleanup.h"
#include "sbx/error.h"

typedef struct sbx_connguard sbx_connguard;

typedef struct sbx_connguard_stats {
	uint64_t evicted;   /* waiting without a request when the slots ran out */
	uint64_t timed_out; /* no request head within head_ms of the connect */
} sbx_connguard_stats;

/* Starts the watchdog. slots >= 1; head_ms >= 1. Free with sbx_connguard_free. */
int sbx_connguard_new(sbx_connguard **out, unsigned slots, unsigned head_ms, sbx_error *err);

/* Stops the watchdog and closes the guard's descriptors. NULL is fine. */
void sbx_connguard_free(sbx_connguard *g);
SBX_DEFINE_CLEANUP(sbx_connguard, sbx_connguard_free)

/*
 * A new connection, known by key (e.g. the MHD_Connection), on socket fd.
 * Past the slots it evicts the longest-waiting connection that has no
 * request under way; when every slot holds one, the new connection is the
 * one shut down.
 */
void sbx_connguard_opened(sbx_connguard *g, const void *key, int fd);

/* A request head arrived: not evicted, no deadline, until sbx_connguard_idle. */
void sbx_connguard_busy(sbx_connguard *g, const void *key);

/* The request is done; the connection waits for another (evictable, no head deadline). */
void sbx_connguard_idle(sbx_connguard *g, const void *key);

/* The server closed it: forget it (call before the server closes fd). */
void sbx_connguard_closed(sbx_connguard *g, const void *key);

sbx_connguard_stats sbx_connguard_get_stats(sbx_connguard *g);

#ifdef MHD_VERSION
/*
 * For a libmicrohttpd daemon (included before this header):
 * MHD_OPTION_NOTIFY_CONNECTION, sbx_connguard_mhd_notify, guard. The access
 * handler calls sbx_connguard_busy at the head, the completion callback
 * sbx_connguard_idle.
 */
static inline void sbx_connguard_mhd_notify(void *guard, struct MHD_Connection *c,
					    void **socket_context,
					    enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;

	(void)socket_context;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		sbx_connguard_closed((sbx_connguard *)guard, c);
		return;
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		sbx_connguard_opened((sbx_connguard *)guard, c, ci->connect_fd);
}
#endif
