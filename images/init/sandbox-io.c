/* SPDX-License-Identifier: MIT */
/*
 * sandbox-io: the first program of every `/v1/sandboxes` exec and file
 * transfer, started by sandbox-spawner as the agent's uid (1001), so what it
 * runs, reads or writes is decided by the kernel's permissions for that uid,
 * inside the sandbox's own mount namespace (nothing here can name a host
 * path). The server (uid 1000) cannot change uid, and a path it opened for
 * tool code would carry its rights, not the agent's.
 *
 *   sandbox-io exec DIR PROG [ARG...]  enters DIR, runs PROG found on PATH:
 *                                      127 when there is no such program,
 *                                      126 when it cannot run or DIR is not there
 *   sandbox-io read DIR PATH MAX       PATH's bytes (relative: to DIR) on stdout
 *   sandbox-io write DIR PATH          stdin into PATH, parent directories made
 *
 * read and write exit 0 or with the errno that stopped them (ENOENT, EISDIR,
 * EACCES, EFBIG past MAX, ...), a line on stderr saying what. Only libc;
 * built static like the other helpers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(const char *what, const char *path, int e)
{
	fprintf(stderr, "sandbox-io: %s %s: %s\n", what, path, strerror(e));
	return e > 0 && e < 126 ? e : EIO;
}

static int run(const char *dir, char **argv)
{
	if (chdir(dir) < 0) {
		fprintf(stderr, "sandbox-io: cannot enter %s: %s\n", dir, strerror(errno));
		return 126;
	}
	execvp(argv[0], argv);
	fprintf(stderr, "sandbox-io: %s: %s\n", argv[0],
		errno == ENOENT ? "command not found" : strerror(errno));
	return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
}

static int copy(int in, int out, unsigned long long max, unsigned long long *total)
{
	static char buf[1 << 16];

	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf)), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return 0;
		*total += (unsigned long long)n;
		if (*total > max)
			return EFBIG;
		while (w < n) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				return errno;
			w += k;
		}
	}
}

static int read_file(const char *path, unsigned long long max)
{
	unsigned long long total = 0;
	struct stat st;
	int fd, e;

	/* O_NONBLOCK: a FIFO does not hold the open; cleared for the reads. */
	fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fail("cannot read", path, errno);
	if (fstat(fd, &st) < 0)
		return fail("cannot read", path, errno);
	if (S_ISDIR(st.st_mode))
		return fail("cannot read", path, EISDIR);
	if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max)
		return fail("cannot read", path, EFBIG);
	fcntl(fd, F_SETFL, 0);
	e = copy(fd, 1, max, &total);
	return e ? fail("cannot read", path, e) : 0;
}

/* mkdir -p of path's parent: 0, or the errno of the directory that could not be made. */
static int make_parents(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0775) < 0 && errno != EEXIST)
			return errno;
		*p = '/';
	}
	return 0;
}

static int write_file(const char *path)
{
	unsigned long long total = 0;
	int fd, e;

	signal(SIGXFSZ, SIG_IGN); /* past RLIMIT_FSIZE: EFBIG, not a kill */
	e = make_parents(path);
	if (e)
		return fail("cannot write", path, e);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0664);
	if (fd < 0)
		return fail("cannot write", path, errno);
	e = copy(0, fd, ~0ULL, &total);
	if (!e && close(fd) < 0)
		e = errno;
	return e ? fail("cannot write", path, e) : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "exec") == 0)
		return run(argv[2], argv + 3);
	if (argc == 5 && strcmp(argv[1], "read") == 0) {
		if (chdir(argv[2]) < 0)
			return fail("cannot enter", argv[2], errno);
		return read_file(argv[3], strtoull(argv[4], NULL, 10));
	}
	if (argc == 4 && strcmp(argv[1], "write") == 0) {
		if (chdir(argv[2]) < 0)
			return fail("cannot enter", argv[2], errno);
		return write_file(argv[3]);
	}
	fputs("Usage: sandbox-io exec DIR PROG [ARG...] | read DIR PATH MAX | write DIR PATH\n"
	      "Runs for sandbox-mcp as the agent's uid (the /v1/sandboxes API).\n",
	      stderr);
	return 2;
}
