/* SPDX-License-Identifier: MIT */
/* Owner strings "<hostname>:<pid>:<start-ticks>" and whether their process is gone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbx/cleanup.h"
#include "sbx/labels.h"

/* Field 22 of /proc/<pid>/stat, after the ")" that ends the command name. */
static int start_ticks(int pid, unsigned long long *out, sbx_error *err)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[64], line[4096], *p;
	unsigned long long ticks;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return -ESRCH;
		return sbx_error_set(err, -errno, "'%s': %s", path, strerror(errno));
	}
	if (!fgets(line, sizeof(line), f))
		return sbx_error_set(err, -EIO, "'%s': cannot read", path);
	p = strrchr(line, ')');
	if (!p)
		return sbx_error_set(err, -EIO, "'%s': unexpected format", path);
	/* After ")" comes field 3 (state): a zombie has exited, only not been
	 * reaped yet (a killed service whose parent died too waits for init),
	 * so its sandboxes are as orphaned as those of a reaped one. */
	if (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
		return -ESRCH;
	/* Skip to field 22. */
	p++;
	for (field = 2; field < 21 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &ticks) != 1)
		return sbx_error_set(err, -EIO, "'%s': unexpected format", path);
	*out = ticks;
	return 0;
}

int sbx_label_owner_of_pid(int pid, char **out, sbx_error *err)
{
	char host[256];
	unsigned long long ticks;
	int r;

	r = start_ticks(pid, &ticks, err);
	if (r == -ESRCH)
		return sbx_error_set(err, r, "process %d does not exist", pid);
	if (r < 0)
		return r;
	if (gethostname(host, sizeof(host)) < 0)
		return sbx_error_set(err, -errno, "gethostname: %s", strerror(errno));
	host[sizeof(host) - 1] = '\0';
	if (asprintf(out, "%s:%d:%llu", host, pid, ticks) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

int sbx_label_owner_self(char **out, sbx_error *err)
{
	return sbx_label_owner_of_pid((int)getpid(), out, err);
}

int sbx_label_owner_gone(const char *owner, bool *gone, sbx_error *err)
{
	char host[256], *end;
	const char *c1, *c2;
	unsigned long long want, have;
	long pid;
	int r;

	*gone = false;
	if (!owner)
		return 0;
	/* The hostname may not contain ':' but the split is from the right anyway. */
	c2 = strrchr(owner, ':');
	if (!c2 || c2 == owner)
		return 0;
	c1 = c2 - 1;
	while (c1 > owner && *c1 != ':')
		c1--;
	if (*c1 != ':')
		return 0;
	if (gethostname(host, sizeof(host)) < 0)
		return sbx_error_set(err, -errno, "gethostname: %s", strerror(errno));
	host[sizeof(host) - 1] = '\0';
	if ((size_t)(c1 - owner) != strlen(host) || strncmp(owner, host, strlen(host)) != 0)
		return 0; /* another host: we cannot know */
	errno = 0;
	pid = strtol(c1 + 1, &end, 10);
	if (errno || end != c2 || pid <= 0 || pid > 4194304)
		return 0;
	want = strtoull(c2 + 1, &end, 10);
	if (*end || end == c2 + 1)
		return 0;
	r = start_ticks((int)pid, &have, err);
	if (r == -ESRCH) {
		*gone = true;
		return 0;
	}
	if (r < 0)
		return r;
	*gone = have != want; /* the pid was reused by another process */
	return 0;
}
