/* SPDX-License-Identifier: MIT */
/* The reference system's task.json: mapped onto our task model, every bad key named by path. */
#include "check_main.h"
#include "test_files.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/sheet.h"
#include "sbx/task.h"
#include "sbx/util.h"

/* A reference folder: starting_files/cash_flows.ods and oracle/expected.ods (content irrelevant).
 */
static void setup(void)
{
	char sub[128];

	sbx_test_scratch_setup();
	snprintf(sub, sizeof(sub), "%s/starting_files", sbx_test_scratch);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/oracle", sbx_test_scratch);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	sbx_test_put(sbx_test_scratch, "starting_files/cash_flows.ods", "x");
	sbx_test_put(sbx_test_scratch, "oracle/expected.ods", "y");
}

static int load_json(const char *json, sbx_task **out, sbx_error *err)
{
	sbx_test_put(sbx_test_scratch, "task.json", json);
	return sbx_task_load(sbx_test_scratch, out, err);
}

START_TEST(full_mapping)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	const sbx_grading_opts *o;

	ck_assert_msg(load_json("{\"id\":\"banking_reserve\",\"name\":\"Banking\","
				"\"description\":\"What.\",\"prompt\":\"How.\","
				"\"files\":[\"cash_flows.ods\"],\"oracle\":\"expected.ods\","
				"\"grading\":{\"numeric_tolerance\":0.5,\"check_formulas\":true,"
				"\"ignore_empty_cells\":false,\"sheets_to_check\":[\"Sheet1\"]},"
				"\"timeout\":120}",
				&t, &err) == 0,
		      "%s", err.msg);
	ck_assert(t->reference);
	ck_assert_str_eq(t->id, "banking_reserve");
	ck_assert_str_eq(t->title, "Banking");
	ck_assert_str_eq(t->prompt, "What.\n\nHow.");
	ck_assert_int_eq(t->difficulty, SBX_TASK_MEDIUM);
	ck_assert_str_eq(t->files[0], "starting_files/cash_flows.ods");
	ck_assert_str_eq(t->outputs[0], "cash_flows.ods"); /* overwritten in place */
	ck_assert_str_eq(t->oracles[0], "oracle/expected.ods");
	ck_assert_uint_eq(t->limits.timeout_s, 120);
	ck_assert_ptr_nonnull(strstr(t->path, "task.json"));
	o = &t->grading.cases[0].opts;
	ck_assert_double_eq_tol(o->abs_tol, 0.5, 1e-12);
	ck_assert_int_eq(o->formulas, SBX_FORMULA_REQUIRE);
	ck_assert(!o->skip_empty);
	ck_assert_double_eq_tol(o->pass_threshold, 0.95, 1e-12);
	ck_assert_uint_eq(o->n_sheets, 1);
	ck_assert_str_eq(o->sheets[0].name, "Sheet1");
	sbx_task_free(t);
}
END_TEST

/* Only id and a description: files and oracle come from their folders, the reference's defaults. */
START_TEST(defaults_from_folders)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	const sbx_grading_opts *o;

	ck_assert_msg(load_json("{\"id\":\"t1\",\"description\":\"Do it.\\n\"}", &t, &err) == 0,
		      "%s", err.msg);
	ck_assert_str_eq(t->title, "t1");
	ck_assert_str_eq(t->prompt, "Do it.\n");
	ck_assert_uint_eq(t->n_files, 1);
	ck_assert_str_eq(t->files[0], "starting_files/cash_flows.ods");
	ck_assert_str_eq(t->oracles[0], "oracle/expected.ods");
	o = &t->grading.cases[0].opts;
	ck_assert_double_eq_tol(o->abs_tol, 0.01, 1e-12);
	ck_assert(o->skip_empty);
	ck_assert_uint_eq(t->limits.timeout_s, 0);
	sbx_task_free(t);
}
END_TEST

START_TEST(errors_name_the_json_path)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
		{"{\"id\":\"t\",\"description\":\"d\",\"colour\":1}", "$: unknown key 'colour'"},
		{"{\"id\":\"t\",\"description\":\"d\",\"grading\":{\"tolerance\":1}}",
		 "$.grading: unknown key 'tolerance'"},
		{"{\"id\":\"t\",\"description\":\"d\",\"grading\":{\"numeric_tolerance\":\"x\"}}",
		 "$.grading.numeric_tolerance: expected a number"},
		{"{\"id\":\"t\",\"description\":\"d\",\"grading\":{\"check_formulas\":1}}",
		 "$.grading.check_formulas: expected true or false"},
		{"{\"id\":\"t\",\"description\":\"d\",\"grading\":{\"sheets_to_check\":[\"A\",2]}}",
		 "$.grading.sheets_to_check[1]: expected a sheet name"},
		{"{\"id\":\"t\",\"description\":\"d\",\"files\":[\"cash_flows.ods\",\"nope.ods\"]}",
		 "$.files[1]: 'nope.ods' not found in starting_files/"},
		{"{\"id\":\"t\",\"description\":\"d\",\"oracle\":\"../x.ods\"}",
		 "$.oracle: '../x.ods' must be a relative path inside the task folder"},
		{"{\"id\":\"t\",\"description\":\"d\",\"output\":\".\"}",
		 "$.output: '.' is not a plain relative file path (a '.' component)"},
		{"{\"id\":\"t\",\"description\":\"d\",\"output\":[\"a.ods\",\"out/\"]}",
		 "$.output[1]: 'out/' is not a plain relative file path (ends with '/'"},
		{"{\"id\":\"t\",\"description\":\"d\",\"output\":\"a\\u001b[2J.ods\"}",
		 "$.output: 'a?[2J.ods' is not a plain relative file path (a control character)"},
		{"{\"id\":\"t\",\"description\":\"d\",\"output\":\"a/../..\"}",
		 "$.output: expected a file name relative to the workspace"},
		{"{\"id\":\"t\",\"description\":\"d\",\"timeout\":0}",
		 "$.timeout: expected a number"},
		{"{\"id\":\"Bad Id\",\"description\":\"d\"}", "$.id: 'Bad Id': must be"},
		{"{\"description\":\"d\"}", "$: missing required key 'id'"},
		{"{\"id\":\"t\"}", "$: missing required key 'description'"},
		{"{\"id\":\"t\",\"title\":5,\"description\":\"d\"}", "$.title: expected a string"},
		{"{\"id\":\"t\",\"description\":\"d\",\"difficulty\":\"brutal\"}",
		 "$.difficulty: 'brutal'"},
		{"[1]", "$: expected an object"},
		{"{\"id\":", "not JSON"},
	};

	for (size_t i = 0; i < SBX_ELEMENTSOF(cases); i++) {
		sbx_error err = SBX_ERROR_INIT;
		sbx_task *t = NULL;

		ck_assert_msg(load_json(cases[i].json, &t, &err) < 0, "accepted: %s",
			      cases[i].json);
		ck_assert_msg(strstr(err.msg, cases[i].msg), "'%s' lacks '%s'", err.msg,
			      cases[i].msg);
		ck_assert_msg(strstr(err.msg, "task.json: "), "no file name: %s", err.msg);
	}
}
END_TEST

/* The import text is the task.yaml the loader sees: loading it gives the same task. */
START_TEST(yaml_round_trip)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *a = NULL, *b = NULL;
	char path[128], *yaml = NULL;

	ck_assert_int_eq(load_json("{\"id\":\"t\",\"title\":\"A \\\"quoted\\\" title: yes\","
				   "\"description\":\"  leading spaces\\n\\ttab\"}",
				   &a, &err),
			 0);
	snprintf(path, sizeof(path), "%s/task.json", sbx_test_scratch);
	ck_assert_int_eq(sbx_task_reference_to_yaml(path, 0, &yaml, &err), 0);
	ck_assert_int_eq(
		sbx_task_parse("task.yaml", sbx_test_scratch, yaml, strlen(yaml), &b, &err), 0);
	ck_assert_str_eq(b->title, "A \"quoted\" title: yes");
	ck_assert_str_eq(b->prompt, a->prompt);
	ck_assert_str_eq(b->prompt, "  leading spaces\n\ttab");
	ck_assert(!b->reference);
	free(yaml);
	sbx_task_free(a);
	sbx_task_free(b);
}
END_TEST

/* Awkward text survives the YAML; several files are graded pairwise. */
START_TEST(parse_in_memory_awkward)
{
	static const char json[] =
		"{\"id\":\"t\",\"title\":\"A \\\"q\\\": x\\n\",\"description\":\"  "
		"lead\\n\\tx\\r\\n\\n\\n\","
		"\"files\":\"a.ods\",\"oracle\":[\"o.ods\",\"p.ods\"],\"output\":[\"a.ods\",\"b."
		"ods\"],"
		"\"grading\":{\"sheets_to_check\":[\"S 1\",\"\\u00e9\"],\"pass_threshold\":1},"
		"\"timeout\":0.5}";
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	char *yaml = NULL;

	ck_assert_msg(
		sbx_task_reference_parse("t.json", NULL, json, strlen(json), 0, &yaml, &err) == 0,
		"%s", err.msg);
	ck_assert_msg(sbx_task_parse("t.json", NULL, yaml, strlen(yaml), &t, &err) == 0, "%s\n%s",
		      err.msg, yaml);
	ck_assert_str_eq(t->title, "A \"q\": x\n");
	ck_assert_str_eq(t->prompt, "  lead\n\tx\r\n\n\n");
	ck_assert_str_eq(t->files[0], "starting_files/a.ods");
	ck_assert_uint_eq(t->grading.n_cases, 2);
	ck_assert_str_eq(t->grading.cases[1].output, "b.ods");
	ck_assert_str_eq(t->grading.cases[1].oracle, "oracle/p.ods");
	ck_assert_str_eq(t->grading.cases[1].opts.sheets[1].name, "\xc3\xa9");
	ck_assert_uint_eq(t->limits.timeout_s, 1);
	sbx_task_free(t);
	free(yaml);
}
END_TEST

static void copy_from(const char *src, const char *rel)
{
	char dst[256], buf[65536];
	FILE *in = fopen(src, "rb"), *out;
	size_t n;

	snprintf(dst, sizeof(dst), "%s/%s", sbx_test_scratch, rel);
	out = fopen(dst, "wb");
	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
}

/* --answer-ranges on the reference's own banking_reserve files: D is the answer, A:C the inputs. */
START_TEST(answer_ranges_from_the_files)
{
	const char *root = getenv("SBX_SOURCE_ROOT");
	char src[512], path[640], *yaml = NULL, *p;
	sbx_error err = SBX_ERROR_INIT;
	sbx_book *b = NULL;

	snprintf(src, sizeof(src), "%s/tests/compat/data/banking_reserve", root ? root : "../..");
	snprintf(path, sizeof(path), "%s/starting_files/cash_flows.ods", src);
	copy_from(path, "starting_files/cash_flows.ods");
	snprintf(path, sizeof(path), "%s/oracle/expected_reserves.ods", src);
	copy_from(path, "oracle/expected.ods");
	sbx_test_put(sbx_test_scratch, "task.json", "{\"id\":\"t\",\"description\":\"d\"}");
	snprintf(path, sizeof(path), "%s/task.json", sbx_test_scratch);
	ck_assert_msg(sbx_task_reference_to_yaml(path, SBX_TASK_REFERENCE_ANSWER_RANGES, &yaml,
						 &err) == 0,
		      "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(yaml, "- name: answer\n      ranges: [\"Sheet1!D1:D101\"]"));
	ck_assert_ptr_nonnull(strstr(yaml, "gate: true"));
	ck_assert_ptr_nonnull(strstr(yaml, "ranges: [\"Sheet1!A1:C101\"]"));
	free(yaml);

	/* An oracle that changes a given cell has no answer-only range. */
	snprintf(path, sizeof(path), "%s/oracle/expected.ods", sbx_test_scratch);
	ck_assert_int_eq(sbx_book_open(path, NULL, &b, &err), 0);
	ck_assert_int_eq(sbx_sheet_set_number(sbx_book_sheet(b, 0), 1, 1, 1.5, &err), 0);
	ck_assert_int_eq(sbx_book_save(b, path, SBX_FORMAT_ODS, &err), 0);
	sbx_book_free(b);
	snprintf(path, sizeof(path), "%s/task.json", sbx_test_scratch);
	ck_assert_int_lt(
		sbx_task_reference_to_yaml(path, SBX_TASK_REFERENCE_ANSWER_RANGES, &yaml, &err), 0);
	ck_assert_msg((p = strstr(err.msg, "'Sheet1'!B2 differs")), "%s", err.msg);
	/* Without the flag the reference's whole-sheet grading still converts. */
	ck_assert_int_eq(sbx_task_reference_to_yaml(path, 0, &yaml, &err), 0);
	free(yaml);
}
END_TEST

/* A folder path resolves to its task.json; task.yaml wins when it has both. */
START_TEST(resolve_and_precedence)
{
	sbx_error err = SBX_ERROR_INIT;
	char *file = NULL;

	sbx_test_put(sbx_test_scratch, "task.json", "{\"id\":\"t\",\"description\":\"d\"}");
	ck_assert_int_eq(sbx_task_resolve(NULL, sbx_test_scratch, &file, &err), 0);
	ck_assert_ptr_nonnull(strstr(file, "/task.json"));
	free(file);
	{
		/* A tasks directory lists and resolves a reference folder by its name. */
		char parent[128], link[192], **names = NULL;
		size_t n = 0;

		snprintf(parent, sizeof(parent), "%s/tasks", sbx_test_scratch);
		ck_assert_int_eq(mkdir(parent, 0755), 0);
		snprintf(link, sizeof(link), "%s/ref1", parent);
		ck_assert_int_eq(symlink(sbx_test_scratch, link), 0);
		ck_assert_int_eq(sbx_task_list(parent, &names, &n, &err), 0);
		ck_assert_uint_eq(n, 1);
		ck_assert_str_eq(names[0], "ref1");
		sbx_task_names_free(names);
		ck_assert_int_eq(sbx_task_resolve(parent, "ref1", &file, &err), 0);
		ck_assert_ptr_nonnull(strstr(file, "ref1/task.json"));
		free(file);
		unlink(link);
		rmdir(parent);
	}
	sbx_test_put(sbx_test_scratch, "task.yaml",
		     "id: t\ntitle: T\ndifficulty: easy\nprompt: p\noutputs: o.ods\n"
		     "oracle: oracle/expected.ods\n");
	ck_assert_int_eq(sbx_task_resolve(NULL, sbx_test_scratch, &file, &err), 0);
	ck_assert_ptr_nonnull(strstr(file, "/task.yaml"));
	free(file);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "core", setup, sbx_test_scratch_teardown, 0, full_mapping,
		      defaults_from_folders, errors_name_the_json_path, yaml_round_trip,
		      parse_in_memory_awkward, answer_ranges_from_the_files,
		      resolve_and_precedence);
}

SBX_TEST_MAIN("task-reference", add_cases)
