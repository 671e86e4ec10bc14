/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <X11/Xlib.h>

#include "xvfb.h"

double test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int test_xvfb_start(test_xvfb *x, int width, int height)
{
	const char *prog = getenv("SBX_XVFB");
	char screen[32], fdarg[16], buf[16] = {0};
	int pipefd[2];
	size_t got = 0;
	double deadline;

	x->pid = -1;
	x->display[0] = '\0';
	if (!prog || !*prog)
		prog = "Xvfb";
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	snprintf(screen, sizeof(screen), "%dx%dx24", width, height);
	x->pid = fork();
	if (x->pid < 0)
		return -1;
	if (x->pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setpgid(0, 0);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		/* -displayfd writes the display number it picked to fd 3. */
		dup2(pipefd[1], 3);
		snprintf(fdarg, sizeof(fdarg), "%d", 3);
		execlp(prog, prog, "-displayfd", fdarg, "-screen", "0", screen, "-nolisten", "tcp",
		       "-noreset", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	deadline = test_now_ms() + 20000;
	while (test_now_ms() < deadline && got < sizeof(buf) - 1) {
		struct pollfd p = {pipefd[0], POLLIN, 0};
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(pipefd[0], buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (memchr(buf, '\n', got))
			break;
	}
	close(pipefd[0]);
	if (got == 0 || atoi(buf) < 0) {
		fprintf(stderr, "xvfb: %s did not report a display\n", prog);
		test_xvfb_stop(x);
		return -1;
	}
	snprintf(x->display, sizeof(x->display), ":%d", atoi(buf));

	/* Ready when a client can connect. */
	while (test_now_ms() < deadline) {
		Display *d = XOpenDisplay(x->display);

		if (d) {
			XCloseDisplay(d);
			return 0;
		}
		usleep(50000);
	}
	fprintf(stderr, "xvfb: display %s never accepted a connection\n", x->display);
	test_xvfb_stop(x);
	return -1;
}

void test_kill(pid_t pid, int grace_ms)
{
	double deadline = test_now_ms() + grace_ms;
	int status;

	if (pid <= 0)
		return;
	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);
	while (test_now_ms() < deadline) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD)) {
			kill(-pid, SIGKILL); /* leftovers in its group */
			return;
		}
		usleep(20000);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

void test_xvfb_stop(test_xvfb *x)
{
	if (x->pid > 0)
		test_kill(x->pid, 3000);
	x->pid = -1;
}

pid_t test_spawn(char *const argv[], const char *display, const char *log_path)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	int fd = open(log_path ? log_path : "/dev/null",
		      log_path ? O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC : O_RDWR | O_CLOEXEC,
		      0644);
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpgid(0, 0);
	dup2(nul, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (display)
		setenv("DISPLAY", display, 1);
	execvp(argv[0], argv);
	_exit(127);
}
