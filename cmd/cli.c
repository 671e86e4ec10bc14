/* SPDX-License-Identifier: MIT */
#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sandboxctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_on_stop_signals(void (*handler)(int sig))
{
	struct sigaction sa = {.sa_handler = handler};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void cli_count_stop_signal(volatile sig_atomic_t *count, const char *first, const char *second)
{
	const char *msg;

	if (*count < 2)
		(*count)++;
	msg = *count == 1 ? first : second;
	/* write(2) and strlen are async-signal-safe; stdio is not. */
	(void)!write(STDERR_FILENO, msg, strlen(msg));
}

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	}
	return false;
}

/* The long option closest to arg ("--tsk=x" → "task"), for "did you mean". */
static const char *closest_option(const char *arg, const struct option *longopts)
{
	const char *names[128];
	char word[65];
	size_t n = 0, len;

	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	arg += 2;
	len = strcspn(arg, "=");
	if (len >= sizeof(word))
		return NULL;
	memcpy(word, arg, len);
	word[len] = 0;
	for (; longopts[n].name && n + 1 < SBX_ELEMENTSOF(names); n++)
		names[n] = longopts[n].name;
	names[n++] = "verbose"; /* global, taken out before the command parses its options */
	return sbx_suggest(word, names, n);
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	       const struct option *longopts, int *idx)
{
	char spec[64];
	const char *arg, *guess;
	bool permute = shortopts[0] == '+';
	int c;

	/* ':' first (after '+') makes getopt tell a missing value from an unknown option. */
	snprintf(spec, sizeof(spec), "%s:%s", permute ? "+" : "", shortopts + permute);
	opterr = 0;
	c = getopt_long(argc, argv, spec, longopts, idx);
	if (c != '?' && c != ':')
		return c;
	arg = optopt && optopt < 0x100 && c == '?' ? NULL : argv[optind - 1];
	if (c == ':') {
		cli_error("%s: option '%s' needs a value (see 'sandboxctl %s --help')", cmd,
			  arg ? arg : "?", cmd);
		return CLI_OPT_ERROR;
	}
	if (!arg) {
		cli_error("%s: unknown option '-%c' (see 'sandboxctl %s --help')", cmd, optopt,
			  cmd);
		return CLI_OPT_ERROR;
	}
	guess = closest_option(arg, longopts);
	if (guess)
		cli_error("%s: unknown option '%s'; did you mean '--%s'? (see 'sandboxctl %s "
			  "--help')",
			  cmd, arg, guess, cmd);
	else
		cli_error("%s: unknown or ambiguous option '%s' (see 'sandboxctl %s --help')", cmd,
			  arg, cmd);
	return CLI_OPT_ERROR;
}

long cli_option_long(const char *name, const char *text, long min, long max, const char *what)
{
	long v = cli_parse_long(text, min, max);

	if (v >= 0)
		return v;
	if (what)
		cli_error("--%s: '%s' is not %s", name, text, what);
	else
		cli_error("--%s: '%s' is not a number %ld..%ld", name, text, min, max);
	return -1;
}

int cli_no_arguments(const char *cmd, int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	cli_error("%s: unexpected argument '%s' (see 'sandboxctl %s --help')", cmd, argv[optind],
		  cmd);
	return CLI_OPT_ERROR;
}

long cli_parse_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	return v;
}
