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

/* The option cli_getopt's answer c stands for: 0x100 + its index, or its short name. */
static const cli_option *option_of(const cli_option *opts, int c)
{
	for (size_t i = 0; opts[i].name; i++)
		if ((size_t)c == 0x100 + i || (opts[i].short_name && c == opts[i].short_name))
			return &opts[i];
	return NULL;
}

int cli_parse_options(const char *cmd, int argc, char **argv, const cli_option *opts,
		      void (*help)(void))
{
	struct option longopts[CLI_MAX_OPTIONS + 2];
	char shortopts[2 * CLI_MAX_OPTIONS + 2] = "h";
	size_t n, len = 1;
	int c;

	for (n = 0; opts[n].name; n++) {
		bool valued = opts[n].value || opts[n].parse;

		assert(n < CLI_MAX_OPTIONS);
		longopts[n] =
			(struct option){opts[n].name, valued ? required_argument : no_argument,
					NULL, 0x100 + (int)n};
		if (opts[n].short_name) {
			shortopts[len++] = opts[n].short_name;
			if (valued)
				shortopts[len++] = ':';
		}
	}
	longopts[n] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[n + 1] = (struct option){0};
	shortopts[len] = '\0';
	optind = 1;
	while ((c = cli_getopt(cmd, argc, argv, shortopts, longopts, NULL)) != -1) {
		const cli_option *o = option_of(opts, c);

		if (c == 'h') {
			help();
			return 0;
		}
		if (!o) /* CLI_OPT_ERROR: cli_getopt said why */
			return -EXIT_USAGE;
		if (o->parse) {
			if (o->parse(optarg) < 0)
				return -EXIT_USAGE;
		} else if (o->value) {
			*o->value = optarg;
		} else {
			*o->flag = true;
			if (o->also)
				*o->also = true;
		}
	}
	return 1;
}

int cli_parse_options_only(const char *cmd, int argc, char **argv, const cli_option *opts,
			   void (*help)(void))
{
	int r = cli_parse_options(cmd, argc, argv, opts, help);

	if (r > 0 && cli_no_arguments(cmd, argc, argv) < 0)
		return -EXIT_USAGE;
	return r;
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

void cli_longopts_add(cli_longopts *l, const char *const *names)
{
	for (; *names; names++) {
		size_t len = strcspn(*names, "=");
		char *name = l->names[l->n];

		assert(l->n < CLI_MAX_LONGOPTS && len < sizeof(l->names[0]));
		memcpy(name, *names, len);
		name[len] = '\0';
		l->opts[l->n++] = (struct option){
			name, (*names)[len] ? required_argument : no_argument, NULL, CLI_OPT_LONG};
	}
	l->opts[l->n] = (struct option){"help", no_argument, NULL, 'h'};
	l->opts[l->n + 1] = (struct option){0};
}

int cli_next_option(const char *cmd, int argc, char **argv, const cli_longopts *l,
		    void (*help)(void), const char **name)
{
	int idx = 0;
	int c = cli_getopt(cmd, argc, argv, "+h", l->opts, &idx);

	switch (c) {
	case -1:
		return 0;
	case CLI_OPT_LONG:
		*name = l->opts[idx].name;
		return 1;
	case 'h':
		help();
		return CLI_OPT_HELP;
	default:
		return CLI_OPT_ERROR;
	}
}

bool cli_name_in(const char *name, const char *const *names)
{
	size_t len = strlen(name);

	for (; *names; names++)
		if (strncmp(*names, name, len) == 0 &&
		    ((*names)[len] == '\0' || (*names)[len] == '='))
			return true;
	return false;
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
