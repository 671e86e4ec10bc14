/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl sweep show DIR, sweep compare DIR_A DIR_B: sweep directories
 * read back (lib/sweep does the work); and the summary a sweep prints when
 * it ends.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_sweep.h"

void cmd_sweep__warn_dropped(const sbx_sweep_results *res, const char *dir, const char *what)
{
	const char *why = NULL;
	size_t line = 0;
	unsigned n = sbx_sweep_results_dropped(res, &line, &why);

	if (n)
		cli_error("sweep: %s/results.jsonl:%zu: %s; %u line(s) %s", dir, line, why, n,
			  what);
}

int cmd_sweep__print_summary(const sbx_sweep_plan *p, const char *dir, bool json, bool write,
			     double *pass_rate)
{
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *res = NULL;
	_cleanup_(sbx_sweep_summary_freep) sbx_sweep_summary *s = NULL;
	_cleanup_(sbx_buf_free) sbx_buf text = SBX_BUF_INIT(64 << 20);
	sbx_error err = SBX_ERROR_INIT;
	const sbx_sweep_record *recs;
	size_t n;

	if (sbx_sweep_results_load(dir, p, &res, &err) < 0 ||
	    (recs = sbx_sweep_results_records(res, &n), false) ||
	    sbx_sweep_summarise(p, recs, n, &s, &err) < 0 ||
	    (write && sbx_sweep_summary_write(s, dir, &err) < 0))
		return cli_error("sweep '%s': %s", dir, sbx_error_message(&err)), -1;
	if (!write) /* a sweep that ran said so when it opened the file */
		cmd_sweep__warn_dropped(res, dir, "skipped");
	if (pass_rate)
		*pass_rate = s->overall.pass_rate;
	if (json) {
		_cleanup_free_ char *j = sbx_sweep_summary_json(s, false);

		if (!j)
			return cli_error("out of memory"), -1;
		printf("%s\n", j);
	} else {
		if (sbx_sweep_summary_text(s, &text) < 0)
			return cli_error("out of memory"), -1;
		/* Which sweep this is: enough to tell two apart without opening sweep.json. */
		printf("sweep %s: %zu tasks × %zu agents × %u epochs", p->id ? p->id : dir,
		       p->n_tasks, p->n_agents, p->epochs);
		if (p->seeded)
			printf(", seeds from %llu", (unsigned long long)p->seed_from);
		if (p->image_id)
			printf(", image %.19s", p->image_id);
		if (p->tasks_commit)
			printf(", tasks %.12s%s", p->tasks_commit, p->tasks_dirty ? "+dirty" : "");
		for (size_t i = 0; i < p->n_tags; i++)
			printf("%s%s", i ? " " : ", ", p->tags[i]);
		printf("\n");
		fputs(sbx_buf_str(&text), stdout);
	}
	fflush(stdout);
	return 0;
}

static bool arg_json;

/* Both verbs' --help: one text, as they are two ways of reading sweeps back. */
static const cli_option read_options[] = {
	{.text = "Usage: sandboxctl sweep show DIR [--json]\n"
		 "       sandboxctl sweep compare DIR_A DIR_B [--json]\n\n"
		 "show: the summary of the sweep in DIR, as 'sandboxctl sweep' prints it when\n"
		 "it ends; also while it runs, or after it stopped.\n"
		 "compare: pairs the episodes of two sweeps by task, epoch and seed and gives\n"
		 "the exact sign test's p-value on pass/fail and a paired bootstrap interval\n"
		 "on the score. See 'sandboxctl sweep --help'.\n"},
	{.heading = "Options:"},
	{"json", .flag = &arg_json, .help = "the summary or the comparison as JSON"},
	{0},
};

int cmd_sweep__show(int argc, char **argv)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *p = NULL;
	sbx_error err = SBX_ERROR_INIT;
	int r = cli_parse("sweep show", argc, argv, read_options, NULL, 0);

	if (r <= 0)
		return -r;
	if (optind >= argc)
		return cli_error("sweep show: which sweep directory?"), EXIT_USAGE;
	if (optind + 1 < argc)
		return cli_error("sweep show: unexpected '%s' (see 'sandboxctl sweep show --help')",
				 argv[optind + 1]),
		       EXIT_USAGE;
	if (sbx_sweep_plan_read(argv[optind], &p, &err) < 0)
		return cli_error("sweep show: %s", sbx_error_message(&err)), EXIT_USAGE;
	return cmd_sweep__print_summary(p, argv[optind], arg_json, false, NULL) < 0 ? EXIT_USAGE
										    : EXIT_PASS;
}

int cmd_sweep__compare(int argc, char **argv)
{
	_cleanup_(sbx_sweep_plan_freep) sbx_sweep_plan *pa = NULL, *pb = NULL;
	_cleanup_(sbx_sweep_results_freep) sbx_sweep_results *ra = NULL, *rb = NULL;
	_cleanup_free_ char *out = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_sweep_record *xa, *xb;
	const char *const *dirs;
	size_t na, nb;
	int r = cli_parse("sweep compare", argc, argv, read_options, NULL, 0);

	if (r <= 0)
		return -r;
	if (argc - optind > 2)
		return cli_error("sweep compare: unexpected '%s' (see 'sandboxctl sweep compare "
				 "--help')",
				 argv[optind + 2]),
		       EXIT_USAGE;
	if (argc - optind != 2)
		return cli_error("sweep compare: expected two sweep directories"), EXIT_USAGE;
	dirs = (const char *const *)argv + optind;
	if (sbx_sweep_plan_read(dirs[0], &pa, &err) < 0 ||
	    sbx_sweep_plan_read(dirs[1], &pb, &err) < 0 ||
	    sbx_sweep_results_load(dirs[0], pa, &ra, &err) < 0 ||
	    sbx_sweep_results_load(dirs[1], pb, &rb, &err) < 0)
		return cli_error("sweep compare: %s", sbx_error_message(&err)), EXIT_USAGE;
	xa = sbx_sweep_results_records(ra, &na);
	xb = sbx_sweep_results_records(rb, &nb);
	if (sbx_sweep_compare(pa, xa, na, pb, xb, nb, arg_json, &out, &err) < 0)
		return cli_error("sweep compare: %s", sbx_error_message(&err)), EXIT_USAGE;
	fputs(out, stdout);
	if (!arg_json || out[strlen(out) - 1] != '\n')
		fputs(arg_json ? "\n" : "", stdout);
	return EXIT_PASS;
}
