/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"

#define AGENT_LOG_MAX (64LL * 1024 * 1024)

extern char **environ;

/* close_range(lo, hi) when lo <= hi; the slow way without it (Linux < 5.9). */
static void close_span(unsigned lo, unsigned hi)
{
	if (lo > hi || close_range(lo, hi, 0) == 0)
		return;
	for (unsigned fd = lo; fd <= hi && fd < 65536; fd++)
		close((int)fd);
}

/*
 * Closes every descriptor from 3 up except keep1 and keep2 (-1: none).
 * Async-signal-safe: it runs in a child of a threaded process.
 */
static void close_from_3(int keep1, int keep2)
{
	int lo = keep1 < keep2 ? keep1 : keep2, hi = keep1 < keep2 ? keep2 : keep1;
	unsigned next = 3;

	if (lo >= 3) {
		close_span(next, (unsigned)lo - 1);
		next = (unsigned)lo + 1;
	}
	if (hi >= 3 && hi != lo) {
		close_span(next, (unsigned)hi - 1);
		next = (unsigned)hi + 1;
	}
	close_span(next, ~0U);
}

static void set_signal(int sig, void (*handler)(int))
{
	struct sigaction sa = {.sa_handler = handler};

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* How long the agent's leftovers have between SIGTERM and SIGKILL once it exited. */
#define LEFTOVER_GRACE_MS 300

/*
 * Up to max pids of our children from /proc/self/task/<self>/children into
 * pids; how many. Async-signal-safe (no stdio): the supervisor is a fork of a
 * threaded process. More children than fit are found in the caller's next round.
 */
static size_t list_children(pid_t self, pid_t *pids, size_t max)
{
	char path[64] = "/proc/self/task/", digits[16], buf[4096];
	size_t n = 0, len = strlen(path), nd = 0;
	ssize_t got;
	long v = 0;
	int fd;

	do
		digits[nd++] = (char)('0' + self % 10);
	while ((self /= 10) > 0 && nd < sizeof(digits));
	while (nd > 0)
		path[len++] = digits[--nd];
	memcpy(path + len, "/children", sizeof("/children"));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	got = read(fd, buf, sizeof(buf));
	close(fd);
	/* "pid pid ... ": a number counts once the space after it was read. */
	for (ssize_t i = 0; i < got && n < max; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			v = v * 10 + (buf[i] - '0');
		} else {
			if (v > 0)
				pids[n++] = (pid_t)v;
			v = 0;
		}
	}
	return n;
}

/*
 * Ends whatever the agent left behind once it is gone: what is still in its
 * group, and what left the group (setsid, a double fork), which comes to us
 * as the subreaper once its parent has ended. SIGTERM for grace_ms, then
 * SIGKILL, round after round until we have no child left. A group kill never
 * sends SIGKILL: we are in the group. Async-signal-safe.
 */
static void end_descendants(pid_t self, int grace_ms)
{
	struct timespec tick = {0, 20 * 1000000L};

	for (int waited = 0;; waited += 20) {
		int sig = waited < grace_ms ? SIGTERM : SIGKILL, st;
		pid_t kids[256], w;
		size_t n;

		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			;
		if (w < 0 && errno == ECHILD)
			return;
		if (sig == SIGTERM)
			kill(0, SIGTERM);
		n = list_children(self, kids, SBX_ELEMENTSOF(kids));
		for (size_t i = 0; i < n; i++) {
			kill(-kids[i], sig); /* a group it leads, when setsid made it one */
			kill(kids[i], sig);
		}
		nanosleep(&tick, NULL);
	}
}

/*
 * The group leader between sandboxctl and the agent: it runs the agent as its
 * child and watches a pipe whose write end only sandboxctl holds. When that
 * pipe ends (sandboxctl is gone, even by SIGKILL), it stops the whole group,
 * so no agent process outlives the run. As the subreaper of the agent's
 * descendants, it also ends those that left the group (setsid) when the agent
 * exits. Its exit status is the agent's.
 *
 * Forked from a threaded process, it and the agent's side of the fork call
 * only async-signal-safe functions: everything (path, argv, envp, fds) was
 * prepared before the fork. The agent gets fds 0, 1 and 2 and nothing else;
 * if its exec fails, it sends errno on exec_err (close-on-exec) to sandboxctl.
 */
static _Noreturn void supervise(int lifeline, int exec_err, pid_t parent, const char *path,
				char *const argv[], char *const envp[])
{
	pid_t self = getpid(), agent;
	sigset_t none;

	/* Stopped with the group by SIGTERM, it follows once the agent has exited. */
	set_signal(SIGTERM, SIG_IGN);
	if (getppid() != parent)
		_exit(127);
	/* Orphans among the agent's descendants are reparented to us, not to init. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	agent = fork();
	if (agent < 0)
		_exit(127);
	if (agent == 0) {
		int e;

		set_signal(SIGTERM, SIG_DFL);
		set_signal(SIGPIPE, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close_from_3(exec_err, -1);
		execve(path, argv, envp);
		e = errno;
		(void)sbx_write_all(exec_err, &e, sizeof(e));
		_exit(127);
	}
	close(exec_err);
	for (;;) {
		struct pollfd pf = {.fd = lifeline, .events = POLLIN};
		pid_t w;
		int st;

		/* The agent, or an orphan of its that ended: reaped either way. */
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == agent) {
				int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

				end_descendants(self, LEFTOVER_GRACE_MS);
				_exit(code);
			}
		if (poll(&pf, 1, 100) > 0 && (pf.revents & (POLLIN | POLLHUP | POLLERR))) {
			struct timespec tick = {0, 100 * 1000000L};

			kill(0, SIGTERM);
			for (int i = 0; i < 20 && waitpid(agent, &st, WNOHANG) == 0; i++)
				nanosleep(&tick, NULL);
			end_descendants(self, 0);
			_exit(137);
		}
	}
}

char *sbx_agent__which(const char *prog)
{
	const char *path = getenv("PATH");
	struct stat st;

	if (strchr(prog, '/')) {
		if (stat(prog, &st) == 0 && S_ISREG(st.st_mode) && access(prog, X_OK) == 0)
			return strdup(prog);
		errno = ENOENT;
		return NULL;
	}
	for (const char *d = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; *d;) {
		size_t len = strcspn(d, ":");
		char *p;

		if (asprintf(&p, "%.*s%s%s", (int)len, d, len ? "/" : "", prog) < 0)
			return NULL;
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
			return p;
		free(p);
		d += len + (d[len] == ':');
	}
	errno = ENOENT;
	return NULL;
}

/* argv[0] as execvp would find it in our PATH; a copy of it when not found. */
static char *resolve(const char *prog)
{
	char *p = sbx_agent__which(prog);

	return p || errno == ENOMEM ? p : strdup(prog);
}

/* Our environment with env_extra's keys replaced and added: built before the fork. */
static char **build_envp(char *const env_extra[])
{
	size_t n = 0, extra = 0, k = 0;
	char **envp;

	while (environ && environ[n])
		n++;
	while (env_extra && env_extra[extra])
		extra++;
	envp = calloc(n + extra + 1, sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t kl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		bool replaced = false;

		for (size_t j = 0; j < extra && !replaced; j++)
			replaced = strncmp(env_extra[j], environ[i], kl) == 0 &&
				   env_extra[j][kl] == '=';
		if (!replaced)
			envp[k++] = environ[i];
	}
	for (size_t j = 0; j < extra; j++)
		envp[k++] = env_extra[j];
	envp[k] = NULL;
	return envp;
}

int sbx_agent__spawn(sbx_agent_proc *a, char *const argv[], char *const env_extra[],
		     const char *log_path, bool echo, sbx_error *err)
{
	_cleanup_free_ char **envp = NULL;
	_cleanup_free_ char *path = NULL;
	int p[2] = {-1, -1}, lifeline[2] = {-1, -1}, exec_err[2] = {-1, -1}, logfd = -1,
	    devnull = -1, e = 0, r;
	pid_t pid, parent;
	ssize_t got;

	a->pid = 0;
	a->out_fd = a->log_fd = a->lifeline = -1;
	a->exit_code = -1;
	a->echo = echo;
	a->logged = 0;
	envp = build_envp(env_extra);
	path = resolve(argv[0]);
	if (!envp || !path)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		return sbx_error_set(err, -errno, "agent log '%s': %s", log_path, strerror(errno));
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || pipe2(p, O_CLOEXEC) < 0 || pipe2(lifeline, O_CLOEXEC) < 0 ||
	    pipe2(exec_err, O_CLOEXEC) < 0) {
		r = sbx_error_set(err, -errno, "pipe: %s", strerror(errno));
		goto fail;
	}
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		r = sbx_error_set(err, -errno, "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(devnull, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		/* The engine socket, the relay's streams, the other pipes: not ours. */
		close_from_3(lifeline[0], exec_err[1]);
		supervise(lifeline[0], exec_err[1], parent, path, argv, envp);
	}
	setpgid(pid, pid); /* both sides, so there is no race */
	close(p[1]);
	close(lifeline[0]);
	close(exec_err[1]);
	close(devnull);
	p[1] = lifeline[0] = exec_err[1] = devnull = -1;
	/* Until the agent's exec: EOF means it started, an errno that it could not. */
	do
		got = read(exec_err[0], &e, sizeof(e));
	while (got < 0 && errno == EINTR);
	close(exec_err[0]);
	if (got == (ssize_t)sizeof(e)) {
		char msg[512];
		int n = snprintf(msg, sizeof(msg), "sandboxctl: cannot run agent '%s': %s\n",
				 argv[0], strerror(e));

		if (n > 0 && write(logfd, msg, (size_t)n) < 0) {
			/* the exit status (127) says it too */
		}
		if (echo && n > 0 && write(STDERR_FILENO, msg, (size_t)n) < 0) {
			/* nowhere else to say it */
		}
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	a->pid = pid;
	a->lifeline = lifeline[1];
	a->out_fd = p[0];
	a->log_fd = logfd;
	return 0;
fail : {
	int fds[] = {p[0],	  p[1],	       lifeline[0], lifeline[1],
		     exec_err[0], exec_err[1], devnull,	    logfd};

	for (size_t i = 0; i < SBX_ELEMENTSOF(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return r;
}
}

static void drain(sbx_agent_proc *a)
{
	char buf[8192];

	while (a->out_fd >= 0) {
		ssize_t n = read(a->out_fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0) {
				close(a->out_fd);
				a->out_fd = -1;
			}
			return;
		}
		/* Capped: a chatty agent cannot fill the disk. */
		if (a->log_fd >= 0 &&
		    (a->logged + n > AGENT_LOG_MAX || write(a->log_fd, buf, (size_t)n) < 0)) {
			close(a->log_fd);
			a->log_fd = -1;
		}
		a->logged += n;
		if (a->echo && write(STDERR_FILENO, buf, (size_t)n) < 0)
			a->echo = false;
	}
}

bool sbx_agent__poll(sbx_agent_proc *a)
{
	int st;
	pid_t r;

	drain(a);
	if (a->pid <= 0)
		return a->exit_code >= 0;
	r = waitpid(a->pid, &st, WNOHANG);
	if (r == a->pid) {
		a->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		a->pid = 0;
		drain(a);
		return true;
	}
	return false;
}

bool sbx_agent__wait(sbx_agent_proc *a, int ms)
{
	for (int waited = 0; !sbx_agent__poll(a); waited += 10) {
		if (waited >= ms)
			return false;
		nanosleep(&(struct timespec){0, 10 * 1000000L}, NULL);
	}
	return true;
}

void sbx_agent__stop(sbx_agent_proc *a, int grace_ms)
{
	if (a->pid > 0 && !sbx_agent__poll(a)) {
		a->stopped = true;
		kill(-a->pid, SIGTERM);
		for (int waited = 0; waited < grace_ms && a->pid > 0; waited += 20) {
			struct timespec ts = {0, 20 * 1000000L};
			nanosleep(&ts, NULL);
			sbx_agent__poll(a);
		}
		if (a->pid > 0) {
			int st;

			kill(-a->pid, SIGKILL);
			if (waitpid(a->pid, &st, 0) == a->pid)
				a->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			a->pid = 0;
		}
	}
	drain(a);
	if (a->lifeline >= 0)
		close(a->lifeline);
	a->lifeline = -1;
	if (a->out_fd >= 0)
		close(a->out_fd);
	if (a->log_fd >= 0)
		close(a->log_fd);
	a->out_fd = a->log_fd = -1;
}
