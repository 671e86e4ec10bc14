/* SPDX-License-Identifier: MIT */
/*
 * The final screenshot shows the result: when the agent changed the open
 * file through the tools (not Calc), Calc still shows the file as it was.
 * Stopping Calc makes PID 1 start it again on the saved file (sandbox-init
 * restarts it), and the tool waits for its window before the shot.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <X11/Xutil.h>

#include "sbx/clock.h"
#include "reload.h"

#define OFFICE_MAX_PIDS 16

/* The boot time, for turning a process's start (ticks since boot) into wall time. */
static long long boot_time(void)
{
	char line[256];
	long long bt = -1;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	fclose(f);
	return bt;
}

/* The name and start time (seconds since the epoch) of pid, from /proc/PID/stat. */
static int proc_stat(pid_t pid, char *comm, size_t len, double *start, long long btime)
{
	char path[64], buf[1024], *open, *close;
	unsigned long long ticks;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* comm may hold spaces and parentheses: it ends at the last ')'. */
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open)
		return -EPROTO;
	snprintf(comm, len, "%.*s", (int)(close - open - 1), open + 1);
	/* Field 22 (starttime) is the 20th after the ')'. */
	if (sscanf(close + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
		   "%*d %*d %*d %llu",
		   &ticks) != 1)
		return -EPROTO;
	*start = (double)btime + (double)ticks / (double)sysconf(_SC_CLK_TCK);
	return 0;
}

static bool is_office(const char *comm)
{
	return strcmp(comm, "soffice.bin") == 0 || strcmp(comm, "oosplash") == 0 ||
	       strcmp(comm, "soffice") == 0 || strcmp(comm, "soffice.sh") == 0;
}

int gui_office_reload(const char *path, bool *reloaded, sbx_error *err)
{
	pid_t pids[OFFICE_MAX_PIDS];
	double calc_start = -1;
	long long btime = boot_time();
	struct dirent *de;
	struct stat st;
	size_t n = 0;
	DIR *d;

	*reloaded = false;
	if (stat(path, &st) < 0)
		return sbx_error_set(err, -errno, "'%s': %s", path, strerror(errno));
	d = opendir("/proc");
	if (!d || btime < 0) {
		if (d)
			closedir(d);
		return sbx_error_set(err, -EIO, "cannot read /proc");
	}
	while ((de = readdir(d)) && n < OFFICE_MAX_PIDS) {
		char comm[64];
		double start = 0;
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (proc_stat(pid, comm, sizeof(comm), &start, btime) < 0 || !is_office(comm))
			continue;
		pids[n++] = pid;
		if (strcmp(comm, "soffice.bin") == 0)
			calc_start = start;
	}
	closedir(d);
	/* ctime, not mtime: a copy (tar) keeps the old mtime, but not the old ctime. */
	if (calc_start < 0 ||
	    (double)st.st_ctim.tv_sec + (double)st.st_ctim.tv_nsec / 1e9 <= calc_start)
		return 0;
	for (size_t i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	/* Gone before we look for the new window, or the old one would be found. */
	for (int tries = 0; tries < 100; tries++) {
		bool alive = false;

		for (size_t i = 0; i < n && !alive; i++)
			alive = kill(pids[i], 0) == 0;
		if (!alive)
			break;
		sbx_sleep_ms(20);
	}
	*reloaded = true;
	return 0;
}

static bool named_below(Display *dpy, Window w, const char *needle, int depth)
{
	Window root, parent, *kids = NULL;
	unsigned int n = 0;
	bool found = false;

	if (!XQueryTree(dpy, w, &root, &parent, &kids, &n))
		return false;
	for (unsigned int i = 0; i < n && !found; i++) {
		char *name = NULL;

		if (XFetchName(dpy, kids[i], &name) && name) {
			found = strstr(name, needle) != NULL;
			XFree(name);
		}
		if (!found && depth < 2)
			found = named_below(dpy, kids[i], needle, depth + 1);
	}
	if (kids)
		XFree(kids);
	return found;
}

bool gui_window_named(gui_session *s, const char *needle)
{
	return named_below(s->dpy, s->root, needle, 0);
}
