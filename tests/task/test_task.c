/* SPDX-License-Identifier: MIT */
#include "check_main.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/task.h"
#include "sbx/util.h"

#define BASE                                                                                       \
	"id: t\n"                                                                                  \
	"title: T\n"                                                                               \
	"difficulty: easy\n"                                                                       \
	"prompt: p\n"                                                                              \
	"outputs: out.ods\n"                                                                       \
	"oracle: o.ods\n"

/* tests/data/task, or the task name under it (a static buffer). */
static const char *data_path(const char *name)
{
	static char path[4200];
	const char *root = getenv("SBX_SOURCE_ROOT");

	snprintf(path, sizeof(path), "%s/tests/data/task%s%s", root ? root : "../..",
		 name ? "/" : "", name ? name : "");
	return path;
}

static int parse(const char *text, sbx_task **out, sbx_error *err)
{
	return sbx_task_parse("task.yaml", NULL, text, strlen(text), out, err);
}

START_TEST(test_minimal_defaults)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	const sbx_grading_opts *o;

	ck_assert_int_eq(parse(BASE, &t, &err), 0);
	ck_assert_str_eq(t->id, "t");
	ck_assert_int_eq(t->difficulty, SBX_TASK_EASY);
	ck_assert_uint_eq(t->n_outputs, 1);
	ck_assert_str_eq(t->outputs[0], "out.ods");
	ck_assert_uint_eq(t->n_files, 0);
	ck_assert_uint_eq(t->grading.n_cases, 1);
	ck_assert_str_eq(t->grading.cases[0].name, "default");
	ck_assert_ptr_null(t->grading.cases[0].output);
	o = &t->grading.cases[0].opts;
	ck_assert_double_eq(o->abs_tol, 0.01);
	ck_assert_double_eq(o->rel_tol, 0);
	ck_assert_int_eq(o->round_digits, -1);
	ck_assert(o->trim && !o->ignore_case && !o->collapse_whitespace);
	ck_assert(o->numeric_strings && o->skip_empty && !o->strict);
	ck_assert_int_eq(o->formulas, SBX_FORMULA_IGNORE);
	ck_assert_int_eq(o->missing_sheet, SBX_MISSING_SHEET_MISMATCH);
	ck_assert_double_eq(o->pass_threshold, 1.0);
	ck_assert_double_eq(o->fail_threshold, 0);
	ck_assert_uint_eq(t->limits.timeout_s, 0);
	ck_assert(!t->gui);
	sbx_task_free(t);
}
END_TEST

START_TEST(test_full_file)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	const sbx_grading_opts *o;

	ck_assert_msg(sbx_task_load(data_path("good"), &t, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(t->id, "good");
	ck_assert_str_eq(t->title, "A complete task");
	ck_assert_int_eq(t->difficulty, SBX_TASK_HARD);
	ck_assert_str_eq(t->prompt, "Fill column D.\nSave the file.\n");
	ck_assert_uint_eq(t->n_files, 1);
	ck_assert_str_eq(t->files[0], "files/input.ods");
	ck_assert_str_eq(t->oracles[0], "oracle/expected.ods");
	ck_assert_uint_eq(t->limits.timeout_s, 300);
	ck_assert_uint_eq(t->limits.memory, 512ull << 20);
	ck_assert_double_eq(t->limits.cpus, 1.5);
	ck_assert_uint_eq(t->limits.pids, 128);
	ck_assert(t->gui);
	ck_assert_uint_eq(t->grading.n_cases, 2);
	ck_assert_str_eq(t->grading.cases[0].name, "values");
	o = &t->grading.cases[0].opts;
	ck_assert_double_eq(o->abs_tol, 0.5);
	ck_assert_double_eq(o->rel_tol, 0.001);
	ck_assert_int_eq(o->round_digits, 2);
	ck_assert(!o->trim && o->ignore_case && o->collapse_whitespace);
	ck_assert(!o->numeric_strings && !o->skip_empty && o->strict);
	ck_assert_int_eq(o->formulas, SBX_FORMULA_IGNORE); /* overridden by the case */
	ck_assert_int_eq(o->missing_sheet, SBX_MISSING_SHEET_FAIL);
	ck_assert_double_eq(o->pass_threshold, 0.9);
	ck_assert_double_eq(o->fail_threshold, 0.2);
	ck_assert_uint_eq(o->n_sheets, 2);
	ck_assert_str_eq(o->sheets[0].name, "Sheet1");
	ck_assert_ptr_null(o->sheets[1].name);
	ck_assert_int_eq(o->sheets[1].index, 1);
	ck_assert_uint_eq(o->n_ranges, 2);
	ck_assert_str_eq(o->ranges[0].sheet, "Sheet1");
	ck_assert_uint_eq(o->ranges[0].last_row, 100);
	ck_assert_uint_eq(o->ranges[0].last_col, 3);
	ck_assert_ptr_null(o->ranges[1].sheet);
	ck_assert_uint_eq(o->ranges[1].first_row, 1);
	ck_assert_uint_eq(o->ranges[1].first_col, 1);
	/* The second case inherits and overrides. */
	o = &t->grading.cases[1].opts;
	ck_assert_str_eq(t->grading.cases[1].output, "input.ods");
	ck_assert_int_eq(o->formulas, SBX_FORMULA_MATCH);
	ck_assert_uint_eq(o->n_ranges, 1);
	ck_assert_uint_eq(o->ranges[0].first_row, 1);
	ck_assert_uint_eq(o->ranges[0].last_row, 10);
	ck_assert_double_eq(o->abs_tol, 0.5);
	sbx_task_free(t);
}
END_TEST

/* Each bad document and the exact error it must produce. */
static const struct {
	const char *text;
	const char *error;
} bad[] = {
	{BASE "grading:\n  tolerance: -1\n",
	 "task.yaml:8:14: grading.tolerance must be a number >= 0"},
	{BASE "grading:\n    tolerance: abc\n",
	 "task.yaml:8:16: grading.tolerance must be a number >= 0"},
	{BASE "grading:\n  tolerance: \"0.01\"\n",
	 "task.yaml:8:14: grading.tolerance must be a number >= 0"},
	{BASE "colour: red\n", "task.yaml:7:1: unknown key 'colour'"},
	{BASE "grading:\n  tolerence: 0.1\n", "task.yaml:8:3: unknown key 'grading.tolerence'"},
	{BASE "limits:\n  disk: 1g\n", "task.yaml:8:3: unknown key 'limits.disk'"},
	{BASE "grading:\n  cases:\n    - name: a\n      colour: red\n",
	 "task.yaml:10:7: unknown key 'grading.cases[0].colour'"},
	{"id: t\ntitle: T\ndifficulty: easy\noutputs: o\noracle: o\n",
	 "task.yaml:1:1: missing required key 'prompt'"},
	{"id: Bad Id\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: o\noracle: o\n",
	 "task.yaml:1:5: id must be 1..64 characters of a-z, 0-9, '_' and '-', starting with a "
	 "letter or digit"},
	{"id: t\ntitle: T\ndifficulty: extreme\nprompt: p\noutputs: o\noracle: o\n",
	 "task.yaml:3:13: difficulty must be one of: easy, medium, hard"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: ''\noutputs: o\noracle: o\n",
	 "task.yaml:4:9: prompt must be a non-empty string"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: ../x.ods\noracle: o\n",
	 "task.yaml:5:10: outputs: '../x.ods': '..' is not allowed"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: .\noracle: o\n",
	 "task.yaml:5:10: outputs: '.' is not a plain relative file path (a '.' component)"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: ''\noracle: o\n",
	 "task.yaml:5:10: outputs must be a non-empty string"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: ..\noracle: o\n",
	 "task.yaml:5:10: outputs: '..': '..' is not allowed"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: a/../..\noracle: o\n",
	 "task.yaml:5:10: outputs: 'a/../..': '..' is not allowed"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: /tmp/x.ods\noracle: o\n",
	 "task.yaml:5:10: outputs: '/tmp/x.ods': absolute paths are not allowed"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: out/\noracle: o\n",
	 "task.yaml:5:10: outputs: 'out/' is not a plain relative file path (ends with '/': a "
	 "folder, not a file)"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: a//b.ods\noracle: o\n",
	 "task.yaml:5:10: outputs: 'a//b.ods' is not a plain relative file path (an empty "
	 "component)"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: [x.ods, ./y.ods]\noracle: o\n",
	 "task.yaml:5:18: outputs: './y.ods' is not a plain relative file path (a '.' component)"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: \"a\\e]0;t\\ab.ods\"\noracle: o\n",
	 "task.yaml:5:10: outputs: 'a\\x1b]0;t\\x07b.ods' is not a plain relative file path (a "
	 "control character)"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: \"a\\0b.ods\"\noracle: o\n",
	 "task.yaml:5:10: YAML scalar contains a NUL character"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: \"a\\x9bb.ods\"\noracle: o\n",
	 "task.yaml:5:10: outputs: 'a\\u009bb.ods' is not a plain relative file path (a control "
	 "character)"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: []\noracle: o\n",
	 "task.yaml:5:10: outputs must not be empty"},
	{"id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: {a: b}\noracle: o\n",
	 "task.yaml:5:10: outputs must be a path or a list of paths"},
	{BASE "files: [a/x.ods, b/x.ods]\n",
	 "task.yaml:7:18: files: two entries are named 'x.ods'"},
	{BASE "grading:\n  round: 2.5\n",
	 "task.yaml:8:10: grading.round must be an integer between 0 and 15"},
	{BASE "grading:\n  trim: maybe\n", "task.yaml:8:9: grading.trim must be true or false"},
	{BASE "grading:\n  formulas: sometimes\n",
	 "task.yaml:8:13: grading.formulas must be one of: ignore, require, match"},
	{BASE "grading:\n  missing_sheet: ignore\n",
	 "task.yaml:8:18: grading.missing_sheet must be one of: mismatch, fail"},
	{BASE "grading:\n  pass_threshold: 1.5\n",
	 "task.yaml:8:19: grading.pass_threshold must be a number between 0 and 1"},
	{BASE "grading:\n  pass_threshold: 0.5\n  fail_threshold: 0.6\n",
	 "task.yaml:8:3: grading.fail_threshold (0.6) must not exceed pass_threshold (0.5)"},
	{BASE "grading:\n  sheets: Sheet1\n",
	 "task.yaml:8:11: grading.sheets must be a non-empty list of sheet names or indexes"},
	{BASE "grading:\n  ranges: [\"A1:ZZZZ9\"]\n",
	 "task.yaml:8:12: grading.ranges: Invalid range: A1:ZZZZ9"},
	{BASE "grading:\n  cases: []\n", "task.yaml:8:10: grading.cases must be a non-empty list"},
	{BASE "grading:\n  replace: [[a]]\n",
	 "task.yaml:8:13: grading.replace: each entry must be [from, to] with from a non-empty "
	 "string (at most 256 bytes each)"},
	{BASE "grading:\n  replace: {a: b}\n",
	 "task.yaml:8:12: grading.replace must be a non-empty list of [from, to] pairs"},
	{BASE "grading:\n  strip_chars: ''\n", "task.yaml:8:16: grading.strip_chars must be a "
					       "non-empty string"},
	{BASE "grading:\n  cases:\n    - name: a\n    - name: a\n",
	 "task.yaml:10:7: grading.cases[1]: duplicate case name 'a'"},
	{BASE "grading:\n  cases:\n    - output: other.ods\n",
	 "task.yaml:9:15: grading.cases[0].output: 'other.ods' is not among the task's outputs"},
	{BASE "limits:\n  deadline: 0\n",
	 "task.yaml:8:13: limits.deadline must be an integer between 1 and 604800"},
	{BASE "limits:\n  memory: 2x\n",
	 "task.yaml:8:11: limits.memory must be a size between 4m and 1t (bytes, or with a "
	 "k/m/g/t suffix)"},
	{BASE "limits:\n  cpus: 0\n",
	 "task.yaml:8:9: limits.cpus must be a number between 0.01 and 1024"},
	{BASE "limits:\n  pids: 3\n",
	 "task.yaml:8:9: limits.pids must be an integer between 8 and 4194304"},
	{BASE "limits: 5\n", "task.yaml:7:9: limits must be a mapping, not a scalar"},
	{BASE "gui: 1\n", "task.yaml:7:6: gui must be true or false"},
	{BASE "tools: api\n", "task.yaml:7:8: tools must be one of: all, gui"},
	{BASE "tools: gui\n", "task.yaml:7:8: tools: gui needs gui: true (the desktop)"},
	{BASE "id: again\n", "task.yaml:7:1: duplicate key 'id'"},
	{BASE "x: &a 1\n", "task.yaml:7:4: YAML anchors and tags are not allowed"},
	{BASE "title2: *a\n", "task.yaml:7:9: YAML aliases are not allowed"},
	{BASE "gui: !!bool true\n", "task.yaml:7:6: YAML anchors and tags are not allowed"},
	{"- a\n- b\n", "task.yaml:1:1: the document must be a mapping, not a list"},
	{"", "task.yaml:1:1: empty document"},
	{BASE "---\na: 1\n", "task.yaml:7:1: only one YAML document is allowed"},
	/* Where the unclosed construct began, and where libyaml gave up. */
	{"id: [unclosed\n",
	 "task.yaml:1:5: invalid YAML: did not find expected ',' or ']' (at 2:1) "
	 "while parsing a flow sequence"},
	{"id: t\ntitle: \"unterminated\ndifficulty: easy\n",
	 "task.yaml:2:8: invalid YAML: found unexpected end of stream (at 4:1) while scanning a "
	 "quoted scalar"},
};

START_TEST(test_bad)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;

	ck_assert_int_lt(parse(bad[_i].text, &t, &err), 0);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(err.msg, bad[_i].error);
}
END_TEST

START_TEST(test_depth_and_size_caps)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	char *deep = malloc(4096), *big;
	size_t n = 0;

	n += (size_t)sprintf(deep + n, "%s", BASE "x: ");
	for (int i = 0; i < 100; i++)
		deep[n++] = '[';
	for (int i = 0; i < 100; i++)
		deep[n++] = ']';
	deep[n++] = '\n';
	deep[n] = '\0';
	ck_assert_int_lt(parse(deep, &t, &err), 0);
	ck_assert_msg(strstr(err.msg, "YAML nested too deeply"), "%s", err.msg);
	free(deep);

	sbx_error_clear(&err);
	big = malloc(2 * 1024 * 1024 + 1);
	memset(big, '#', 2 * 1024 * 1024);
	big[2 * 1024 * 1024] = '\0';
	ck_assert_int_lt(parse(big, &t, &err), 0);
	ck_assert_str_eq(err.msg, "task.yaml: file too large (over 1 MiB)");
	free(big);
}
END_TEST

START_TEST(test_files_checked)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	const char *text = BASE "files: [missing.ods]\n";

	ck_assert_int_lt(
		sbx_task_parse("task.yaml", data_path("good"), text, strlen(text), &t, &err), 0);
	ck_assert_msg(strncmp(err.msg,
			      "task.yaml:7:9: files: 'missing.ods' not found in the task "
			      "directory",
			      67) == 0,
		      "%s", err.msg);

	/* An oracle reached through a symlink that leaves the task directory. */
	sbx_error_clear(&err);
	ck_assert_int_lt(sbx_task_load(data_path("escape"), &t, &err), 0);
	ck_assert_msg(strstr(err.msg, "task.yaml:6:9: oracle: 'link/passwd' not found"), "%s",
		      err.msg);
}
END_TEST

START_TEST(test_grading_standalone)
{
	const char *text = "tolerance: 0.001\nformulas: require\nsheets: [Totals]\n";
	sbx_grading_spec spec = {0};
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_grading_spec_parse("grading.yaml", text, strlen(text), &spec, &err),
			 0);
	ck_assert_uint_eq(spec.n_cases, 1);
	ck_assert_double_eq(spec.cases[0].opts.abs_tol, 0.001);
	ck_assert_int_eq(spec.cases[0].opts.formulas, SBX_FORMULA_REQUIRE);
	ck_assert_str_eq(spec.cases[0].opts.sheets[0].name, "Totals");
	sbx_grading_spec_clear(&spec);

	text = "strip_chars: '$,'\nreplace: [['n/a', ''], [EUR, '\u20ac']]\n"
	       "cases: [{name: a}, {name: b, replace: [[x, y]]}]\n";
	ck_assert_int_eq(sbx_grading_spec_parse("grading.yaml", text, strlen(text), &spec, &err),
			 0);
	ck_assert_uint_eq(spec.n_cases, 2);
	ck_assert_str_eq(spec.cases[0].opts.strip_chars, "$,");
	ck_assert_uint_eq(spec.cases[0].opts.n_replace, 2);
	ck_assert_str_eq(spec.cases[0].opts.replace[0], "n/a");
	ck_assert_str_eq(spec.cases[0].opts.replace[1], "");
	ck_assert_str_eq(spec.cases[0].opts.replace[3], "\u20ac");
	ck_assert_uint_eq(spec.cases[1].opts.n_replace, 1);
	ck_assert_str_eq(spec.cases[1].opts.replace[1], "y");
	ck_assert_str_eq(spec.cases[1].opts.strip_chars, "$,");
	sbx_grading_spec_clear(&spec);

	text = "tolerance: 1\nprompt: x\n";
	ck_assert_int_lt(sbx_grading_spec_parse("grading.yaml", text, strlen(text), &spec, &err),
			 0);
	ck_assert_str_eq(err.msg, "grading.yaml:2:1: unknown key 'prompt'");
	ck_assert_uint_eq(spec.n_cases, 0);
}
END_TEST

START_TEST(test_resolve_and_list)
{
	char dir[4200], **names = NULL;
	char *yaml = NULL;
	sbx_error err = SBX_ERROR_INIT;
	size_t n = 0;

	snprintf(dir, sizeof(dir), "%s", data_path(NULL));
	ck_assert_int_eq(sbx_task_list(dir, &names, &n, &err), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(names[0], "escape");
	ck_assert_str_eq(names[1], "good");
	ck_assert_ptr_null(names[2]);
	sbx_task_names_free(names);

	ck_assert_int_eq(sbx_task_resolve(dir, "good", &yaml, &err), 0);
	ck_assert_ptr_nonnull(strstr(yaml, "/good/task.yaml"));
	free(yaml);
	ck_assert_int_eq(sbx_task_resolve(dir, "nope", &yaml, &err), -ENOENT);
	ck_assert_msg(strstr(err.msg, "task 'nope' not found in"), "%s", err.msg);

	setenv("SBX_TASKS_DIR", dir, 1);
	yaml = sbx_task_dir_default();
	ck_assert_str_eq(yaml, dir);
	free(yaml);
	ck_assert_int_eq(sbx_task_resolve(NULL, "good", &yaml, &err), 0);
	free(yaml);
	unsetenv("SBX_TASKS_DIR");

	sbx_error_clear(&err);
	ck_assert_int_lt(sbx_task_list("/nonexistent-dir", &names, &n, &err), 0);
	ck_assert_str_eq(err.msg, "tasks directory '/nonexistent-dir': No such file or directory");
}
END_TEST

/* One resolution for every source of limits: a flag beats the task, the task the default. */
START_TEST(test_limits_resolve)
{
	const sbx_limits defaults = {
		.timeout_s = 600, .memory = 2ULL << 30, .cpus = 2, .pids = 256, .grace_s = 30};
	sbx_limits task = {.timeout_s = 300, .cpus = 1.5}, flag = {.cpus = 0.5}, l, w;

	sbx_limits_set_runtime(&flag, "runsc");
	sbx_limits_resolve(&l, &flag, &task, &defaults);
	ck_assert_uint_eq(l.timeout_s, 300);
	ck_assert_uint_eq(l.memory, 2ULL << 30);
	ck_assert_double_eq(l.cpus, 0.5);
	ck_assert_uint_eq(l.pids, 256);
	ck_assert_str_eq(l.runtime, "runsc");
	ck_assert_uint_eq(l.grace_s, 30);
	ck_assert(!l.engine_seccomp);
	sbx_limits_resolve(&l, NULL, NULL, &defaults);
	ck_assert_uint_eq(l.timeout_s, 600);
	ck_assert_str_eq(l.runtime, "");
	/* The same sandbox: its shape, not the episode's deadline. */
	w = l;
	w.timeout_s = 5;
	w.grace_s = 1;
	ck_assert(sbx_limits_same_sandbox(&l, &w));
	sbx_limits_set_runtime(&w, "runsc");
	ck_assert(!sbx_limits_same_sandbox(&l, &w));
	w = l;
	w.engine_seccomp = true;
	ck_assert(!sbx_limits_same_sandbox(&l, &w));
}
END_TEST

/* One writer and reader, each document with its own keys and order. */
START_TEST(test_limits_json)
{
	static const sbx_limits_key keys[] = {
		{SBX_LIMITS_TIMEOUT, "timeout_s"}, {SBX_LIMITS_MEMORY, "memory"},
		{SBX_LIMITS_CPUS, "cpus"},	   {SBX_LIMITS_PIDS, "pids"},
		{SBX_LIMITS_RUNTIME, "runtime"},   {SBX_LIMITS_GRACE, "grace_s"},
		{SBX_LIMITS_SECCOMP, "seccomp"},
	};
	sbx_limits l = {.timeout_s = 90,
			.memory = 1ULL << 30,
			.cpus = 1.5,
			.pids = 128,
			.grace_s = 20,
			.engine_seccomp = true},
		   back = {0};
	_cleanup_json_ cJSON *o = cJSON_CreateObject();
	_cleanup_free_ char *text = NULL;

	sbx_limits_json_write(o, &l, keys, SBX_ELEMENTSOF(keys));
	text = cJSON_PrintUnformatted(o);
	ck_assert_str_eq(text, "{\"timeout_s\":90,\"memory\":1073741824,\"cpus\":1.5,\"pids\":128,"
			       "\"runtime\":null,\"grace_s\":20,\"seccomp\":\"default\"}");
	ck_assert_uint_eq(sbx_limits_json_read(o, keys, SBX_ELEMENTSOF(keys), &back), 0);
	ck_assert(back.timeout_s == 90 && back.memory == 1ULL << 30 && back.cpus == 1.5 &&
		  back.pids == 128 && back.grace_s == 20 && back.engine_seccomp &&
		  !back.runtime[0]);
	cJSON_ReplaceItemInObject(o, "cpus", cJSON_CreateNumber(2000));
	cJSON_ReplaceItemInObject(o, "pids", cJSON_CreateNumber(1.5));
	ck_assert_uint_eq(sbx_limits_json_read(o, keys, SBX_ELEMENTSOF(keys), &back),
			  (1u << SBX_LIMITS_CPUS) | (1u << SBX_LIMITS_PIDS));
}
END_TEST

static void add_cases(Suite *s)
{
	TCase *tc = SBX_TEST_CASE(s, "load", NULL, NULL, 0, test_minimal_defaults, test_full_file);
	SBX_TEST_TABLE(tc, test_bad, bad);
	SBX_TEST_ADD(tc, test_depth_and_size_caps, test_files_checked, test_grading_standalone,
		     test_resolve_and_list, test_limits_resolve, test_limits_json);
}

SBX_TEST_MAIN("task", add_cases)
