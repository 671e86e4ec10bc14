/* SPDX-License-Identifier: MIT */
/*
 * Option tables (cli.h's cli_option): the one option loop every command
 * runs, and --help's list of options printed from the same rows, so an
 * option cannot be accepted and left out of --help, or the other way round.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --help's columns: an option at 2, its text at 21 (both moved by indent), lines up to 79. */
#define HELP_INDENT 2
#define HELP_COLUMN 21
#define HELP_WIDTH  79

/* The option rows of a table, included tables' rows in their place. */
typedef struct option_rows {
	const cli_option *rows[CLI_MAX_OPTIONS];
	size_t n;
} option_rows;

static bool is_end(const cli_option *o)
{
	return !o->name && !o->usage && !o->help && !o->heading && !o->text && !o->include;
}

static void flatten(const cli_option *opts, option_rows *out)
{
	for (; !is_end(opts); opts++) {
		if (opts->include) {
			flatten(opts->include, out);
		} else if (opts->name) {
			assert(out->n < CLI_MAX_OPTIONS);
			out->rows[out->n++] = opts;
		}
	}
}

static bool takes_value(const cli_option *o)
{
	return o->value || o->parse || o->pass;
}

/* " --name text" onto *o->pass: a word another program's command line takes as it is. */
static int pass_on(const cli_option *o, const char *text)
{
	char *n;

	if (!*text || strpbrk(text, " \t\n'\"")) {
		cli_error("--%s: '%s' must be one word (no spaces or quotes)", o->name, text);
		return -1;
	}
	if (asprintf(&n, "%s --%s %s", *o->pass ? *o->pass : "", o->name, text) < 0) {
		cli_error("out of memory");
		return -1;
	}
	free(*o->pass);
	*o->pass = n;
	return 0;
}

static int apply(const cli_option *o, const char *text)
{
	if (o->seen)
		*o->seen = true;
	if (o->parse)
		return o->parse(text);
	if (o->pass)
		return pass_on(o, text);
	if (o->value) {
		*o->value = text;
	} else {
		*o->flag = true;
		if (o->also)
			*o->also = true;
	}
	return 0;
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_option *opts, void (*help)(void),
	      unsigned flags)
{
	struct option longopts[CLI_MAX_OPTIONS + 2];
	char shortopts[2 * CLI_MAX_OPTIONS + 3];
	option_rows f = {0};
	size_t len = 0;
	int c;

	flatten(opts, &f);
	if (flags & CLI_IN_ORDER)
		shortopts[len++] = '+';
	shortopts[len++] = 'h';
	for (size_t i = 0; i < f.n; i++) {
		const cli_option *o = f.rows[i];

		longopts[i] =
			(struct option){o->name, takes_value(o) ? required_argument : no_argument,
					NULL, 0x100 + (int)i};
		if (o->short_name) {
			shortopts[len++] = o->short_name;
			if (takes_value(o))
				shortopts[len++] = ':';
		}
	}
	longopts[f.n] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[f.n + 1] = (struct option){0};
	shortopts[len] = '\0';
	optind = 1;
	while ((c = cli_getopt(cmd, argc, argv, shortopts, longopts, NULL)) != -1) {
		const cli_option *o = NULL;

		if (c == 'h') {
			if (help)
				help();
			else
				cli_print_options(opts);
			return 0;
		}
		for (size_t i = 0; i < f.n && !o; i++)
			if ((size_t)c == 0x100 + i || (f.rows[i]->short_name == c && c))
				o = f.rows[i];
		if (!o) /* CLI_OPT_ERROR: cli_getopt said why */
			return -EXIT_USAGE;
		if (apply(o, optarg) < 0)
			return -EXIT_USAGE;
	}
	if ((flags & CLI_NO_ARGUMENTS) && cli_no_arguments(cmd, argc, argv) < 0)
		return -EXIT_USAGE;
	return 1;
}

int cli_parse_options(const char *cmd, int argc, char **argv, const cli_option *opts,
		      void (*help)(void))
{
	return cli_parse(cmd, argc, argv, opts, help, 0);
}

int cli_parse_options_only(const char *cmd, int argc, char **argv, const cli_option *opts,
			   void (*help)(void))
{
	return cli_parse(cmd, argc, argv, opts, help, CLI_NO_ARGUMENTS);
}

/* The help text's lines, the first where the cursor is, the others at column. */
static void print_lines(const char *text, size_t column)
{
	for (const char *line = text; *line;) {
		size_t n = strcspn(line, "\n");

		if (line != text)
			printf("%*s", (int)column, "");
		printf("%.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
}

static const char *usage_of(const cli_option *o, char *buf, size_t size)
{
	if (o->usage)
		return o->usage;
	snprintf(buf, size, "--%s", o->name);
	return buf;
}

/* An option's left column, then its text: at the column, or 3 spaces on when wider. */
static void print_row(const cli_option *o, size_t column)
{
	column += o->indent;
	char buf[64];
	int n = printf("%*s%s", (int)(HELP_INDENT + o->indent), "", usage_of(o, buf, sizeof(buf)));

	printf("%*s", n >= 0 && (size_t)n + 2 <= column ? (int)(column - (size_t)n) : 3, "");
	print_lines(o->help, column);
}

/* An included table's usages together, wrapped, its help under them. */
static void print_group(const cli_option *g, size_t column)
{
	size_t indent = HELP_INDENT + g->indent, len = 0;
	size_t sep = strlen(g->group), sep_end = sep;
	option_rows f = {0};

	while (sep_end > 0 && g->group[sep_end - 1] == ' ')
		sep_end--; /* what ends a line the list goes on from */
	flatten(g->include, &f);
	for (size_t i = 0; i < f.n; i++) {
		char buf[64];
		const char *u = f.rows[i]->short_usage ? f.rows[i]->short_usage
						       : usage_of(f.rows[i], buf, sizeof(buf));

		if (i > 0 && len + sep + strlen(u) + sep_end <= HELP_WIDTH) {
			len += (size_t)printf("%s%s", g->group, u);
			continue;
		}
		if (i > 0)
			printf("%.*s\n", (int)sep_end, g->group);
		printf("%*s%s", (int)indent, "", u);
		len = indent + strlen(u);
	}
	putchar('\n');
	if (g->help) {
		printf("%*s", (int)(column + g->indent), "");
		print_lines(g->help, column + g->indent);
	}
}

static size_t print_table(const cli_option *opts, size_t column)
{
	for (; !is_end(opts); opts++) {
		if (opts->column)
			column = opts->column;
		if (opts->text)
			fputs(opts->text, stdout);
		else if (opts->heading)
			printf("\n%s\n", opts->heading);
		else if (opts->include && opts->group)
			print_group(opts, column);
		else if (opts->include)
			column = print_table(opts->include, column);
		else if (opts->help)
			print_row(opts, column);
	}
	return column;
}

void cli_print_options(const cli_option *opts)
{
	print_table(opts, HELP_COLUMN);
}
