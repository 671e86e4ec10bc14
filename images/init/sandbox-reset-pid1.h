/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * PID 1's half of a reset (sandbox-reset.h has what both halves share):
 * with the old server killed, its uid's leftovers killed, the spawner asked
 * to clear the agent's uid, the rest emptied, then everything checked. The
 * verdict goes to RUN_DIR/reset.json, which the next server serves
 * (GET /control/reset): the host serves no episode on a sandbox whose last
 * reset was not clean.
 */
#include <poll.h>
#include <sys/socket.h>

#include "sandbox-reset.h"

#define RESET_SPAWNER_WAIT_MS 3000

typedef struct reset_result {
	bool clean;
	struct sbx_reset_reply mine, agent;
	char found[RESET_DETAIL_MAX];
	double ms_kill, ms_agent, ms_clean, ms_verify;
} reset_result;

static double reset_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Entries beneath path (not path itself), at most 1000 counted; the first one in first. */
static int reset_count_entries(const char *path, const char *const *allowed, char *first,
			       size_t first_len)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < 1000) {
		bool ok = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;

		for (int i = 0; allowed && allowed[i] && !ok; i++)
			ok = strcmp(de->d_name, allowed[i]) == 0;
		if (ok)
			continue;
		if (n++ == 0 && first &&
		    snprintf(first, first_len, "%s/%s", path, de->d_name) >= (int)first_len)
			memcpy(first + first_len - 4, "...", 4);
	}
	closedir(d);
	return n;
}

/* Asks the spawner (the agent's uid) for its half; false when it did not answer. */
static bool reset_ask_spawner(int fd, struct sbx_reset_reply *rp)
{
	struct sbx_reset_request rq = {SBX_RESET_MAGIC, 0};
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (fd < 0 || send(fd, &rq, sizeof(rq), MSG_NOSIGNAL) != (ssize_t)sizeof(rq))
		return false;
	if (poll(&p, 1, RESET_SPAWNER_WAIT_MS) != 1)
		return false;
	return recv(fd, rp, sizeof(*rp), 0) == (ssize_t)sizeof(*rp) && rp->magic == SBX_RESET_MAGIC;
}

/* What is left that should not be: one line per kind into r->found; false when anything is. */
static bool reset_verify(reset_result *r, const char *workspace, const char *run_dir, pid_t spawner)
{
	static const char *const tmp_allowed[] = {"agent", "sandbox", NULL};
	static const char *const tables[] = {"/proc/sysvipc/shm", "/proc/sysvipc/sem",
					     "/proc/sysvipc/msg"};
	char first[160] = "";
	int ids[4], n;
	bool ok = true;

	n = reset_scan(0, true, spawner, false, first, sizeof(first));
	if (n != 0) {
		reset_note(r->found, "%s: %d process(es) left", n < 0 ? "cannot read /proc" : first,
			   n);
		ok = false;
	}
	for (int t = 0; t < 3; t++)
		if (reset_ipc_ids(tables[t], ids, 4) > 0) {
			reset_note(r->found, "%s not empty", tables[t]);
			ok = false;
		}
	const char *places[] = {workspace, run_dir, "/tmp", "/dev/shm", "/dev/mqueue"};

	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		n = reset_count_entries(places[i],
					strcmp(places[i], "/tmp") == 0 ? tmp_allowed : NULL, first,
					sizeof(first));
		if (n > 0) {
			reset_note(r->found, "%s: %d entr(ies) left", first, n);
			ok = false;
		}
	}
	if (r->agent.magic != SBX_RESET_MAGIC) {
		reset_note(r->found, "the spawner did not answer");
		ok = false;
	} else if (r->agent.procs_left || r->agent.detail[0]) {
		reset_note(r->found, "the spawner: %s",
			   r->agent.detail[0] ? r->agent.detail : "processes left");
		ok = false;
	}
	return ok;
}

/*
 * The whole reset, the old server already gone. reap is PID 1's own
 * (zombies of what was killed are its children).
 */
static void reset_run(reset_result *r, int spawn_fd, pid_t spawner, const char *workspace,
		      const char *run_dir, void (*reap)(void))
{
	double t = reset_ms(), t2;

	memset(r, 0, sizeof(*r));
	reset_kill_uid(&r->mine, spawner, false); /* the old server's uid: its leftovers */
	reap();
	t2 = reset_ms();
	r->ms_kill = t2 - t;
	if (!reset_ask_spawner(spawn_fd, &r->agent))
		r->agent.magic = 0;
	t = reset_ms();
	r->ms_agent = t - t2;
	reset_ipc(&r->mine);
	reset_empty_place(workspace, &r->mine);
	reset_empty_place(run_dir, &r->mine);
	for (size_t i = 0; i < sizeof(reset_places) / sizeof(reset_places[0]); i++)
		reset_empty_place(reset_places[i], &r->mine);
	t2 = reset_ms();
	r->ms_clean = t2 - t;
	/* Zombies of the killed are reaped first; a little time for the kernel's exit path. */
	for (int i = 0; i < 40; i++) {
		reap();
		r->found[0] = '\0';
		r->clean = reset_verify(r, workspace, run_dir, spawner);
		if (r->clean)
			break;
		nanosleep(&(struct timespec){0, 500000}, NULL);
	}
	r->ms_verify = reset_ms() - t2;
}

/* The verdict as JSON for the next server (escaping: the notes hold paths). */
static int reset_write(const reset_result *r, uint64_t id, const char *path)
{
	char json[1024], esc[2 * RESET_DETAIL_MAX], tmp[4096];
	size_t k = 0;
	int fd, n;

	for (const char *s = r->found; *s && k + 7 < sizeof(esc); s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			esc[k++] = '\\';
		if (c < 0x20)
			k += (size_t)snprintf(esc + k, sizeof(esc) - k, "\\u%04x", c);
		else
			esc[k++] = (char)c;
	}
	esc[k] = '\0';
	n = snprintf(json, sizeof(json),
		     "{\"reset\":%llu,\"clean\":%s,\"found\":\"%s\",\"killed_rounds\":%u,"
		     "\"agent_killed_rounds\":%u,\"ipc_removed\":%u,\"entries_removed\":%u,"
		     "\"ms\":{\"kill\":%.2f,\"agent\":%.2f,\"clean\":%.2f,\"verify\":%.2f}}\n",
		     (unsigned long long)id, r->clean ? "true" : "false", esc, r->mine.killed,
		     r->agent.killed, r->mine.ipc_removed + r->agent.ipc_removed,
		     r->mine.removed + r->agent.removed, r->ms_kill, r->ms_agent, r->ms_clean,
		     r->ms_verify);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, json, (size_t)n) != n || close(fd) < 0 || rename(tmp, path) < 0)
		return -EIO;
	return 0;
}
