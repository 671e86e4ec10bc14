/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Resetting a sandbox in place between two episodes (issue 28), shared by
 * PID 1 (uid 1000) and sandbox-spawner (the agent's uid, 1001): each kills
 * every process of its own uid, removes the SysV IPC objects and POSIX
 * message queues it may, and empties the writable places as far as it may;
 * PID 1 then checks the result (reset_verify): no process but itself and the
 * spawner, the writable places as the image has them, no IPC. Only libc;
 * static functions, included by both programs.
 *
 * The wire structs are in spawn-protocol.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "spawn-protocol.h"

#define RESET_DEPTH_MAX	  48 /* deeper subtrees are moved up and removed next pass */
#define RESET_PASSES_MAX  64
#define RESET_KILL_ROUNDS 400 /* 0.25 ms apart: 100 ms */
#define RESET_DETAIL_MAX  SBX_RESET_DETAIL_MAX

/* The writable places an agent reaches: emptied, then checked empty. */
static const char *const reset_places[] = {"/tmp", "/dev/shm", "/dev/mqueue"};

static void reset_note(char *detail, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reset_note(char *detail, const char *fmt, ...)
{
	size_t n = strlen(detail);
	va_list ap;

	if (n + 3 >= RESET_DETAIL_MAX)
		return;
	if (n) {
		memcpy(detail + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(detail + n, RESET_DETAIL_MAX - n, fmt, ap);
	va_end(ap);
}

/*
 * Processes of uid (any uid: any_uid) but the caller, PID 1 and keep2,
 * counted, and with kill_them sent SIGKILL one by one. Zombies are not
 * counted (their parent reaps them), nor processes whose parent is outside
 * the container (PPid 0: the host's docker execs, the bridges carrying its
 * streams; tool code cannot make one). first: one of them, described.
 */
static int reset_scan(uid_t uid, bool any_uid, pid_t keep2, bool kill_them, char *first,
		      size_t first_len)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[64], buf[1024];
		long pid = strtol(de->d_name, NULL, 10);
		unsigned long ru = 0, eu = 0;
		long ppid = -1;
		ssize_t len;
		int fd;

		if (pid <= 1 || pid == getpid() || pid == keep2)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/status", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		const char *state = strstr(buf, "\nState:\t"), *uids = strstr(buf, "\nUid:\t");
		const char *pp = strstr(buf, "\nPPid:\t");

		if (!state || !uids || !pp || sscanf(uids, "\nUid:\t%lu\t%lu", &ru, &eu) != 2 ||
		    sscanf(pp, "\nPPid:\t%ld", &ppid) != 1)
			continue;
		if (state[8] == 'Z' || state[8] == 'X' || ppid == 0)
			continue;
		if (!any_uid && ru != uid && eu != uid)
			continue;
		if (kill_them)
			kill((pid_t)pid, SIGKILL);
		if (n++ == 0 && first) {
			char comm[32] = "";

			sscanf(buf, "Name:\t%31s", comm);
			snprintf(first, first_len, "pid %ld (%s) uid %lu", pid, comm, ru);
		}
	}
	closedir(d);
	return n;
}

/*
 * Kills every process of our uid but ourselves (double-forked, setsid,
 * stopped, SIGTERM-ignoring alike: SIGKILL is neither caught nor held by a
 * stop), again until none is left. The agent's uid has no exec of the
 * host's: kill(-1) reaches all at once. The server's uid (PID 1) spares the
 * host's execs, so it signals what it finds one by one.
 */
static void reset_kill_uid(struct sbx_reset_reply *rp, pid_t keep2, bool all_at_once)
{
	for (int i = 0; i < RESET_KILL_ROUNDS; i++) {
		int n;

		if (all_at_once && kill(-1, SIGKILL) == 0)
			rp->killed++;
		n = reset_scan(geteuid(), false, keep2, !all_at_once, NULL, 0);
		if (!all_at_once && n > 0)
			rp->killed++;
		if (!all_at_once && n > 0)
			n = reset_scan(geteuid(), false, keep2, false, NULL, 0);
		rp->procs_left = n > 0 ? (uint32_t)n : 0;
		if (n <= 0)
			return;
		nanosleep(&(struct timespec){0, 250000}, NULL);
	}
}

/* The ids in a /proc/sysvipc table (second column), at most max. */
static int reset_ipc_ids(const char *table, int *ids, int max)
{
	FILE *f = fopen(table, "re");
	char line[512];
	int n = 0;

	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f)) /* the header */
		while (n < max && fgets(line, sizeof(line), f)) {
			long key, id;

			if (sscanf(line, "%ld %ld", &key, &id) == 2)
				ids[n++] = (int)id;
		}
	fclose(f);
	return n;
}

/* Removes every SysV object this uid may; returns how many are left. */
static int reset_ipc(struct sbx_reset_reply *rp)
{
	static const char *const tables[] = {"/proc/sysvipc/shm", "/proc/sysvipc/sem",
					     "/proc/sysvipc/msg"};
	int ids[256], left = 0;

	for (int t = 0; t < 3; t++) {
		int n = reset_ipc_ids(tables[t], ids, 256);

		for (int i = 0; i < n; i++) {
			int r = t == 0	 ? shmctl(ids[i], IPC_RMID, NULL)
				: t == 1 ? semctl(ids[i], 0, IPC_RMID)
					 : msgctl(ids[i], IPC_RMID, NULL);
			if (r == 0)
				rp->ipc_removed++;
		}
		left += reset_ipc_ids(tables[t], ids, 256);
	}
	return left;
}

/*
 * Removes what it can beneath dirfd (closed here). Deeper than
 * RESET_DEPTH_MAX, a subtree is moved up to root_fd and left for the next
 * pass, so no depth exhausts the descriptors. Returns 1 when something was
 * moved up (another pass needed).
 */
static int reset_empty(int dirfd, int root_fd, int depth, struct sbx_reset_reply *rp)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int more = 0;

	if (!d) {
		close(dirfd);
		return 0;
	}
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		struct stat st;

		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		if (unlinkat(dirfd, n, 0) == 0) {
			rp->removed++;
			continue;
		}
		if (fstatat(dirfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (depth >= RESET_DEPTH_MAX) {
			char up[64];

			snprintf(up, sizeof(up), ".sbx-reset-%d-%ld", depth, (long)rp->removed);
			if (renameat(dirfd, n, root_fd, up) == 0)
				more = 1;
			continue;
		}
		/* Our own directory made unreadable (chmod 000): ours to open again. */
		if (st.st_uid == geteuid())
			fchmodat(dirfd, n, 0700, 0);
		int sub = openat(dirfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (sub >= 0)
			more |= reset_empty(sub, root_fd, depth + 1, rp);
		if (unlinkat(dirfd, n, AT_REMOVEDIR) == 0)
			rp->removed++;
	}
	closedir(d);
	return more;
}

/* Empties path as far as this uid may, in passes until nothing moves up. */
static void reset_empty_place(const char *path, struct sbx_reset_reply *rp)
{
	for (int pass = 0; pass < RESET_PASSES_MAX; pass++) {
		int root = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int dirfd = root >= 0 ? fcntl(root, F_DUPFD_CLOEXEC, 3) : -1;
		int more;

		if (dirfd < 0) {
			if (root >= 0)
				close(root);
			return;
		}
		more = reset_empty(dirfd, root, 0, rp);
		close(root);
		if (!more)
			return;
	}
}
