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

#include "sandbox-supervise.h"
#include "sandbox-privileges.h"

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

/*
 * The settings from the environment that can be wrong: the network mode
 * (with its firewall), the deadline. The published port's token moves into
 * http_token: the server's alone, no other child inherits it. Returns 0 or
 * the exit code.
 */
static int configure(bool *published, char *http_token, size_t size)
{
	int r = setup_network(published);

	if (r < 0)
		return r == -EINVAL ? EXIT_BAD_CONFIG : EXIT_CANNOT_RUN;
	if (getenv("SANDBOX_HTTP_TOKEN"))
		snprintf(http_token, size, "%s", getenv("SANDBOX_HTTP_TOKEN"));
	unsetenv("SANDBOX_HTTP_TOKEN");
	if (read_deadline() < 0)
		return EXIT_BAD_CONFIG;
	return 0;
}

/* The signals we handle, blocked and read from a signalfd (returned; -1 said); *saved: the mask
 * before. */
static int block_signals(sigset_t *saved)
{
	sigset_t mask;
	int sfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &mask, saved) < 0 ||
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		say("signalfd: %s", strerror(errno));
		return -1;
	}
	sigdelset(saved, SIGPIPE);
	return sfd;
}

/* The spawner started (*spawn_fd: the server's end, or -1), then root given up; -1 when not. */
static int drop_privileges(const sigset_t *saved, int *spawn_fd)
{
	static char spawn_env[16];

	if (start_spawner(saved, spawn_fd) < 0 || drop_root() < 0)
		return -1;
	if (*spawn_fd >= 0) {
		snprintf(spawn_env, sizeof(spawn_env), "%d", *spawn_fd);
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
	return 0;
}

/* The run directory and a home in it; the display, when there is one. */
static void prepare_run_dir(const sigset_t *saved)
{
	static char home[PATH_MAX];

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
		start_xvfb(saved);
	} else if (st.open_path) {
		say("SANDBOX_OPEN is set but SANDBOX_DISPLAY is not: not starting LibreOffice");
	}
}

/* No command given: the MCP server, with http_token (wiped here) when published. */
static void start_default_server(int spawn_fd, bool published, char *http_token, size_t size,
				 const sigset_t *saved)
{
	static char sock_path[PATH_MAX], ready_path[PATH_MAX], status_path[PATH_MAX];
	static char *server[16];
	const char *ws = env_or("SANDBOX_WORKSPACE", "/workspace");
	const char *sock = env_or("SANDBOX_SOCKET", NULL);
	int n = 0;

	if (!sock) {
		snprintf(sock_path, sizeof(sock_path), "%s/mcp.sock", st.run_dir);
		sock = sock_path;
	}
	snprintf(ready_path, sizeof(ready_path), "%s/ready", st.run_dir);
	snprintf(status_path, sizeof(status_path), "%s/status.json", st.run_dir);
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
	start_server(spawn_fd, saved);
	unsetenv("SANDBOX_HTTP_TOKEN");
	explicit_bzero(http_token, size);
}

/* Until everything is stopped: the deadline, the display, signals, reset orders, zombies. */
static int supervise(int sfd, const sigset_t *saved)
{
	for (;;) {
		int64_t mono = now_ms(CLOCK_MONOTONIC), timeout = -1;
		struct pollfd fds[3] = {{.fd = sfd, .events = POLLIN},
					{.fd = -1},
					{.fd = st.ctl_fd, .events = POLLIN}};

		if (stop_finished(mono))
			break;
		tend_display(mono, saved, &timeout);
		timeout = wait_time(mono, timeout, &fds[1]);
		if (poll(fds, 3, (int)timeout) < 0 && errno != EINTR) {
			say("poll: %s", strerror(errno));
			begin_stop(EXIT_CANNOT_RUN, "internal error", SIGTERM);
		}
		if (fds[1].revents)
			read_xvfb();
		read_signals(sfd);
		if (fds[2].revents && st.ctl_fd >= 0)
			read_order();
		reap();
		if (st.reset_due && !st.stopping)
			run_reset(env_or("SANDBOX_WORKSPACE", "/workspace"), saved);
	}
	return st.exit_code;
}

int main(int argc, char **argv)
{
	static char http_token[80];
	sigset_t saved;
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
	r = configure(&published, http_token, sizeof(http_token));
	if (r)
		return r;
	sfd = block_signals(&saved);
	if (sfd < 0)
		return EXIT_CANNOT_RUN;
	if (drop_privileges(&saved, &spawn_fd) < 0)
		return EXIT_CANNOT_RUN;
	prepare_run_dir(&saved);
	if (argc > 1)
		spawn(MAIN, argv + 1, spawn_fd, -1, &saved);
	else
		start_default_server(spawn_fd, published, http_token, sizeof(http_token), &saved);
	if (spawn_fd >= 0 && st.spawn_fd < 0)
		close(spawn_fd); /* the server's now; the spawner exits when the server does */
	if (st.pid[MAIN] <= 0)
		return EXIT_CANNOT_RUN;
	return supervise(sfd, &saved);
}
