/* SPDX-License-Identifier: MIT */
/*
 * sandbox-spawner: runs the agent's tool code (execute_python,
 * execute_shell) for the server, as the agent's own uid.
 *
 * PID 1 starts it as SANDBOX_AGENT_UID (1001) with no capabilities and one
 * end of a socketpair whose other end the server holds (spawn-protocol.h).
 * The server (uid 1000) cannot change uid itself, and tool code must not
 * share its uid: same-uid code could ptrace it, read its memory, kill it or
 * bind its socket and answer the host in its place. For each request a
 * guard process starts the child in its own process group under the
 * requested rlimits, reports its pid and exit status, and kills the group
 * when asked, when the server goes away, and after the child exits. The
 * spawner exits when the server closes its end (with SANDBOX_REUSE, PID 1
 * keeps one too, and asks it for its half of a reset: sandbox-reset.h).
 *
 * Usage: sandbox-spawner FD [HOME]. Only libc; built static.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox-reset.h"
#include "spawn-protocol.h"

static const char *agent_home;

static void say(const char *msg, int e)
{
	fprintf(stderr, "sandbox-spawner: %s%s%s\n", msg, e ? ": " : "", e ? strerror(e) : "");
}

static void set_limit(int resource, rlim_t value)
{
	struct rlimit rl = {value, value};

	setrlimit(resource, &rl);
}

static void send_event(int chan, uint32_t kind, int32_t value)
{
	struct sbx_spawn_event ev = {kind, value};

	(void)!send(chan, &ev, sizeof(ev), MSG_NOSIGNAL);
}

static void kill_group(pid_t pgid)
{
	for (int i = 0; i < 3 && kill(-pgid, SIGKILL) == 0; i++)
		;
}

/*
 * Kills every child of this process (the ppid field of /proc/N/stat) and
 * reaps them, all but main, whose status the guard waits for itself. False
 * when no other is left.
 */
static bool kill_children(pid_t main_pid)
{
	char path[64], buf[512];
	bool any = false;
	pid_t self = getpid();
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *close_paren;
		int fd, ppid = 0;
		ssize_t n;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything but ends at the last ')'. */
		close_paren = strrchr(buf, ')');
		if (close_paren && sscanf(close_paren + 1, " %*c %d", &ppid) == 1 && ppid == self) {
			pid_t child_pid = (pid_t)atoi(e->d_name);

			kill(child_pid, SIGKILL);
			if (child_pid != main_pid) {
				waitpid(child_pid, NULL, 0);
				any = true;
			}
		}
	}
	if (d)
		closedir(d);
	return any;
}

/*
 * The whole tree: the group, then whatever left it (setsid, a double fork
 * into a new session), which, orphaned, became this subreaper's children.
 * Bounded, so a fork bomb racing it cannot keep the guard here for ever.
 */
static void kill_tree(pid_t pgid)
{
	kill_group(pgid);
	for (int i = 0; i < 200 && kill_children(pgid); i++)
		kill_group(pgid);
}

/* Between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
child(const struct sbx_spawn_request *rq, char **argv, char **envp, const int *fds, pid_t guard)
{
	sigset_t none;
	int e;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != guard)
		_exit(127);
	if (fchdir(fds[SBX_SPAWN_FD_CWD]) < 0)
		goto fail;
	if (dup2(fds[SBX_SPAWN_FD_STDIN], 0) < 0 || dup2(fds[SBX_SPAWN_FD_STDOUT], 1) < 0 ||
	    dup2(fds[SBX_SPAWN_FD_STDERR], 2) < 0)
		goto fail;
	if (fds[SBX_SPAWN_FD_STATUS] != 3 &&
	    (dup2(fds[SBX_SPAWN_FD_STATUS], 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0))
		goto fail;
	syscall(SYS_close_range, 4, ~0U, 0);
	set_limit(RLIMIT_AS, (rlim_t)rq->address_space);
	set_limit(RLIMIT_CPU, (rlim_t)rq->cpu_seconds);
	set_limit(RLIMIT_NPROC, (rlim_t)rq->max_processes);
	set_limit(RLIMIT_FSIZE, (rlim_t)rq->max_file_bytes);
	set_limit(RLIMIT_CORE, 0);
	/* The workspace is shared with the server through its group. */
	umask(002);
	execve(argv[0], argv, envp);
fail:
	e = errno;
	(void)!write(3, &e, sizeof(e));
	_exit(127);
}

/* The guard: one per execution, so a slow child never holds up another request. */
static void __attribute__((noreturn))
guard(const struct sbx_spawn_request *rq, char **argv, char **envp, const int *fds)
{
	int chan = fds[SBX_SPAWN_FD_CHANNEL], status = 0, pidfd;
	bool exited = false;
	pid_t pid;

	signal(SIGCHLD, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Orphans of the child's tree come here, so none outlives the execution. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		(void)!write(fds[SBX_SPAWN_FD_STATUS], &e, sizeof(e));
		_exit(1);
	}
	if (pid == 0)
		child(rq, argv, envp, fds, getppid());
	setpgid(pid, pid); /* also here: no window where kill(-pid) misses */
	for (int i = SBX_SPAWN_FD_STDIN; i <= SBX_SPAWN_FD_CWD; i++)
		close(fds[i]);
	send_event(chan, SBX_SPAWN_STARTED, (int32_t)pid);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while (!exited) {
		struct pollfd p[2] = {{chan, POLLIN, 0}, {pidfd, POLLIN, 0}};
		char c;

		if (poll(p, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 100) < 0 && errno != EINTR)
			break;
		if (p[0].revents) {
			ssize_t n = recv(chan, &c, 1, 0);

			/* A kill request, or the server is gone: either way the tree goes. */
			kill_tree(pid);
			if (n <= 0) {
				waitpid(pid, &status, 0);
				kill_tree(pid);
				_exit(0);
			}
		}
		if (pidfd < 0 || p[1].revents)
			exited = waitpid(pid, &status, pidfd < 0 ? WNOHANG : 0) == pid;
	}
	if (!(rq->flags & SBX_SPAWN_KEEP_LEFTOVERS))
		kill_tree(pid); /* background leftovers, in the group or not */
	send_event(chan, SBX_SPAWN_EXITED, (int32_t)status);
	_exit(0);
}

/* Replaces HOME: the server's home is its own, not writable here. */
static void set_home(char **envp, uint32_t envc, char *home_entry)
{
	for (uint32_t i = 0; i < envc; i++)
		if (strncmp(envp[i], "HOME=", 5) == 0) {
			envp[i] = home_entry;
			return;
		}
}

/*
 * Checks one request message (len bytes, nfds descriptors) and points argv
 * at its strings: argv[0..argc-1], NULL, envp[0..envc-1], NULL. NULL on
 * success, else why it is refused. argv must hold SBX_SPAWN_MAX_STRINGS + 2.
 */
static const char *parse_request(char *msg, size_t len, int nfds, struct sbx_spawn_request *rq,
				 char **argv)
{
	char *strings, *p, *end;
	uint32_t n;

	if (nfds != SBX_SPAWN_NFDS || len < sizeof(*rq))
		return "a request without its descriptors";
	memcpy(rq, msg, sizeof(*rq));
	strings = msg + sizeof(*rq);
	if (rq->magic != SBX_SPAWN_MAGIC || rq->argc < 1 || rq->argc > SBX_SPAWN_MAX_STRINGS ||
	    rq->envc > SBX_SPAWN_MAX_STRINGS || rq->argc + rq->envc > SBX_SPAWN_MAX_STRINGS ||
	    rq->strings_len != len - sizeof(*rq) || rq->strings_len == 0 ||
	    strings[rq->strings_len - 1] != '\0')
		return "a malformed request";
	n = rq->argc + rq->envc;
	p = strings;
	end = strings + rq->strings_len;
	for (uint32_t i = 0; i < n; i++) {
		char *z;

		if (p >= end)
			return "a request with too few strings";
		z = memchr(p, '\0', (size_t)(end - p));
		if (!z)
			return "a request with a torn string";
		argv[i < rq->argc ? i : i + 1] = p;
		p = z + 1;
	}
	if (p != end)
		return "a request with bytes after its strings";
	argv[rq->argc] = NULL;
	argv[n + 1] = NULL;
	if (argv[0][0] != '/')
		return "a request for a relative program path";
	return NULL;
}

/*
 * PID 1's reset (sandbox-reset.h), our half as the agent's uid: every process
 * of ours killed, our IPC objects and our files in every writable place
 * removed, the agent's home made again, empty. Then the answer.
 */
static void reset(int ctl)
{
	struct sbx_reset_reply rp = {.magic = SBX_RESET_MAGIC};

	reset_kill_uid(&rp, 0, true);
	reset_ipc(&rp);
	reset_empty_place(getenv("SANDBOX_WORKSPACE") ? getenv("SANDBOX_WORKSPACE") : "/workspace",
			  &rp);
	for (size_t i = 0; i < sizeof(reset_places) / sizeof(reset_places[0]); i++)
		reset_empty_place(reset_places[i], &rp);
	if (rp.procs_left)
		reset_note(rp.detail, "%u process(es) of the agent's uid left", rp.procs_left);
	/* Nothing of ours is left to have made it again: it must not exist. */
	if (mkdir(agent_home, 0700) < 0)
		reset_note(rp.detail, "the agent's home: %s", strerror(errno));
	(void)!send(ctl, &rp, sizeof(rp), MSG_NOSIGNAL);
}

/*
 * An SBX2 request (the header, its strings in fds[SBX_SPAWN_FD_STRINGS]) as
 * the SBX1 message it stands for, in a buffer of its own: *msg and *len then
 * point there. Returns why it is refused, or NULL. The strings fd is closed.
 */
static const char *inline_strings(char **msg, size_t *len, int *fds, int *nfds)
{
	static char big[sizeof(struct sbx_spawn_request) + SBX_SPAWN_MAX_FD_STRINGS];
	struct sbx_spawn_request rq;
	size_t got = 0;
	int fd;

	if (*nfds != SBX_SPAWN_NFDS_MAX || *len != sizeof(rq))
		return "an SBX2 request without its strings";
	fd = fds[SBX_SPAWN_FD_STRINGS];
	*nfds = SBX_SPAWN_NFDS;
	memcpy(&rq, *msg, sizeof(rq));
	if (rq.strings_len == 0 || rq.strings_len > SBX_SPAWN_MAX_FD_STRINGS) {
		close(fd);
		return "an SBX2 request of an impossible size";
	}
	while (got < rq.strings_len) {
		ssize_t n = pread(fd, big + sizeof(rq) + got, rq.strings_len - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got != rq.strings_len)
		return "an SBX2 request whose strings are short";
	rq.magic = SBX_SPAWN_MAGIC;
	memcpy(big, &rq, sizeof(rq));
	*msg = big;
	*len = sizeof(rq) + got;
	return NULL;
}

/* Validates a request and runs it; closes the fds it was given. */
static void handle(char *msg, size_t len, int *fds, int nfds)
{
	static char home_entry[4096];
	static char *argv[SBX_SPAWN_MAX_STRINGS + 2];
	struct sbx_spawn_request rq;
	uint32_t magic = 0;
	const char *why = NULL;
	pid_t pid;

	if (len >= sizeof(magic))
		memcpy(&magic, msg, sizeof(magic));
	if (magic == SBX_SPAWN_MAGIC_FD)
		why = inline_strings(&msg, &len, fds, &nfds);
	if (!why)
		why = parse_request(msg, len, nfds, &rq, argv);

	if (why) {
		fprintf(stderr, "sandbox-spawner: %s; ignored\n", why);
		goto out;
	}
	snprintf(home_entry, sizeof(home_entry), "HOME=%s", agent_home);
	set_home(argv + rq.argc + 1, rq.envc, home_entry);
	pid = fork();
	if (pid == 0)
		guard(&rq, argv, argv + rq.argc + 1, fds);
	if (pid < 0) {
		int e = errno;

		(void)!write(fds[SBX_SPAWN_FD_STATUS], &e, sizeof(e));
	}
out:
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

int main(int argc, char **argv)
{
	static char msg[SBX_SPAWN_MAX_MESSAGE];
	char *end;
	long ctl;

	if (argc < 2 || argc > 3) {
		fputs("Usage: sandbox-spawner FD [HOME]\n"
		      "Runs tool code for sandbox-mcp as this uid (see spawn-protocol.h).\n",
		      stderr);
		return 2;
	}
	ctl = strtol(argv[1], &end, 10);
	if (*end || ctl < 0 || fcntl((int)ctl, F_GETFD) < 0) {
		say("the first argument is not an open descriptor", 0);
		return 2;
	}
	agent_home = argc > 2 ? argv[2] : "/tmp/agent";
	if (mkdir(agent_home, 0700) < 0 && errno != EEXIST)
		say("cannot create the agent's home", errno);
	signal(SIGCHLD, SIG_IGN); /* guards are reaped by the kernel */
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int) * SBX_SPAWN_NFDS_MAX)];
		} cbuf;
		struct iovec iov = {msg, sizeof(msg)};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf.buf,
				    .msg_controllen = sizeof(cbuf.buf)};
		int fds[SBX_SPAWN_NFDS_MAX], nfds = 0;
		ssize_t n = recvmsg((int)ctl, &mh, MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0; /* the server is gone */
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (nfds < SBX_SPAWN_NFDS_MAX)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
		if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
			say("a request larger than the limit; ignored", 0);
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
			continue;
		}
		if (n == (ssize_t)sizeof(struct sbx_reset_request) && nfds == 0) {
			struct sbx_reset_request rq;

			memcpy(&rq, msg, sizeof(rq));
			if (rq.magic == SBX_RESET_MAGIC) {
				reset((int)ctl);
				continue;
			}
		}
		handle(msg, (size_t)n, fds, nfds);
	}
}
