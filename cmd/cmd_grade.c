/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl grade: grade saved outputs against an oracle, under a task's
 * grading configuration (--task) or a standalone one (--oracle, --config).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sbx/grade.h"
#include "sbx/task.h"

static const char *arg_task;
static const char *arg_tasks_dir;
static const char *arg_oracle;
static const char *arg_config;
static bool arg_json;
static long arg_max_lines = 20;
static double arg_pass_threshold = NAN;

static int parse_max_lines(const char *text)
{
	arg_max_lines = cli_parse_long(text, 0, LONG_MAX);
	if (arg_max_lines < 0) {
		cli_error("grade: --max-lines must be an integer >= 0, not '%s'", text);
		return -EINVAL;
	}
	return 0;
}

static int parse_pass_threshold(const char *text)
{
	char *end;

	errno = 0;
	arg_pass_threshold = strtod(text, &end);
	if (errno || *end || end == text || !(arg_pass_threshold >= 0) || arg_pass_threshold > 1) {
		cli_error("grade: --pass-threshold must be a number between 0 and 1, not '%s'",
			  text);
		return -EINVAL;
	}
	return 0;
}

static const cli_option grade_options[] = {
	{.text = "Usage: sandboxctl grade --task NAME [options] OUTPUT\n"
		 "       sandboxctl grade --oracle ORACLE [--config GRADING.yaml] [options] "
		 "OUTPUT\n"
		 "\n"
		 "Grades a spreadsheet (ODS, XLSX or CSV) cell by cell against an oracle and\n"
		 "prints PASS, PARTIAL or FAIL with the matched/graded cell count and one line\n"
		 "per mismatch, e.g.\n"
		 "  Sheet1!D5: expected=2167.61, got=2100 (numeric mismatch: diff=67.61, "
		 "tolerance=0.01)\n"
		 "\n"
		 "With --task, the task's oracle and grading configuration are used; OUTPUT is\n"
		 "the output file, or the directory holding the task's outputs (needed when\n"
		 "the task has several). With --oracle, OUTPUT is graded against ORACLE under\n"
		 "GRADING.yaml (the keys of a task's grading: section; see tasks/README.md),\n"
		 "or the defaults: tolerance 0.01, trimmed text, empty oracle cells skipped,\n"
		 "pass only when every graded cell matches.\n"},
	{.heading = "Options:", .column = 25},
	{"task", .value = &arg_task, .usage = "--task NAME|PATH",
	 .help = "task name (in the tasks directory) or task path"},
	{"tasks-dir", .value = &arg_tasks_dir, .usage = "--tasks-dir DIR",
	 .help = "tasks directory (default: $SBX_TASKS_DIR, else\n"
		 "./tasks, else the installed tasks)"},
	{"oracle", .value = &arg_oracle, .usage = "--oracle FILE",
	 .help = "oracle workbook (instead of --task)"},
	{"config", .value = &arg_config, .usage = "--config FILE",
	 .help = "standalone grading.yaml (with --oracle)"},
	{"pass-threshold", .parse = parse_pass_threshold, .usage = "--pass-threshold X",
	 .help = "pass when the score is >= X (0..1), for every case"},
	{"max-lines", .parse = parse_max_lines, .usage = "--max-lines N",
	 .help = "mismatch lines shown per case (default 20; 0: none)"},
	{"json", .flag = &arg_json, .help = "print the full JSON report instead of text"},
	{.usage = "-h, --help", .help = "show this help"},
	{.text = "\n"
		 "Status: PASS when score >= pass threshold; FAIL when nothing matched, the\n"
		 "score is below the fail threshold, the output is not a readable workbook,\n"
		 "or a sheet is missing under missing_sheet: fail; PARTIAL otherwise. With\n"
		 "several cases, PASS when all pass, FAIL when all fail.\n"
		 "\n"
		 "Exit status: 0 passed, 1 graded but not passed, 2 usage error or bad input\n"
		 "(unknown task, invalid configuration, unreadable oracle, a missing output:\n"
		 "OUTPUT itself, or a task's output file absent from the OUTPUT directory;\n"
		 "nothing is graded then).\n"},
	{0},
};

static int parse_args(int argc, char **argv)
{
	int r = cli_parse_options("grade", argc, argv, grade_options, NULL);

	if (r <= 0)
		return r;
	if (optind + 1 != argc) {
		cli_error("grade: expected exactly one OUTPUT (see 'sandboxctl grade --help')");
		return -EXIT_USAGE;
	}
	if (!!arg_task == !!arg_oracle) {
		cli_error("grade: give either --task or --oracle");
		return -EXIT_USAGE;
	}
	if (arg_task && arg_config) {
		cli_error("grade: --config goes with --oracle; a task carries its own grading");
		return -EXIT_USAGE;
	}
	return 1;
}

static void override_threshold(sbx_grading_spec *spec)
{
	if (isnan(arg_pass_threshold))
		return;
	for (size_t i = 0; i < spec->n_cases; i++) {
		spec->cases[i].opts.pass_threshold = arg_pass_threshold;
		if (spec->cases[i].opts.fail_threshold > arg_pass_threshold)
			spec->cases[i].opts.fail_threshold = arg_pass_threshold;
	}
}

static int grade_standalone(const char *output, sbx_grade_result **out, sbx_error *err)
{
	sbx_grading_spec spec = {0};
	const char **outputs = NULL, **oracles = NULL;
	int r;

	if (arg_config) {
		r = sbx_grading_spec_load(arg_config, &spec, err);
		if (r < 0)
			return r;
	} else {
		static const char *const empty = "{}";

		r = sbx_grading_spec_parse("defaults", empty, strlen(empty), &spec, err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < spec.n_cases; i++)
		if (spec.cases[i].output || spec.cases[i].oracle) {
			r = sbx_error_set(err, -EINVAL,
					  "'%s': case '%s' names a file; with --oracle, every case "
					  "grades OUTPUT against ORACLE",
					  arg_config, spec.cases[i].name);
			goto done;
		}
	override_threshold(&spec);
	outputs = calloc(spec.n_cases, sizeof(*outputs));
	oracles = calloc(spec.n_cases, sizeof(*oracles));
	if (!outputs || !oracles) {
		r = sbx_error_set(err, -ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < spec.n_cases; i++) {
		outputs[i] = output;
		oracles[i] = arg_oracle;
	}
	r = sbx_grade_files(&spec, outputs, oracles, out, err);
done:
	free(outputs);
	free(oracles);
	sbx_grading_spec_clear(&spec);
	return r;
}

/*
 * One rule for a missing output: exit 2 with its name, whether OUTPUT is the
 * file or the directory that should hold it (a run's grade instead FAILs).
 */
static int check_outputs(const sbx_task *task, const char *output, sbx_error *err)
{
	struct stat st;

	if (stat(output, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	for (size_t i = 0; i < task->grading.n_cases; i++) {
		const char *o = task->grading.cases[i].output ? task->grading.cases[i].output
							      : task->outputs[0];
		_cleanup_free_ char *p = NULL;

		if (asprintf(&p, "%s/%s", output, o) < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		if (lstat(p, &st) < 0)
			return sbx_error_set(err, -ENOENT, "output '%s' not found in '%s'", o,
					     output);
	}
	return 0;
}

static int grade_task(const char *output, sbx_grade_result **out, sbx_error *err)
{
	_cleanup_free_ char *yaml = NULL;
	sbx_task *task = NULL;
	int r;

	r = sbx_task_resolve(arg_tasks_dir, arg_task, &yaml, err);
	if (r < 0)
		return r;
	r = sbx_task_load(yaml, &task, err);
	if (r < 0)
		return r;
	r = check_outputs(task, output, err);
	if (r < 0) {
		sbx_task_free(task);
		return r;
	}
	override_threshold(&task->grading);
	r = sbx_grade_task(task, output, out, err);
	sbx_task_free(task);
	return r;
}

int cmd_grade(int argc, char **argv)
{
	_cleanup_(sbx_grade_result_freep) sbx_grade_result *res = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const char *output;
	struct stat st;
	int r;

	r = parse_args(argc, argv);
	if (r <= 0)
		return -r;
	output = argv[optind];
	/*
	 * The output the user names must exist; so must a task's output inside a directory
	 * (grade_task): either missing is exit 2, not a grade. One present but not a workbook
	 * is graded FAIL.
	 */
	if (stat(output, &st) < 0) {
		cli_error("grade: output '%s' not found: %s", output, strerror(errno));
		return EXIT_USAGE;
	}
	r = arg_task ? grade_task(output, &res, &err) : grade_standalone(output, &res, &err);
	if (r < 0) {
		cli_error("grade: %s", sbx_error_message(&err));
		return r == -ENOMEM ? EXIT_ENGINE : EXIT_USAGE;
	}
	if (arg_json) {
		_cleanup_free_ char *json = sbx_grade_report_json(res);

		if (!json) {
			cli_error("grade: out of memory");
			return EXIT_ENGINE;
		}
		printf("%s\n", json);
	} else {
		sbx_buf text = SBX_BUF_INIT(256 * 1024 * 1024);

		if (sbx_grade_report_text(res, (size_t)arg_max_lines, &text) < 0) {
			sbx_buf_free(&text);
			cli_error("grade: report too large");
			return EXIT_ENGINE;
		}
		sbx_fputs_escaped(sbx_buf_str(&text), stdout); /* values from the outputs */
		sbx_buf_free(&text);
	}
	return res->status == SBX_GRADE_PASS ? EXIT_PASS : EXIT_NOT_PASSED;
}
