/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The wire format between sandbox-mcp (the server, uid 1000) and
 * sandbox-spawner (uid 1001), which runs the agent's tool code as its own
 * uid so that code cannot signal, trace or impersonate the server.
 *
 * PID 1 makes a SOCK_SEQPACKET socketpair and hands one end to each; the
 * server finds its end in $SANDBOX_SPAWN_FD. Per execution the server sends
 * one request message: struct sbx_spawn_request, then argc + envc
 * NUL-terminated strings (argv[0] is the program's absolute path), with
 * SBX_SPAWN_NFDS descriptors (SCM_RIGHTS) in this order: the execution's
 * channel (one end of a fresh SOCK_SEQPACKET pair), stdin, stdout, stderr,
 * the exec-status pipe (the child writes its errno there when execve fails;
 * it is close-on-exec otherwise) and the working directory.
 *
 * On the channel the spawner's guard process answers with events
 * (struct sbx_spawn_event): SBX_SPAWN_STARTED (value: pid) once, then
 * SBX_SPAWN_EXITED (value: the raw wait status) when the child ended; the
 * child's leftovers in its process group are killed by then. The server may
 * send the byte SBX_SPAWN_KILL at any time (timeout, cancel): the guard kills
 * the child's process group. When the server closes the channel (or dies),
 * the guard kills the group and exits. Only libc; shared by both sides.
 */
#include <stdint.h>

#define SBX_SPAWN_MAGIC	      0x53425831u /* "SBX1" */
#define SBX_SPAWN_NFDS	      6
#define SBX_SPAWN_MAX_MESSAGE (256u * 1024)
#define SBX_SPAWN_MAX_STRINGS 4096

/*
 * "SBX2": the same request with its strings (strings_len bytes, at most
 * SBX_SPAWN_MAX_FD_STRINGS) not in the message, which is the header alone,
 * but in a seventh descriptor, SBX_SPAWN_FD_STRINGS, read from offset 0: a
 * socket's message is bounded by its send buffer (about 208 KiB by default,
 * raised only with CAP_NET_ADMIN), execve's argv and environment by 2 MiB.
 * The server sends SBX1 when the strings fit SBX_SPAWN_INLINE_MAX.
 */
#define SBX_SPAWN_MAGIC_FD	 0x53425832u /* "SBX2" */
#define SBX_SPAWN_FD_STRINGS	 6
#define SBX_SPAWN_NFDS_MAX	 7
#define SBX_SPAWN_MAX_FD_STRINGS (4u << 20)
#define SBX_SPAWN_INLINE_MAX	 (160u * 1024)

enum {
	SBX_SPAWN_FD_CHANNEL,
	SBX_SPAWN_FD_STDIN,
	SBX_SPAWN_FD_STDOUT,
	SBX_SPAWN_FD_STDERR,
	SBX_SPAWN_FD_STATUS,
	SBX_SPAWN_FD_CWD
};

struct sbx_spawn_request {
	uint32_t magic;
	uint32_t argc, envc;	 /* argc >= 1 */
	uint32_t strings_len;	 /* bytes of strings after this header */
	uint32_t cpu_seconds;	 /* RLIMIT_CPU */
	uint32_t max_processes;	 /* RLIMIT_NPROC */
	uint64_t address_space;	 /* RLIMIT_AS, bytes */
	uint64_t max_file_bytes; /* RLIMIT_FSIZE */
	uint32_t flags;		 /* SBX_SPAWN_KEEP_LEFTOVERS */
	uint32_t reserved;	 /* 0 */
};

/*
 * What the child left running when it exited (`server &`) is left alone:
 * only a kill request or the server's going kill the tree. Without it the
 * tree goes as soon as the child exits (tool code: nothing outlives a call).
 * serve's /v1/sandboxes exec sets it, as docker exec leaves them running.
 */
#define SBX_SPAWN_KEEP_LEFTOVERS 1u

enum { SBX_SPAWN_STARTED = 'P', SBX_SPAWN_EXITED = 'X' };
#define SBX_SPAWN_KILL 'K'

struct sbx_spawn_event {
	uint32_t kind;
	int32_t value;
};

/*
 * A reset in place (SANDBOX_REUSE=1, images/init/sandbox-reset.h). The
 * server passes the host's order to PID 1 on SANDBOX_INIT_FD (a
 * SOCK_SEQPACKET end PID 1 gives it alone) as struct sbx_reset_order; PID 1
 * asks the spawner for its half with struct sbx_reset_request on the spawn
 * socket (no descriptors, told apart from a spawn request by its size and
 * magic) and the spawner answers struct sbx_reset_reply.
 */
#define SBX_RESET_MAGIC	     0x52584253u /* "SBXR" */
#define SBX_RESET_DETAIL_MAX 240

struct sbx_reset_order {
	uint32_t magic;
	uint32_t flags;	  /* 0 */
	uint64_t id;	  /* the host's, echoed in the verdict */
	int64_t deadline; /* unix seconds: PID 1's deadline from now on */
};

struct sbx_reset_request {
	uint32_t magic;
	uint32_t flags; /* 0 */
};

struct sbx_reset_reply {
	uint32_t magic;
	uint32_t killed;		   /* kill(-1) rounds that reached a process */
	uint32_t procs_left;		   /* processes of the uid still there at the end */
	uint32_t ipc_removed;		   /* SysV objects */
	uint32_t removed;		   /* directory entries */
	uint32_t left;			   /* unused: 0 */
	char detail[SBX_RESET_DETAIL_MAX]; /* what was found, empty when nothing */
};
