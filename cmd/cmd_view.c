/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl view [DIR ...] [--port N] [--listen ADDR]: runs and sweeps in a
 * browser, from a read-only server on loopback behind a random token.
 * sandboxctl report DIR -o FILE: the same pages as one self-contained file.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "sbx/view.h"

static const char *arg_listen = "127.0.0.1";
static unsigned arg_port;
static const char *arg_output;

static int parse_port(const char *text)
{
	long v = cli_parse_long(text, 0, 65535);

	if (v < 0) {
		cli_error("view: --port: '%s' is not a port number", text);
		return -EINVAL;
	}
	arg_port = (unsigned)v;
	return 0;
}

static const cli_option view_options[] = {
	{.text = "Usage: sandboxctl view [DIR ...] [--port N] [--listen ADDR]\n"
		 "\n"
		 "Serves the runs and sweeps found in each DIR (default: ./runs and ./sweeps,\n"
		 "those that exist) as web pages, and prints the URL to open. A DIR may be a\n"
		 "directory of runs or sweeps, or one run or sweep directory.\n"
		 "\n"
		 "  runs list   every run and sweep, newest first, filterable by task, agent and\n"
		 "              status\n"
		 "  run page    status and why it ended, the phase timeline, the grading grid\n"
		 "              (each graded cell green or red, expected and got on hover), the\n"
		 "              transcript as a conversation, limits, hardening, provenance,\n"
		 "              the final screenshot, a GUI run's filmstrip (run --record),\n"
		 "              the model's turns (--agent llm), the raw files\n"
		 "  sweep page  pass rate with 95% intervals, mean score, pass@k, errors and\n"
		 "              times per task x agent, charts, every episode linked, and\n"
		 "              compared with another sweep (paired, as 'sweep compare')\n"
		 "\n"
		 "A run or sweep still being written updates in the page as it grows.\n"
		 "\n"
		 "The server is read-only and listens on loopback only. The URL carries a\n"
		 "random token: a request without it gets 401. Files are served only from\n"
		 "beneath the DIRs: '..' and symlinks pointing out are refused (404), and\n"
		 "connection.json (a live run's relay token) is never served.\n"},
	{.heading = "Options:", .column = 17},
	{"port", .parse = parse_port, .usage = "--port N",
	 .help = "port to listen on (default: any free one)"},
	{"listen", .value = &arg_listen, .usage = "--listen ADDR",
	 .help = "loopback address (default 127.0.0.1; ::1 for IPv6)"},
	{.usage = "-h, --help", .help = "show this help"},
	{.text = "\nRuns until interrupted (Ctrl-C). Exit status: 0 after an interrupt,\n"
		 "2 usage or a DIR that cannot be opened, 3 the port cannot be bound.\n"},
	{0},
};

static const cli_option report_options[] = {
	{.text = "Usage: sandboxctl report DIR -o FILE\n"
		 "\n"
		 "Writes the page of DIR (a run directory, or a sweep directory followed by\n"
		 "the pages of its episodes, at most 200) to FILE as one HTML document with\n"
		 "everything inlined: styles, script, the screenshot as a data URI (up to\n"
		 "4 MiB). It references nothing outside itself, and its Content-Security-\n"
		 "Policy forbids any network request, so it can be attached to a paper or a\n"
		 "pull request and opened offline.\n"},
	{.heading = "Options:"},
	{"output", 'o', .value = &arg_output, .usage = "-o, --output FILE",
	 .help = "where to write (required)"},
	{.usage = "-h, --help", .help = "show this help"},
	{.text = "\nExit status: 0 written, 2 usage or DIR is neither a run nor a sweep.\n"},
	{0},
};

int cmd_view(int argc, char **argv)
{
	const char *defaults[] = {"runs", "sweeps"};
	const char **roots;
	size_t n_roots = 0;
	sbx_error err = SBX_ERROR_INIT;
	sbx_view_server *srv = NULL;
	sigset_t stop_signals;
	int r, sig;

	r = cli_parse_options("view", argc, argv, view_options, NULL);
	if (r <= 0)
		return -r;
	roots = calloc((size_t)(argc - optind) + 2, sizeof(*roots));
	if (!roots)
		return EXIT_ENGINE;
	for (int i = optind; i < argc; i++)
		roots[n_roots++] = argv[i];
	if (!n_roots) {
		struct stat st;

		for (size_t i = 0; i < 2; i++)
			if (stat(defaults[i], &st) == 0 && S_ISDIR(st.st_mode))
				roots[n_roots++] = defaults[i];
		if (!n_roots) {
			cli_error("view: no ./runs or ./sweeps here; name the directories to view");
			free(roots);
			return EXIT_USAGE;
		}
	}
	/*
	 * Blocked before the server's threads exist, so they inherit the mask and
	 * Ctrl-C reaches sigwait below, not whichever thread the kernel picks.
	 */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	r = sbx_view_server_start(&(sbx_view_opts){.roots = roots,
						   .n_roots = n_roots,
						   .listen = arg_listen,
						   .port = (uint16_t)arg_port},
				  &srv, &err);
	free(roots);
	if (r < 0) {
		cli_error("view: %s", sbx_error_message(&err));
		return r == -EADDRINUSE ? EXIT_ENGINE : EXIT_USAGE;
	}
	printf("%s\n", sbx_view_server_url(srv));
	fflush(stdout);
	fprintf(stderr, "sandboxctl: view: serving on loopback; Ctrl-C stops\n");
	while (sigwait(&stop_signals, &sig) != 0)
		;
	sbx_view_server_stop(srv);
	return EXIT_PASS;
}

int cmd_report(int argc, char **argv)
{
	sbx_error err = SBX_ERROR_INIT;
	int r;

	r = cli_parse_options("report", argc, argv, report_options, NULL);
	if (r <= 0)
		return -r;
	if (optind != argc - 1 || !arg_output) {
		cli_error("report: needs one DIR and -o FILE (see 'sandboxctl report --help')");
		return EXIT_USAGE;
	}
	if (sbx_view_report(argv[optind], arg_output, &err) < 0) {
		cli_error("report: %s", sbx_error_message(&err));
		return EXIT_USAGE;
	}
	fprintf(stderr, "sandboxctl: report: %s\n", arg_output);
	return EXIT_PASS;
}
