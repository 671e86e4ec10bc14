/* SPDX-License-Identifier: MIT */
/*
 * The options of an episode, which run, mcp and sweep share (cmd_run.h's
 * rows): each parses into arg_run with one wording for its errors. Also the
 * grader's path and stop signals, which every command that runs episodes
 * (serve too) needs.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_run.h"

sbx_run_opts arg_run = SBX_RUN_OPTS_INIT;

volatile sig_atomic_t cmd_run__interrupted;

static void on_signal(int sig)
{
	cmd_run__interrupted = sig;
}

void cmd_run__install_signals(void)
{
	cli_on_stop_signals(on_signal);
}

const char *cmd_run__grader(void)
{
	static char path[PATH_MAX];
	static const char *const rel[] = {"/", "/../libexec/sandboxctl/"};
	char self[PATH_MAX];
	ssize_t n;

	if (path[0])
		return path;
	snprintf(path, sizeof(path), "/proc/self/exe");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return path;
	self[n] = '\0';
	dirname(self);
	for (size_t i = 0; i < SBX_ELEMENTSOF(rel); i++) {
		char p[PATH_MAX];

		if (snprintf(p, sizeof(p), "%s%ssandbox-grader", self, rel[i]) < (int)sizeof(p) &&
		    access(p, X_OK) == 0) {
			snprintf(path, sizeof(path), "%s", p);
			break;
		}
	}
	return path;
}

/* "2g", "512m", "1.5GiB", "1073741824" -> bytes; 0 on a bad value. */
static uint64_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1;

	if (end == s || v <= 0)
		return 0;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1024.0, end++;
		break;
	case 'm':
	case 'M':
		mul = 1024.0 * 1024, end++;
		break;
	case 'g':
	case 'G':
		mul = 1024.0 * 1024 * 1024, end++;
		break;
	case '\0':
		break;
	default:
		return 0;
	}
	if (strcasecmp(end, "ib") == 0 || strcasecmp(end, "b") == 0)
		end += strlen(end);
	if (*end || v * mul > 1e15)
		return 0;
	return (uint64_t)(v * mul);
}

/* arg is a or b: 0 with *is_b saying which, else -1 with a message. */
static int parse_either(const char *name, const char *arg, const char *a, const char *b, bool *is_b)
{
	if (strcmp(arg, a) != 0 && strcmp(arg, b) != 0)
		return cli_error("--%s: expected '%s' or '%s', not '%s'", name, a, b, arg), -1;
	*is_b = strcmp(arg, b) == 0;
	return 0;
}

int cmd_run__parse_timeout(const char *text)
{
	long v = cli_option_long("timeout", text, 1, 7 * 24 * 3600, "a number of seconds");

	if (v < 0)
		return -1;
	arg_run.limits.timeout_s = (uint32_t)v;
	return 0;
}

int cmd_run__parse_memory(const char *text)
{
	arg_run.limits.memory = parse_size(text);
	if (!arg_run.limits.memory)
		return cli_error("--memory: '%s' is not a size (e.g. 2g, 512m)", text), -1;
	return 0;
}

int cmd_run__parse_cpus(const char *text)
{
	char *end;

	arg_run.limits.cpus = strtod(text, &end);
	if (end == text || *end || arg_run.limits.cpus <= 0 || arg_run.limits.cpus > 1024)
		return cli_error("--cpus: '%s' is not a positive number", text), -1;
	return 0;
}

int cmd_run__parse_pids(const char *text)
{
	long v = cli_option_long("pids", text, 8, 1 << 22, "a number >= 8");

	if (v < 0)
		return -1;
	arg_run.limits.pids = (uint32_t)v;
	return 0;
}

int cmd_run__parse_runtime(const char *text)
{
	if (strlen(text) > SBX_LIMITS_RUNTIME_MAX)
		return cli_error("--runtime: '%s' is longer than %d bytes", text,
				 SBX_LIMITS_RUNTIME_MAX),
		       -1;
	sbx_limits_set_runtime(&arg_run.limits, text);
	return 0;
}

int cmd_run__parse_seccomp(const char *text)
{
	return parse_either("seccomp", text, "sandbox", "default", &arg_run.limits.engine_seccomp);
}

int cmd_run__parse_network(const char *text)
{
	return parse_either("network", text, "none", "published", &arg_run.published);
}

int cmd_run__parse_grace(const char *text)
{
	long v = cli_option_long("grace", text, 1, 3600, "a number of seconds");

	if (v < 0)
		return -1;
	arg_run.limits.grace_s = (uint32_t)v;
	return 0;
}

int cmd_run__parse_record(const char *text)
{
	char *end;
	double s = strtod(text, &end);

	if (end == text || *end || s < 0 || s > 3600)
		return cli_error("--record: '%s' is not a number of seconds (0: off)", text), -1;
	/* The option's 0 means off; the struct's 0 means the default. */
	arg_run.record_s = s == 0 ? -1 : s < 0.5 ? 0.5 : s;
	return 0;
}

int cmd_run__parse_seed(const char *text)
{
	char *end;

	errno = 0;
	arg_run.seed = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || arg_run.seed > SBX_TASK_SEED_MAX)
		return cli_error("--seed: '%s' is not a number 0..%llu", text, SBX_TASK_SEED_MAX),
		       -1;
	arg_run.seeded = true;
	return 0;
}
