/* SPDX-License-Identifier: MIT */
/*
 * One program run for the server (code_spawn.h): started by sandbox-spawner as
 * the agent's uid when the server runs in a sandbox, forked here otherwise;
 * its output read with poll() and handed to the job's sinks; its process
 * group killed at the timeout, on a cancel, and when it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn-protocol.h"
#include "code_spawn.h"
#include "sbx/cleanup.h"
#include "sbx/clock.h"
#include "sbx/file.h"

static void set_limit(int resource, rlim_t value)
{
	struct rlimit rl = {value, value};

	setrlimit(resource, &rl);
}

/* The descriptors a child starts with. */
typedef struct child_fds {
	int in, out, err, status, cwd;
} child_fds;

/* In the child, between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) child(const spawn_job *job, const child_fds *f, pid_t parent)
{
	sigset_t none;
	int e;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setpgid(0, 0);
	/* If the server dies (its forking thread waits for us, so it outlives us otherwise). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	/* Before the dup2s below, which may reuse the directory fd's number. */
	if (fchdir(f->cwd) < 0)
		goto fail;
	if (dup2(f->in, 0) < 0 || dup2(f->out, 1) < 0 || dup2(f->err, 2) < 0)
		goto fail;
	if (f->status != 3 && (dup2(f->status, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0))
		goto fail;
	syscall(SYS_close_range, 4, ~0U, 0);
	set_limit(RLIMIT_AS, (rlim_t)job->limits.address_space);
	set_limit(RLIMIT_CPU, (rlim_t)job->limits.cpu_seconds);
	set_limit(RLIMIT_NPROC, (rlim_t)job->limits.max_processes);
	set_limit(RLIMIT_FSIZE, (rlim_t)job->limits.max_file_bytes);
	set_limit(RLIMIT_CORE, 0);
	execve(job->prog, job->argv, job->envp);
fail:
	e = errno;
	(void)!write(3, &e, sizeof(e));
	_exit(127);
}

/* A started child: forked here (pidfd), or by the spawner (chan). */
typedef struct child_proc {
	pid_t pid;
	int pidfd; /* local: readable when it exited */
	int chan;  /* spawned: the guard's channel, readable with its exit */
} child_proc;

#define CHILD_PROC_INIT                                                                            \
	{                                                                                          \
		0, -1, -1                                                                          \
	}

/* The spawner's end of PID 1's socketpair, -1 when there is none (not in a sandbox). */
static int spawner_fd(void)
{
	static int fd = -2;
	const char *v;
	char *end;
	long n;

	if (fd != -2)
		return fd;
	fd = -1;
	v = getenv("SANDBOX_SPAWN_FD");
	if (v && *v) {
		n = strtol(v, &end, 10);
		if (!*end && n >= 0 && n < 65536 && fcntl((int)n, F_GETFD) >= 0)
			fd = (int)n;
	}
	return fd;
}

/* The request's bytes: the header, then the strings; up to the SBX2 limit. */
#define REQUEST_MAX (sizeof(struct sbx_spawn_request) + SBX_SPAWN_MAX_FD_STRINGS)

/* Appends a NUL-terminated string to the request; false when it would not fit. */
static bool put_string(char *buf, size_t *len, const char *str)
{
	size_t n = strlen(str) + 1;

	if (*len + n > REQUEST_MAX)
		return false;
	memcpy(buf + *len, str, n);
	*len += n;
	return true;
}

/*
 * The request: header, argv (argv[0] the program's path), envp. SBX1 when
 * the strings fit SBX_SPAWN_INLINE_MAX, else SBX2 (the caller sends them in
 * a memfd).
 */
static int build_request(const spawn_job *job, char *msg, size_t *len_out, sbx_error *err)
{
	struct sbx_spawn_request rq = {
		.magic = SBX_SPAWN_MAGIC,
		.cpu_seconds = job->limits.cpu_seconds,
		.max_processes = job->limits.max_processes,
		.address_space = job->limits.address_space,
		.max_file_bytes = job->limits.max_file_bytes,
		.flags = job->keep_leftovers ? SBX_SPAWN_KEEP_LEFTOVERS : 0,
	};
	size_t len = sizeof(rq);

	if (!put_string(msg, &len, job->prog))
		return sbx_error_set(err, -E2BIG, "the program path is too long");
	rq.argc = 1;
	for (size_t i = 1; job->argv[0] && job->argv[i]; i++, rq.argc++)
		if (!put_string(msg, &len, job->argv[i]))
			return sbx_error_set(err, -E2BIG, "the arguments are too long");
	for (size_t i = 0; job->envp[i]; i++, rq.envc++)
		if (!put_string(msg, &len, job->envp[i]))
			return sbx_error_set(err, -E2BIG, "the environment is too long");
	if (rq.argc + rq.envc > SBX_SPAWN_MAX_STRINGS)
		return sbx_error_set(err, -E2BIG, "too many arguments and variables");
	rq.strings_len = (uint32_t)(len - sizeof(rq));
	if (rq.strings_len > SBX_SPAWN_INLINE_MAX)
		rq.magic = SBX_SPAWN_MAGIC_FD;
	memcpy(msg, &rq, sizeof(rq));
	*len_out = len;
	return 0;
}

/* SBX2: the strings into a memfd (*fd), the message cut to its header. */
static int strings_out_of_band(char *msg, size_t *len, int *fd, sbx_error *err)
{
	size_t n = *len - sizeof(struct sbx_spawn_request);

	*fd = memfd_create("sandbox-argv", MFD_CLOEXEC);
	if (*fd < 0 || sbx_write_all(*fd, msg + sizeof(struct sbx_spawn_request), n) < 0)
		return sbx_error_set(err, -errno, "cannot stage the arguments: %s",
				     strerror(errno));
	*len = sizeof(struct sbx_spawn_request);
	return 0;
}

/* Asks the spawner to start the job; the fds are duplicated into the request, not consumed. */
static int spawn_remote(const spawn_job *job, const child_fds *f, child_proc *c, sbx_error *err)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * SBX_SPAWN_NFDS_MAX)];
	} cbuf;
	_cleanup_free_ char *msg = malloc(REQUEST_MAX);
	_cleanup_close_ int strings_fd = -1;
	struct sbx_spawn_event ev;
	size_t len = 0, nfds = SBX_SPAWN_NFDS;
	int pair[2], fds[SBX_SPAWN_NFDS_MAX], r;
	struct iovec iov;
	struct msghdr mh = {0};

	if (!msg)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	r = build_request(job, msg, &len, err);
	if (r >= 0 && ((struct sbx_spawn_request *)msg)->magic == SBX_SPAWN_MAGIC_FD) {
		r = strings_out_of_band(msg, &len, &strings_fd, err);
		fds[SBX_SPAWN_FD_STRINGS] = strings_fd;
		nfds = SBX_SPAWN_NFDS_MAX;
	}
	if (r < 0)
		return r;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		return sbx_error_set(err, -errno, "socketpair: %s", strerror(errno));
	fds[SBX_SPAWN_FD_CHANNEL] = pair[1];
	fds[SBX_SPAWN_FD_STDIN] = f->in;
	fds[SBX_SPAWN_FD_STDOUT] = f->out;
	fds[SBX_SPAWN_FD_STDERR] = f->err;
	fds[SBX_SPAWN_FD_STATUS] = f->status;
	fds[SBX_SPAWN_FD_CWD] = f->cwd;
	iov = (struct iovec){msg, len};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
	CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
	CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
	CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), fds, sizeof(int) * nfds);
	if (sendmsg(spawner_fd(), &mh, MSG_NOSIGNAL) != (ssize_t)len) {
		int e = errno;

		close(pair[0]);
		close(pair[1]);
		return sbx_error_set(err, -EPIPE, "the sandbox's spawner is gone (%s)",
				     strerror(e));
	}
	close(pair[1]);
	/* Its pid, or EOF when the spawner refused or could not fork (the status pipe says why). */
	if (recv(pair[0], &ev, sizeof(ev), 0) != (ssize_t)sizeof(ev) ||
	    ev.kind != SBX_SPAWN_STARTED) {
		close(pair[0]);
		return sbx_error_set(err, -EPIPE, "the sandbox's spawner did not start '%s'",
				     job->prog);
	}
	c->pid = (pid_t)ev.value;
	c->chan = pair[0];
	return 0;
}

static int spawn_local(const spawn_job *job, const child_fds *f, child_proc *c, sbx_error *err)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		return sbx_error_set(err, -errno, "fork: %s", strerror(errno));
	if (pid == 0)
		child(job, f, parent);
	setpgid(pid, pid); /* also in the parent: no window where kill(-pid) misses */
	c->pid = pid;
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

/* The fd to poll for the child's end. */
static int child_fd(const child_proc *c)
{
	return c->chan >= 0 ? c->chan : c->pidfd;
}

static void child_kill(child_proc *c)
{
	if (c->chan >= 0) {
		char k = SBX_SPAWN_KILL;

		(void)!send(c->chan, &k, 1, MSG_NOSIGNAL);
		return;
	}
	for (int i = 0; i < 3 && kill(-c->pid, SIGKILL) == 0; i++)
		;
}

/* True when the child has ended; *status its wait status. block: wait for it. */
static bool child_reap(child_proc *c, int *status, bool block)
{
	struct sbx_spawn_event ev;
	ssize_t n;

	if (c->chan < 0)
		return waitpid(c->pid, status, block || c->pidfd >= 0 ? 0 : WNOHANG) == c->pid;
	n = recv(c->chan, &ev, sizeof(ev), block ? 0 : MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	/* A guard that died without a word (tool code may kill it): count it as killed. */
	*status = n == (ssize_t)sizeof(ev) && ev.kind == SBX_SPAWN_EXITED ? ev.value : SIGKILL;
	return true;
}

static void child_close(child_proc *c)
{
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->chan >= 0)
		close(c->chan);
	c->pidfd = c->chan = -1;
}

/* Reads what is available on fd into the sink; returns false at EOF or error. */
static bool drain(int fd, spawn_sink_fn sink, void *userdata)
{
	char chunk[65536];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	if (sink)
		sink(userdata, chunk, (size_t)n);
	return true;
}

/* The wait: output to the sinks until both pipes close and the child ended. */
static void wait_child(const spawn_job *job, child_proc *c, int out_fd, int err_fd,
		       spawn_outcome *o, int *status)
{
	long long start = sbx_now_ms(), deadline = start + job->timeout_ms, last_progress = start;
	bool out_open = true, err_open = true, exited = false;

	fcntl(out_fd, F_SETFL, O_NONBLOCK);
	fcntl(err_fd, F_SETFL, O_NONBLOCK);
	while (out_open || err_open || !exited) {
		struct pollfd p[3] = {{out_open ? out_fd : -1, POLLIN, 0},
				      {err_open ? err_fd : -1, POLLIN, 0},
				      {exited ? -1 : child_fd(c), POLLIN, 0}};
		long long now = sbx_now_ms();

		if (!exited && job->cancelled && atomic_load(job->cancelled) && !o->cancelled) {
			o->cancelled = true;
			child_kill(c);
		}
		if (!exited && now >= deadline && !o->timed_out) {
			o->timed_out = true;
			child_kill(c);
		}
		if (exited && now >= deadline)
			break; /* a leftover holds the pipes open: stop reading */
		if (job->progress && now - last_progress >= 1000) {
			job->progress(job->progress_payload, (double)(now - start) / 1000.0,
				      (double)job->timeout_ms / 1000.0, "running");
			last_progress = now;
		}
		if (poll(p, 3, 100) < 0 && errno != EINTR)
			break;
		if (p[0].revents && !drain(out_fd, job->out, job->out_userdata))
			out_open = false;
		if (p[1].revents && !drain(err_fd, job->err, job->err_userdata))
			err_open = false;
		if (!exited && (p[2].revents || child_fd(c) < 0) && child_reap(c, status, false)) {
			exited = true;
			/* Background leftovers go too (unless kept); give the pipes 200 ms. */
			if (!job->keep_leftovers)
				child_kill(c);
			if (deadline > sbx_now_ms() + 200)
				deadline = sbx_now_ms() + 200;
		}
	}
	if (!exited) {
		child_kill(c);
		child_reap(c, status, true);
	}
	o->duration_ms = sbx_now_ms() - start;
}

int spawn_run(const spawn_job *job, spawn_outcome *o, sbx_error *err)
{
	int in_fd = -1, out[2] = {-1, -1}, errp[2] = {-1, -1}, st[2] = {-1, -1};
	child_proc c = CHILD_PROC_INIT;
	int status = 0, child_errno = 0, ret = 0;
	child_fds f;

	*o = (spawn_outcome){0};
	in_fd = memfd_create("sandbox-stdin", MFD_CLOEXEC);
	if (in_fd < 0 ||
	    (job->stdin_len && sbx_write_all(in_fd, job->stdin_data, job->stdin_len) < 0) ||
	    lseek(in_fd, 0, SEEK_SET) < 0) {
		ret = sbx_error_set(err, -errno, "cannot stage the input: %s", strerror(errno));
		goto done;
	}
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC) < 0) {
		ret = sbx_error_set(err, -errno, "pipe: %s", strerror(errno));
		goto done;
	}
	f = (child_fds){in_fd, out[1], errp[1], st[1], job->cwd_fd};
	ret = spawner_fd() >= 0 ? spawn_remote(job, &f, &c, err) : spawn_local(job, &f, &c, err);
	if (ret < 0)
		goto done;
	close(out[1]);
	close(errp[1]);
	close(st[1]);
	out[1] = errp[1] = st[1] = -1;
	if (read(st[0], &child_errno, sizeof(child_errno)) == (ssize_t)sizeof(child_errno)) {
		child_reap(&c, &status, true);
		ret = sbx_error_set(err, -child_errno, "cannot run '%s': %s", job->prog,
				    strerror(child_errno));
		goto done;
	}
	wait_child(job, &c, out[0], errp[0], o, &status);
	if (WIFEXITED(status)) {
		o->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		o->signal = WTERMSIG(status);
		o->exit_code = -o->signal;
	}
done:
	if (in_fd >= 0)
		close(in_fd);
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
		if (st[i] >= 0)
			close(st[i]);
	}
	child_close(&c);
	return ret;
}
