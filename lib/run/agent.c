/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

#define AGENT_LOG_MAX (64LL * 1024 * 1024)

/*
 * The group leader between sandboxctl and the agent: it runs the agent as its
 * child and watches a pipe whose write end only sandboxctl holds. When that
 * pipe ends (sandboxctl is gone, even by SIGKILL), it stops the whole group,
 * so no agent process outlives the run. Its exit status is the agent's.
 */
static _Noreturn void supervise(int lifeline, pid_t parent, char *const argv[])
{
	pid_t agent;
	int st;

	/* Stopped with the group by SIGTERM, it follows once the agent has exited. */
	signal(SIGTERM, SIG_IGN);
	if (getppid() != parent)
		_exit(127);
	agent = fork();
	if (agent < 0)
		_exit(127);
	if (agent == 0) {
		signal(SIGTERM, SIG_DFL);
		close(lifeline);
		execvp(argv[0], argv);
		fprintf(stderr, "sandboxctl: cannot run agent '%s': %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	for (;;) {
		struct pollfd pf = {.fd = lifeline, .events = POLLIN};
		pid_t w = waitpid(agent, &st, WNOHANG);

		if (w == agent)
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		if (poll(&pf, 1, 100) > 0 && (pf.revents & (POLLIN | POLLHUP | POLLERR))) {
			kill(0, SIGTERM);
			for (int i = 0; i < 20 && waitpid(agent, &st, WNOHANG) == 0; i++)
				usleep(100000);
			kill(0, SIGKILL);
			_exit(137);
		}
	}
}

int sbx_agent__spawn(sbx_agent_proc *a, char *const argv[], char *const env_extra[],
		     const char *log_path, bool echo, sbx_error *err)
{
	int p[2], lifeline[2], logfd;
	pid_t pid, parent;

	a->pid = 0;
	a->out_fd = a->log_fd = a->lifeline = -1;
	a->exit_code = -1;
	a->echo = echo;
	a->logged = 0;
	logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		return sbx_error_set(err, -errno, "agent log '%s': %s", log_path, strerror(errno));
	if (pipe2(p, O_CLOEXEC) < 0) {
		int r = -errno;
		close(logfd);
		return sbx_error_set(err, r, "pipe: %s", strerror(-r));
	}
	if (pipe2(lifeline, O_CLOEXEC) < 0) {
		int r = -errno;
		close(logfd);
		close(p[0]);
		close(p[1]);
		return sbx_error_set(err, r, "pipe: %s", strerror(-r));
	}
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		int r = -errno;
		close(logfd);
		close(p[0]);
		close(p[1]);
		close(lifeline[0]);
		close(lifeline[1]);
		return sbx_error_set(err, r, "fork: %s", strerror(-r));
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		for (size_t i = 0; env_extra && env_extra[i]; i++)
			putenv(env_extra[i]);
		signal(SIGPIPE, SIG_DFL);
		/* Other threads' descriptors (a sweep runs episodes side by side: their
		 * lifelines, relay sockets, engine streams) must not live on in this
		 * group: a copy of another run's lifeline would keep that run's agent
		 * alive after sandboxctl died. Keep the lifeline at 3, close the rest. */
		if (lifeline[0] != 3 && dup2(lifeline[0], 3) < 0)
			_exit(127);
		close_range(4, ~0U, 0);
		supervise(3, parent, argv);
	}
	setpgid(pid, pid); /* both sides, so there is no race */
	close(p[1]);
	close(lifeline[0]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	a->pid = pid;
	a->lifeline = lifeline[1];
	a->out_fd = p[0];
	a->log_fd = logfd;
	return 0;
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
