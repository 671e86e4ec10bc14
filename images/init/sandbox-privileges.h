/* SPDX-License-Identifier: MIT */
/*
 * sandbox-init's privileges: the firewall while still root, the spawner
 * started as the agent's uid, then every capability dropped and the drop
 * verified (sandbox-caps.h). Included by sandbox-init.c only (built as one
 * file, static, libc only), after its state (st) and say().
 */
#pragma once

#include "sandbox-firewall.h"
#include "sandbox-caps.h"

/* What the last drop_to verified, for the log: "Linux" or "gVisor", how, and the seccomp mode. */
static const char *caps_kernel, *caps_verified;
static int caps_seccomp;

static long long uid_from_env(const char *name, const char *fallback)
{
	long long uid = parse_seconds(env_or(name, fallback), INT_MAX);

	if (uid <= 0)
		say("%s must be a non-zero uid", name);
	return uid;
}

/*
 * Becomes uid (group uid, plus the supplementary group extra_gid when >= 0)
 * with no capability left in any set: bounding first (needs CAP_SETPCAP),
 * ambient, then groups and ids (the kernel clears the permitted and
 * effective sets), inheritable last. Verified, not assumed, by what the
 * kernel (Linux or gVisor) answers: sandbox-caps.h.
 */
static int drop_to(long long uid, long long extra_gid)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	gid_t groups[1] = {(gid_t)extra_gid};

	for (int c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) {
			say("cannot drop capability %d from the bounding set: %s", c,
			    strerror(errno));
			return -EPERM;
		}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (setgroups(extra_gid >= 0 ? 1 : 0, groups) < 0 || setgid((gid_t)uid) < 0 ||
	    setuid((uid_t)uid) < 0) {
		say("cannot drop to uid %lld (%s); refusing to run", uid, strerror(errno));
		return -EPERM;
	}
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) < 0 ||
	    !capabilities_empty(&caps_kernel, &caps_verified, &caps_seccomp) || getuid() == 0) {
		say("capabilities are left after dropping them; refusing to run");
		return -EPERM;
	}
	return 0;
}

/* PID 1 itself: SANDBOX_UID, nothing left. A no-op when started unprivileged. */
static int drop_root(void)
{
	long long uid = uid_from_env("SANDBOX_UID", "1000");

	if (geteuid() != 0)
		return 0;
	return uid <= 0 ? -EINVAL : drop_to(uid, -1);
}

static void write_oom_score_adj(const char *value)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	/* Raising needs nothing; lowering needs CAP_SYS_RESOURCE. */
	if (fd < 0 || write(fd, value, strlen(value)) < 0)
		say("oom_score_adj %s: %s", value, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/*
 * sandbox-spawner as the agent's uid, on one end of a socketpair; *fd is the
 * server's end (for SANDBOX_SPAWN_FD), or -1 when started unprivileged (no
 * spawner). Returns 0, or -EPERM when it cannot be done. Its OOM score is raised (+500, inherited
 * by tool code), so under memory pressure tool code dies before the server. With CAP_SYS_RESOURCE
 * the raise is written while privileged, which also makes it the lowest the
 * agent may set, and PID 1 lowers its own (and its other children's) score;
 * without it the agent may lower its score back to the server's, not below.
 */
static int start_spawner(const sigset_t *mask, int *fd)
{
	long long agent = uid_from_env("SANDBOX_AGENT_UID", "1001");
	long long server = uid_from_env("SANDBOX_UID", "1000");
	char fdarg[16];
	int sp[2];
	pid_t pid;

	*fd = -1;
	/* Only as a container's PID 1: never a host's users. */
	if (geteuid() != 0 || getpid() != 1)
		return 0;
	if (agent <= 0 || server <= 0 || agent == server) {
		say("SANDBOX_AGENT_UID must differ from SANDBOX_UID");
		return -EPERM;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		say("socketpair: %s", strerror(errno));
		return -EPERM;
	}
	pid = fork();
	if (pid < 0) {
		say("cannot start sandbox-spawner: %s", strerror(errno));
		return -EPERM;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, mask, NULL);
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		write_oom_score_adj("500");
		if (drop_to(agent, server) < 0)
			_exit(EXIT_CANNOT_RUN);
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		fcntl(sp[1], F_SETFD, 0);
		snprintf(fdarg, sizeof(fdarg), "%d", sp[1]);
		execlp("sandbox-spawner", "sandbox-spawner", fdarg, "/tmp/agent", (char *)NULL);
		fprintf(stderr, "sandbox-init: cannot run sandbox-spawner: %s\n", strerror(errno));
		_exit(EXIT_CANNOT_RUN);
	}
	setpgid(pid, pid);
	st.pid[SPAWNER] = st.pgid[SPAWNER] = pid;
	close(sp[1]);
	if (prctl(PR_CAPBSET_READ, CAP_SYS_RESOURCE, 0, 0, 0) == 1)
		write_oom_score_adj("-500");
	*fd = sp[0];
	return 0;
}

/*
 * SANDBOX_NETWORK=published: the firewall for IPv4 and IPv6 while still root,
 * then every capability dropped. Fails closed: no firewall, no server.
 */
static int setup_network(bool *published)
{
	const char *mode = env_or("SANDBOX_NETWORK", "none");

	*published = strcmp(mode, "published") == 0;
	if (!*published) {
		if (strcmp(mode, "none") != 0) {
			say("SANDBOX_NETWORK='%s': expected 'none' or 'published'", mode);
			return -EINVAL;
		}
		return 0;
	}
	/* Only as a container's PID 1, in its own network namespace: never the host's rules. */
	if (getpid() != 1 || geteuid() != 0) {
		say("SANDBOX_NETWORK=published needs PID 1 of a container, root with "
		    "CAP_NET_ADMIN, to set the firewall; refusing to run");
		return -EPERM;
	}
	if (restore_rules("iptables-restore", true) < 0 ||
	    restore_rules("ip6tables-restore", false) < 0) {
		say("cannot drop egress; refusing to run");
		return -EPERM;
	}
	say("network published: egress dropped (IPv4, IPv6)");
	return 0;
}
