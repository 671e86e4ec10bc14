/* SPDX-License-Identifier: MIT */
/*
 * sandbox-init's children: starting them (each in its own process group),
 * signalling them, Xvfb and LibreOffice, reaping, and the steps of the loop
 * that watches them (the display, the signals, how long to wait). Included
 * by sandbox-init.c only (built as one file, static, libc only), after its
 * state (st) and say().
 */
#pragma once

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

/*
 * The deadline (a stop already under way, the main program ended or a
 * signal, keeps its status), and a stop's end: true once every child is
 * gone, or SIGKILL has had its second.
 */
static bool stop_finished(int64_t mono)
{
	if (st.deadline_ms && !st.stopping && now_ms(CLOCK_REALTIME) >= st.deadline_ms) {
		st.deadline_passed = true;
		begin_stop(EXIT_DEADLINE, "the deadline passed", SIGTERM);
	}
	if (st.stopping) {
		if (all_children_gone())
			return true;
		if (mono >= st.stop_by_ms) {
			signal_all(SIGKILL);
			reap();
			if (all_children_gone() || mono >= st.stop_by_ms + 1000)
				return true;
		}
	}
	return false;
}

/* Xvfb late or dead, LibreOffice due: *timeout lowered to poll for SANDBOX_OPEN. */
static void tend_display(int64_t mono, const sigset_t *mask, int64_t *timeout)
{
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
		start_xvfb(mask);
	}
	if (office_wanted() && st.pid[OFFICE] == 0) {
		if (access(st.open_path, F_OK) == 0)
			start_office(mask);
		else
			*timeout = OPEN_POLL_MS;
	}
}

/* How long poll may wait (ms, -1: no limit): the stop, the deadline, Xvfb's pipe (into *xvfb). */
static int64_t wait_time(int64_t mono, int64_t timeout, struct pollfd *xvfb)
{
	if (st.stopping)
		timeout = st.stop_by_ms > mono ? st.stop_by_ms - mono : 100;
	if (st.deadline_ms && !st.stopping) {
		int64_t left = st.deadline_ms - now_ms(CLOCK_REALTIME);

		if (timeout < 0 || left < timeout)
			timeout = left > 0 ? (left < INT_MAX ? left : INT_MAX) : 0;
	}
	if (st.xvfb_fd >= 0) {
		int64_t left = st.xvfb_by_ms - mono;

		xvfb->fd = st.xvfb_fd;
		xvfb->events = POLLIN;
		if (st.xvfb_by_ms && (timeout < 0 || left < timeout))
			timeout = left > 0 ? left : 0;
	}
	return timeout;
}

/* Xvfb writes the display number once it accepts connections. */
static void read_xvfb(void)
{
	char buf[32];
	ssize_t n = read(st.xvfb_fd, buf, sizeof(buf) - 1);

	if (n > 0) {
		xvfb_ready(NULL);
	} else if (n == 0) {
		xvfb_ready("Xvfb closed its ready pipe");
		st.display_ready = false;
	}
}

/* The signals that came: passed on to everything, the first one starting a stop. */
static void read_signals(int sfd)
{
	struct signalfd_siginfo si;

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
				begin_stop(128 + (int)si.ssi_signo, strsignal((int)si.ssi_signo),
					   (int)si.ssi_signo);
			}
		}
	}
}
