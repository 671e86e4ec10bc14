/* SPDX-License-Identifier: MIT */
/*
 * sandbox-init's check that dropping capabilities left none, under the
 * kernel the container really runs on: Linux (runc) or gVisor's Sentry
 * (runsc). Included by sandbox-init.c only (built as one file, static, libc
 * only).
 *
 * gVisor implements capabilities itself and has no ambient set: its
 * /proc/self/status shows CapInh, CapPrm, CapEff and CapBnd but no CapAmb
 * line, and prctl(PR_CAP_AMBIENT, ...) fails with EINVAL. Linux shows all
 * five. Under Linux the check is what it always was (all five lines zero),
 * plus the kernel's own answers below; under gVisor the four lines it has
 * must be zero, and the missing one is accepted only when the kernel says
 * that set does not exist. Both then verify by asking the kernel: capget
 * returns nothing, the bounding set reads empty cap by cap, and setuid(0)
 * is refused.
 */
#pragma once

#include <sys/utsname.h>

enum { CAP_LINE_INH, CAP_LINE_PRM, CAP_LINE_EFF, CAP_LINE_BND, CAP_LINE_AMB, N_CAP_LINES };
static const char *const cap_line_names[N_CAP_LINES] = {"CapInh", "CapPrm", "CapEff", "CapBnd",
							"CapAmb"};

/*
 * gVisor, by what uname(2) answers: the Sentry reports a fixed kernel
 * ("4.4.0", "#1 SMP Sun Jan 10 15:06:54 PST 2016") whatever the host runs.
 * A syscall's answer, not a file or a variable the image or the create
 * request could set. Misreading a Linux kernel as gVisor weakens nothing:
 * there CapAmb exists and must be zero, as on the Linux path.
 */
static bool kernel_is_gvisor(void)
{
	struct utsname u;

	return uname(&u) == 0 && strcmp(u.sysname, "Linux") == 0 &&
	       strcmp(u.release, "4.4.0") == 0 &&
	       strcmp(u.version, "#1 SMP Sun Jan 10 15:06:54 PST 2016") == 0;
}

/*
 * Sets *seen bit i when line cap_line_names[i] is there and zero, and
 * *seccomp to the Seccomp line's mode (0 none, 2 filter; -1 no line); false
 * when a Cap line is not zero or the file cannot be read.
 */
static bool cap_lines_zero(unsigned *seen, int *seccomp)
{
	char line[256];
	bool ok = true;
	FILE *f = fopen("/proc/self/status", "re");

	*seen = 0;
	*seccomp = -1;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		const char *colon = strchr(line, ':');

		if (strncmp(line, "Seccomp:", 8) == 0 && line[8] == '\t' && line[9] >= '0' &&
		    line[9] <= '9')
			*seccomp = line[9] - '0';
		if (strncmp(line, "Cap", 3) != 0 || !colon)
			continue;
		if (strspn(colon + 1, " \t0\n") != strlen(colon + 1)) {
			ok = false;
			continue;
		}
		for (int i = 0; i < N_CAP_LINES; i++)
			if ((size_t)(colon - line) == strlen(cap_line_names[i]) &&
			    strncmp(line, cap_line_names[i], (size_t)(colon - line)) == 0)
				*seen |= 1u << i;
	}
	fclose(f);
	return ok;
}

/*
 * True when this process holds no capability and cannot get one back. On
 * success *kernel is "Linux" or "gVisor", *verified says what was checked
 * (static strings, for the log) and *seccomp is the process's seccomp mode
 * as the kernel reports it (runsc applies the OCI profile only with
 * --oci-seccomp: 0 without it).
 */
static bool capabilities_empty(const char **kernel, const char **verified, int *seccomp)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	const unsigned all = (1u << N_CAP_LINES) - 1, no_amb = all & ~(1u << CAP_LINE_AMB);
	bool gvisor = kernel_is_gvisor();
	unsigned seen;

	if (!cap_lines_zero(&seen, seccomp))
		return false;
	if (seen != all) {
		/* Only gVisor may lack CapAmb, and only when it has no ambient set at all. */
		if (!gvisor || seen != no_amb)
			return false;
		errno = 0;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, 0, 0, 0) != -1 || errno != EINVAL)
			return false;
	}
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0 || d[0].effective || d[1].effective || d[0].permitted ||
	    d[1].permitted || d[0].inheritable || d[1].inheritable)
		return false;
	for (int c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) > 0)
			return false;
	if (setuid(0) == 0 || errno != EPERM)
		return false;
	*kernel = gvisor ? "gVisor" : "Linux";
	*verified = seen == all ? "CapInh CapPrm CapEff CapBnd CapAmb 0 in /proc/self/status, "
				  "capget 0, bounding set empty, setuid(0) refused"
				: "CapInh CapPrm CapEff CapBnd 0 in /proc/self/status, no ambient "
				  "set (PR_CAP_AMBIENT: EINVAL), capget 0, bounding set empty, "
				  "setuid(0) refused";
	return true;
}
