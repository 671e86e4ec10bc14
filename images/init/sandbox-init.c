/* SPDX-License-Identifier: MIT */
/*
 * sandbox-init: PID 1 of a sandbox container.
 *
 * Started as root with CAP_SETUID, CAP_SETGID and CAP_SETPCAP only (and
 * CAP_NET_ADMIN with SANDBOX_NETWORK=published, to set the egress firewall
 * for IPv4 and IPv6 first). Those are needed only to give the agent's tool
 * code a uid of its own: it starts sandbox-spawner as SANDBOX_AGENT_UID
 * (1001, in the server's group for the workspace), with a raised OOM score
 * (and, with CAP_SYS_RESOURCE, one it cannot lower), then drops every capability,
 * the bounding set included, and becomes SANDBOX_UID (1000) before anything
 * else runs. The server (uid 1000) asks the spawner to run tool code, so that
 * code can neither signal, trace nor impersonate it, nor reach its socket
 * directory. Started unprivileged, it runs everything as its own uid (no
 * spawner; the server then forks tool code itself). It starts Xvfb
 * when SANDBOX_DISPLAY is set, LibreOffice Calc on SANDBOX_OPEN once that
 * file exists, and the main program: the command given on its command line,
 * or by default the MCP server on a unix socket. It reaps every zombie,
 * forwards SIGTERM/SIGINT/SIGHUP, and enforces the deadline on its own: when
 * SANDBOX_DEADLINE (unix seconds) or start + SANDBOX_TIMEOUT, plus
 * SANDBOX_GRACE, passes, it stops everything and exits 124, which stops the
 * container even when no host process is left to do it.
 *
 * Only libc; built static so it runs on any base.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_DEADLINE	124
#define EXIT_BAD_CONFIG 125
#define EXIT_CANNOT_RUN 126

#define DEFAULT_GRACE_S	     30
#define STOP_GRACE_MS	     3000 /* SIGTERM to SIGKILL when stopping */
#define OPEN_POLL_MS	     100  /* how often to look for SANDBOX_OPEN */
#define XVFB_READY_MAX_MS    10000
#define OFFICE_MAX_RESTARTS  3
#define XVFB_MAX_RESTARTS    3
#define MAX_DEADLINE_SECONDS (10LL * 365 * 24 * 3600)
#define HTTP_PORT	     "8080" /* --network published: the server's port */

#include "sandbox-reset-pid1.h"

enum { XVFB, OFFICE, MAIN, SPAWNER, N_CHILDREN };
static const char *const child_names[N_CHILDREN] = {"Xvfb", "LibreOffice", "main program",
						    "sandbox-spawner"};

static struct {
	pid_t pid[N_CHILDREN];
	pid_t pgid[N_CHILDREN]; /* kept after the leader exits: its children may live on */
	int xvfb_fd;		/* read end of Xvfb's -displayfd pipe, -1 when not waiting */
	bool display_ready;
	int office_restarts;
	int xvfb_restarts;
	bool stopping;
	bool deadline_passed;
	int exit_code;
	int64_t deadline_ms; /* CLOCK_REALTIME, 0 = none */
	int64_t stop_by_ms;  /* CLOCK_MONOTONIC, when to SIGKILL while stopping */
	int64_t xvfb_by_ms;  /* CLOCK_MONOTONIC, give up waiting for Xvfb */
	const char *display;
	const char *open_path;
	const char *run_dir;
	int64_t grace_ms;
	/* SANDBOX_REUSE=1: resets between episodes (sandbox-reset-pid1.h) */
	int ctl_fd;   /* our end of the server's SANDBOX_INIT_FD, -1 without reuse */
	int spawn_fd; /* kept to ask the spawner for its half, -1 without reuse */
	bool reset_due;
	struct sbx_reset_order order;
	char *const *server_argv;
} st = {.xvfb_fd = -1, .ctl_fd = -1, .spawn_fd = -1};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("sandbox-init: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int64_t now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v && *v ? v : fallback;
}

/* Parses a non-negative decimal integer no larger than max; -1 when invalid. */
static long long parse_seconds(const char *s, long long max)
{
	char *end;
	long long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0 || v > max)
		return -1;
	return v;
}

/* Reads the deadline from the environment. Fails closed: a value that cannot be parsed is fatal. */
static int read_deadline(void)
{
	const char *deadline = getenv("SANDBOX_DEADLINE"), *timeout = getenv("SANDBOX_TIMEOUT");
	long long grace = DEFAULT_GRACE_S, v;

	st.grace_ms = grace * 1000;

	if (getenv("SANDBOX_GRACE")) {
		grace = parse_seconds(getenv("SANDBOX_GRACE"), 24 * 3600);
		if (grace < 0) {
			say("SANDBOX_GRACE='%s' is not a number of seconds",
			    getenv("SANDBOX_GRACE"));
			return -EINVAL;
		}
		st.grace_ms = grace * 1000;
	}
	if (deadline && *deadline) {
		v = parse_seconds(deadline, INT64_MAX / 1000 - MAX_DEADLINE_SECONDS);
		if (v <= 0) {
			say("SANDBOX_DEADLINE='%s' is not a unix time in seconds", deadline);
			return -EINVAL;
		}
		st.deadline_ms = (v + grace) * 1000;
	} else if (timeout && *timeout) {
		v = parse_seconds(timeout, MAX_DEADLINE_SECONDS);
		if (v < 0) {
			say("SANDBOX_TIMEOUT='%s' is not a number of seconds", timeout);
			return -EINVAL;
		}
		st.deadline_ms = now_ms(CLOCK_REALTIME) + (v + grace) * 1000;
	}
	return 0;
}

/* Signals one child's process group (each child leads its own). */
static void signal_child(int i, int sig)
{
	if (st.pgid[i] > 0 && kill(-st.pgid[i], sig) < 0 && st.pid[i] > 0)
		kill(st.pid[i], sig);
}

/*
 * Signals everything we started. As PID 1 of the container, kill(-1) reaches
 * every process in it, including daemons that left their process group; the
 * check keeps a test run on the host from signalling the host.
 */
static void signal_all(int sig)
{
	for (int i = 0; i < N_CHILDREN; i++)
		signal_child(i, sig);
	if (getpid() == 1)
		kill(-1, sig);
}

/* Starts stopping: sig to everything now, SIGKILL after STOP_GRACE_MS. */
static void begin_stop(int code, const char *why, int sig)
{
	if (st.stopping)
		return;
	say("stopping: %s", why);
	st.stopping = true;
	st.exit_code = code;
	st.stop_by_ms = now_ms(CLOCK_MONOTONIC) + STOP_GRACE_MS;
	signal_all(sig);
}

/* Starts child `which` in its own process group; returns its pid or -1. */
static pid_t spawn(int which, char *const argv[], int keep_fd, int keep_fd2,
		   const sigset_t *saved_mask)
{
	pid_t pid = fork();

	if (pid != 0) {
		if (pid < 0) {
			say("cannot start '%s': %s", argv[0], strerror(errno));
			return -1;
		}
		setpgid(pid, pid); /* also here, so a signal right away reaches the group */
		st.pid[which] = st.pgid[which] = pid;
		return pid;
	}
	sigprocmask(SIG_SETMASK, saved_mask, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	setpgid(0, 0);
	if (keep_fd >= 0)
		fcntl(keep_fd, F_SETFD, 0);
	if (keep_fd2 >= 0)
		fcntl(keep_fd2, F_SETFD, 0);
	execvp(argv[0], argv);
	fprintf(stderr, "sandbox-init: cannot run '%s': %s\n", argv[0], strerror(errno));
	_exit(EXIT_CANNOT_RUN);
}

static void mkdir_private(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		say("cannot create '%s': %s", path, strerror(errno));
}

static void start_xvfb(const sigset_t *mask)
{
	int p[2];
	char fdarg[16];
	const char *screen = env_or("SANDBOX_SCREEN", "1280x800x24");

	/* Xvfb wants this root-owned; unprivileged, it only warns, but may not create it. */
	if (mkdir("/tmp/.X11-unix", 01777) == 0)
		chmod("/tmp/.X11-unix", 01777);
	if (pipe2(p, O_CLOEXEC) < 0) {
		say("pipe: %s", strerror(errno));
		return;
	}
	snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
	char *argv[] = {
		"Xvfb",	    (char *)st.display, "-screen", "0", (char *)screen, "-nolisten", "tcp",
		"-noreset", "-displayfd",	fdarg,	   NULL};
	spawn(XVFB, argv, p[1], -1, mask);
	close(p[1]);
	if (st.pid[XVFB] <= 0) {
		close(p[0]);
		return;
	}
	st.xvfb_fd = p[0];
	st.xvfb_by_ms = now_ms(CLOCK_MONOTONIC) + XVFB_READY_MAX_MS;
}

static void xvfb_ready(const char *why)
{
	if (st.xvfb_fd >= 0)
		close(st.xvfb_fd);
	st.xvfb_fd = -1;
	st.display_ready = true;
	if (why)
		say("display %s: %s", st.display, why);
}

/*
 * Debian's launcher itself, not /usr/bin/soffice: that symlink's script finds
 * its directory with `ls -l`, whose statx(AT_NO_AUTOMOUNT) gVisor (runsc
 * 2022) refuses with EINVAL, and then runs a wrong path.
 */
#define OFFICE_PROGRAM "/usr/lib/libreoffice/program/soffice"

static void start_office(const sigset_t *mask)
{
	char profile[PATH_MAX];

	snprintf(profile, sizeof(profile), "-env:UserInstallation=file://%s/office-profile",
		 st.run_dir);
	char *argv[] = {access(OFFICE_PROGRAM, X_OK) == 0 ? OFFICE_PROGRAM : "soffice",
			"--calc",
			"--norestore",
			"--nologo",
			"--nolockcheck",
			"--nofirststartwizard",
			profile,
			(char *)st.open_path,
			NULL};
	spawn(OFFICE, argv, -1, -1, mask);
}

static bool office_wanted(void)
{
	return st.open_path && st.display_ready && !st.stopping &&
	       st.office_restarts <= OFFICE_MAX_RESTARTS;
}

static void child_exited(pid_t pid, int status)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	for (int i = 0; i < N_CHILDREN; i++) {
		if (pid != st.pid[i])
			continue;
		st.pid[i] = 0;
		if (!st.stopping || i == MAIN)
			say("%s (pid %d) exited with %d", child_names[i], (int)pid, code);
		if (i == MAIN && st.order.magic && !st.stopping) {
			st.reset_due = true; /* killed for a reset: started again after it */
		} else if (i == MAIN) {
			begin_stop(code, "the main program exited", SIGTERM);
			if (!st.deadline_passed)
				st.exit_code = code;
		} else if (i == XVFB) {
			if (st.xvfb_fd >= 0)
				xvfb_ready(NULL);
			st.display_ready = false;
		} else if (i == OFFICE) {
			st.office_restarts++;
		}
	}
}

static void reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		child_exited(pid, status);
}

/* True when no child is left, orphans that re-parented to us included (peeks, reaps nothing). */
static bool all_children_gone(void)
{
	siginfo_t si;

	for (int i = 0; i < N_CHILDREN; i++)
		if (st.pid[i] > 0)
			return false;
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD;
}

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

/*
 * Starts the server (again, after a reset). With SANDBOX_REUSE its
 * SANDBOX_INIT_FD is a fresh socketpair's end: the way it passes a reset
 * order on to us.
 */
static void start_server(int spawn_fd, const sigset_t *mask)
{
	static char init_env[16];
	int ctl[2] = {-1, -1};

	if (st.spawn_fd >= 0) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0) {
			say("socketpair: %s", strerror(errno));
			return;
		}
		snprintf(init_env, sizeof(init_env), "%d", ctl[1]);
		setenv("SANDBOX_INIT_FD", init_env, 1);
		st.ctl_fd = ctl[0];
	}
	spawn(MAIN, st.server_argv, spawn_fd, ctl[1], mask);
	unsetenv("SANDBOX_INIT_FD");
	if (ctl[1] >= 0)
		close(ctl[1]);
}

/* An order from the server: checked, then the server's group killed (fresh state). */
static void read_order(void)
{
	struct sbx_reset_order o;
	ssize_t n = recv(st.ctl_fd, &o, sizeof(o), MSG_DONTWAIT);
	int64_t now = now_ms(CLOCK_REALTIME) / 1000;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(st.ctl_fd); /* the server is gone */
		st.ctl_fd = -1;
		return;
	}
	if (n != (ssize_t)sizeof(o) || o.magic != SBX_RESET_MAGIC || o.deadline <= now ||
	    o.deadline > now + MAX_DEADLINE_SECONDS || st.stopping) {
		say("a reset order that is not one: ignored");
		return;
	}
	st.order = o;
	signal_child(MAIN, SIGKILL);
}

/* The old server is gone: reset (sandbox-reset-pid1.h), say how it went, start a new one. */
static void run_reset(const char *workspace, const sigset_t *mask)
{
	char path[PATH_MAX], home[PATH_MAX];
	reset_result r;

	if (st.ctl_fd >= 0)
		close(st.ctl_fd);
	st.ctl_fd = -1;
	st.reset_due = false;
	reset_run(&r, st.spawn_fd, st.pid[SPAWNER], workspace, st.run_dir, reap);
	snprintf(home, sizeof(home), "%s/home", st.run_dir);
	mkdir_private(home);
	snprintf(path, sizeof(path), "%s/reset.json", st.run_dir);
	if (reset_write(&r, st.order.id, path) < 0)
		say("reset %llu: cannot write %s", (unsigned long long)st.order.id, path);
	say("reset %llu: %s%s%s (%.1f ms)", (unsigned long long)st.order.id,
	    r.clean ? "clean" : "dirty", r.clean ? "" : ": ", r.found,
	    r.ms_kill + r.ms_agent + r.ms_clean + r.ms_verify);
	st.deadline_ms = st.order.deadline * 1000 + st.grace_ms;
	st.order.magic = 0;
	if (st.pid[SPAWNER] <= 0) {
		begin_stop(EXIT_CANNOT_RUN, "the spawner is gone", SIGTERM);
		return;
	}
	start_server(st.spawn_fd, mask);
}

static void usage(void)
{
	puts("Usage: sandbox-init [--] [COMMAND [ARG...]]\n"
	     "PID 1 of a sandbox: starts Xvfb, LibreOffice and the main program (COMMAND, or\n"
	     "sandbox-mcp on a unix socket), reaps zombies, forwards signals, enforces the "
	     "deadline.\n\n"
	     "Environment:\n"
	     "  SANDBOX_DEADLINE   unix time (s) the task ends; the sandbox stops at "
	     "DEADLINE+GRACE\n"
	     "  SANDBOX_TIMEOUT    seconds from start, used when SANDBOX_DEADLINE is unset\n"
	     "  SANDBOX_GRACE      seconds after the deadline before stopping (default 30)\n"
	     "  SANDBOX_DISPLAY    start Xvfb on this display (e.g. :99); empty: no display\n"
	     "  SANDBOX_SCREEN     Xvfb screen, default 1280x800x24\n"
	     "  SANDBOX_OPEN       file LibreOffice Calc opens once it exists (needs a display)\n"
	     "  SANDBOX_WORKSPACE  workspace directory, default /workspace\n"
	     "  SANDBOX_RUN_DIR    socket, ready/status files, profiles; default /tmp/sandbox\n"
	     "  SANDBOX_SOCKET     the server's unix socket, default $SANDBOX_RUN_DIR/mcp.sock\n"
	     "  SANDBOX_NETWORK    none (default) or published: as root, drop egress (IPv4,\n"
	     "                     IPv6) with iptables, drop every capability, serve HTTP on\n"
	     "                     0.0.0.0:" HTTP_PORT " besides the socket (the host's door)\n"
	     "  SANDBOX_HTTP_TOKEN published: the token that port requires; given to the\n"
	     "                     server alone (no other child inherits it)\n"
	     "  SANDBOX_REUSE      1: serve several episodes, reset in between on the\n"
	     "                     server's order (POST /control/reset; no display)\n\n"
	     "Exit status: the main program's (128+N for signal N), 124 when the deadline\n"
	     "passed, 125 for a bad setting, 126 when a program cannot start.");
}

int main(int argc, char **argv)
{
	static char sock_path[PATH_MAX], ready_path[PATH_MAX], status_path[PATH_MAX];
	static char home[PATH_MAX], spawn_env[16], http_token[80];
	sigset_t mask, saved;
	bool published;
	int sfd, r, spawn_fd;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--") == 0) {
		argv++;
		argc--;
	}
	r = setup_network(&published);
	if (r < 0)
		return r == -EINVAL ? EXIT_BAD_CONFIG : EXIT_CANNOT_RUN;
	/* The published port's token is the server's alone: no other child inherits it. */
	if (getenv("SANDBOX_HTTP_TOKEN"))
		snprintf(http_token, sizeof(http_token), "%s", getenv("SANDBOX_HTTP_TOKEN"));
	unsetenv("SANDBOX_HTTP_TOKEN");
	if (read_deadline() < 0)
		return EXIT_BAD_CONFIG;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &mask, &saved) < 0 ||
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		say("signalfd: %s", strerror(errno));
		return EXIT_CANNOT_RUN;
	}
	sigdelset(&saved, SIGPIPE);

	if (start_spawner(&saved, &spawn_fd) < 0 || drop_root() < 0)
		return EXIT_CANNOT_RUN;
	if (spawn_fd >= 0) {
		snprintf(spawn_env, sizeof(spawn_env), "%d", spawn_fd);
		setenv("SANDBOX_SPAWN_FD", spawn_env, 1);
		say("tool code runs as uid %s, the server as uid %d; every capability dropped "
		    "(bounding set included)",
		    env_or("SANDBOX_AGENT_UID", "1001"), (int)getuid());
		say("kernel %s, seccomp mode %d: verified %s", caps_kernel, caps_seccomp,
		    caps_verified);
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	/* The workspace is shared with the agent's uid through the group. */
	umask(002);

	st.run_dir = env_or("SANDBOX_RUN_DIR", "/tmp/sandbox");
	st.display = env_or("SANDBOX_DISPLAY", NULL);
	st.open_path = env_or("SANDBOX_OPEN", NULL);
	mkdir_private(st.run_dir);
	/* The root filesystem is read-only: programs that want a home get one on the tmpfs. */
	snprintf(home, sizeof(home), "%s/home", st.run_dir);
	mkdir_private(home);
	setenv("HOME", home, 1);
	if (st.display) {
		setenv("DISPLAY", st.display, 1);
		start_xvfb(&saved);
	} else if (st.open_path) {
		say("SANDBOX_OPEN is set but SANDBOX_DISPLAY is not: not starting LibreOffice");
	}

	if (argc > 1) {
		spawn(MAIN, argv + 1, spawn_fd, -1, &saved);
	} else {
		const char *ws = env_or("SANDBOX_WORKSPACE", "/workspace");
		const char *sock = env_or("SANDBOX_SOCKET", NULL);

		if (!sock) {
			snprintf(sock_path, sizeof(sock_path), "%s/mcp.sock", st.run_dir);
			sock = sock_path;
		}
		snprintf(ready_path, sizeof(ready_path), "%s/ready", st.run_dir);
		snprintf(status_path, sizeof(status_path), "%s/status.json", st.run_dir);
		static char *server[16];
		int n = 0;

		server[n++] = "sandbox-mcp";
		server[n++] = "--workspace";
		server[n++] = (char *)ws;
		/* The host's door, in every mode: /control is served only there. */
		server[n++] = "--unix";
		server[n++] = (char *)sock;
		if (published) {
			/* The port is bound on the host's loopback, and nothing leaves; the
			 * server refuses to serve it without the run's token. */
			server[n++] = "--http";
			server[n++] = "0.0.0.0:" HTTP_PORT;
			server[n++] = "--listen-any";
			if (http_token[0])
				setenv("SANDBOX_HTTP_TOKEN", http_token, 1);
		}
		server[n++] = "--ready-file";
		server[n++] = ready_path;
		server[n++] = "--status-file";
		server[n++] = status_path;
		if (st.display) {
			server[n++] = "--display";
			server[n++] = (char *)st.display;
		}
		server[n] = NULL;
		/* setgid: what either uid creates there stays in the shared group. */
		if (spawn_fd >= 0 && chmod(ws, 02775) < 0)
			say("cannot share '%s' with the agent's uid: %s", ws, strerror(errno));
		st.server_argv = server;
		/* Reuse keeps the spawner's socket: the spawner then outlives a server. */
		if (spawn_fd >= 0 && !st.display && strcmp(env_or("SANDBOX_REUSE", "0"), "1") == 0)
			st.spawn_fd = spawn_fd;
		start_server(spawn_fd, &saved);
		unsetenv("SANDBOX_HTTP_TOKEN");
		explicit_bzero(http_token, sizeof(http_token));
	}
	if (spawn_fd >= 0 && st.spawn_fd < 0)
		close(spawn_fd); /* the server's now; the spawner exits when the server does */
	if (st.pid[MAIN] <= 0)
		return EXIT_CANNOT_RUN;

	for (;;) {
		int64_t mono = now_ms(CLOCK_MONOTONIC), timeout = -1;
		struct pollfd fds[3] = {{.fd = sfd, .events = POLLIN},
					{.fd = -1},
					{.fd = st.ctl_fd, .events = POLLIN}};
		struct signalfd_siginfo si;

		/* A stop already under way (the main program ended, a signal) keeps its status. */
		if (st.deadline_ms && !st.stopping && now_ms(CLOCK_REALTIME) >= st.deadline_ms) {
			st.deadline_passed = true;
			begin_stop(EXIT_DEADLINE, "the deadline passed", SIGTERM);
		}
		if (st.stopping) {
			if (all_children_gone())
				break;
			if (mono >= st.stop_by_ms) {
				signal_all(SIGKILL);
				reap();
				if (all_children_gone() || mono >= st.stop_by_ms + 1000)
					break;
			}
		}
		/* Slow (a loaded host): say so once and keep waiting. Closing the pipe
		 * would kill Xvfb: it treats a failed write of its display number as fatal. */
		if (st.xvfb_fd >= 0 && st.xvfb_by_ms && mono >= st.xvfb_by_ms) {
			say("display %s: not ready after %d ms; still waiting", st.display,
			    XVFB_READY_MAX_MS);
			st.xvfb_by_ms = 0;
		}
		/* Xvfb sometimes dies starting ("Cannot write display number"): once more. */
		if (st.display && !st.stopping && st.pid[XVFB] == 0 && st.xvfb_fd < 0 &&
		    !st.display_ready && st.xvfb_restarts < XVFB_MAX_RESTARTS) {
			st.xvfb_restarts++;
			say("starting Xvfb again (%d of %d)", st.xvfb_restarts, XVFB_MAX_RESTARTS);
			start_xvfb(&saved);
		}
		if (office_wanted() && st.pid[OFFICE] == 0) {
			if (access(st.open_path, F_OK) == 0)
				start_office(&saved);
			else
				timeout = OPEN_POLL_MS;
		}

		if (st.stopping)
			timeout = st.stop_by_ms > mono ? st.stop_by_ms - mono : 100;
		if (st.deadline_ms && !st.stopping) {
			int64_t left = st.deadline_ms - now_ms(CLOCK_REALTIME);

			if (timeout < 0 || left < timeout)
				timeout = left > 0 ? (left < INT_MAX ? left : INT_MAX) : 0;
		}
		if (st.xvfb_fd >= 0) {
			int64_t left = st.xvfb_by_ms - mono;

			fds[1].fd = st.xvfb_fd;
			fds[1].events = POLLIN;
			if (st.xvfb_by_ms && (timeout < 0 || left < timeout))
				timeout = left > 0 ? left : 0;
		}
		if (poll(fds, 3, (int)timeout) < 0 && errno != EINTR) {
			say("poll: %s", strerror(errno));
			begin_stop(EXIT_CANNOT_RUN, "internal error", SIGTERM);
		}
		if (fds[1].revents) {
			char buf[32];
			ssize_t n = read(st.xvfb_fd, buf, sizeof(buf) - 1);

			/* Xvfb writes the display number once it accepts connections. */
			if (n > 0) {
				xvfb_ready(NULL);
			} else if (n == 0) {
				xvfb_ready("Xvfb closed its ready pipe");
				st.display_ready = false;
			}
		}
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			switch (si.ssi_signo) {
			case SIGCHLD:
				break;
			case SIGPIPE:
				break;
			default:
				if (st.stopping) {
					signal_all((int)si.ssi_signo);
				} else {
					/* The main program's own exit status wins when it exits. */
					begin_stop(128 + (int)si.ssi_signo,
						   strsignal((int)si.ssi_signo), (int)si.ssi_signo);
				}
			}
		}
		if (fds[2].revents && st.ctl_fd >= 0)
			read_order();
		reap();
		if (st.reset_due && !st.stopping)
			run_reset(env_or("SANDBOX_WORKSPACE", "/workspace"), &saved);
	}
	return st.exit_code;
}
