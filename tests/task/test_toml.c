/* SPDX-License-Identifier: MIT */
/* The task.toml subset parser (lib/task/toml.c) and the Harbor loader (lib/task/harbor.c). */
#include "check_main.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/path.h"
#include "sbx/task.h"
#include "toml.h"

static sbx_ynode *parse_ok(const char *text)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_ynode *root = NULL;

	ck_assert_msg(sbx_toml__parse("t.toml", text, strlen(text), &root, &err) == 0, "%s",
		      err.msg);
	return root;
}

static const char *str(const sbx_ynode *map, const char *key)
{
	const sbx_ynode *n = sbx_ytree__get(map, key);

	ck_assert_msg(n && n->kind == SBX_YNODE_SCALAR, "no scalar '%s'", key);
	return n->value;
}

START_TEST(test_values)
{
	sbx_ynode *root = parse_ok("# c\n"
				   "version = \"1.0\"  # trailing\n"
				   "n = 1_000\nf = 600.0\nneg = -2.5e3\nb = true\n"
				   "lit = 'C:\\path'\n"
				   "esc = \"a\\tb\\u00e9\\\"\"\n"
				   "ml = \"\"\"\nline1\n  line2 \\\n   joined\"\"\"\n"
				   "mll = '''\nraw \\n'''\n"
				   "arr = [1, \"two\",\n  # comment\n  [3],\n]\n"
				   "[task]\nname = \"org/x\"\n"
				   "[environment]\nenv = { A = \"1\", b.c = 2 }\n"
				   "[a.b]\nc = 1\n[a]\nd = 2\n"
				   "[[steps]]\nname = \"s1\"\n[[steps]]\nname = \"s2\"\n"
				   "\"quoted key\" = 1\n");
	const sbx_ynode *n, *env, *steps;

	ck_assert_str_eq(str(root, "version"), "1.0");
	ck_assert_int_eq(sbx_ytree__get(root, "version")->plain, false);
	ck_assert_str_eq(str(root, "n"), "1000");
	ck_assert_int_eq(sbx_ytree__get(root, "n")->plain, true);
	ck_assert_str_eq(str(root, "f"), "600.0");
	ck_assert_str_eq(str(root, "neg"), "-2.5e3");
	ck_assert_str_eq(str(root, "b"), "true");
	ck_assert_str_eq(str(root, "lit"), "C:\\path");
	ck_assert_str_eq(str(root, "esc"), "a\tb\xc3\xa9\"");
	ck_assert_str_eq(str(root, "ml"), "line1\n  line2 joined");
	ck_assert_str_eq(str(root, "mll"), "raw \\n");
	n = sbx_ytree__get(root, "arr");
	ck_assert_int_eq(n->kind, SBX_YNODE_SEQ);
	ck_assert_uint_eq(n->n, 3);
	ck_assert_int_eq(n->items[2]->kind, SBX_YNODE_SEQ);
	ck_assert_str_eq(str(sbx_ytree__get(root, "task"), "name"), "org/x");
	env = sbx_ytree__get(sbx_ytree__get(root, "environment"), "env");
	ck_assert_str_eq(str(env, "A"), "1");
	ck_assert_str_eq(str(sbx_ytree__get(env, "b"), "c"), "2");
	ck_assert_str_eq(str(sbx_ytree__get(sbx_ytree__get(root, "a"), "b"), "c"), "1");
	ck_assert_str_eq(str(sbx_ytree__get(root, "a"), "d"), "2");
	steps = sbx_ytree__get(root, "steps");
	ck_assert_int_eq(steps->kind, SBX_YNODE_SEQ);
	ck_assert_uint_eq(steps->n, 2);
	ck_assert_str_eq(str(steps->items[1], "name"), "s2");
	ck_assert_str_eq(str(steps->items[1], "quoted key"), "1");
	ck_assert_uint_eq(sbx_ytree__get(root, "task")->line, 19);
	sbx_ytree__free(root);
}
END_TEST

static const struct {
	const char *text, *error;
} bad[] = {
	{"a = 1\na = 2\n", "t.toml:2:1: key 'a' is already defined"},
	{"[t]\n[t]\n", "t.toml:2:1: table 't' is already defined"},
	{"a = 1\n[a]\n", "t.toml:2:1: table 'a' is already defined"},
	{"d = 1979-05-27\n", "t.toml:1:15: dates and times are not supported"},
	{"h = 0x1f\n", "t.toml:1:9: only decimal integers are supported"},
	{"s = \"open\n", "t.toml:1:10: newline in a single-line string"},
	{"s = \"\"\"never closed\n", "t.toml:2:1: unterminated string"},
	{"s = \"\\q\"\n", "t.toml:1:7: unknown escape '\\q'"},
	{"s = \"\\u0000\"\n", "t.toml:1:12: \\u escape is not a Unicode scalar value"},
	{"x = nope\n", "t.toml:1:9: 'nope' is not a number, a boolean or a quoted string"},
	{"x = 1__0\n", "t.toml:1:6: '_' must sit between two digits"},
	{"x = 1 2\n", "t.toml:1:7: expected the end of the line"},
	{"x = [1 2]\n", "t.toml:1:8: expected ',' or ']' in an array"},
	{"t = {a = 1,\n b = 2}\n", "t.toml:1:12: expected a key"},
	{"t = {a = 1}\n[t]\n", "t.toml:2:1: table 't' is already defined"},
	{"t = {a = 1}\nt.b = 2\n", "t.toml:2:1: key 't' is already defined"},
	{"= 1\n", "t.toml:1:1: expected a key"},
	{"a\x01 = 1\n", "t.toml:1:2: control character 0x01"},
	{"a = \"\xff\"\n", "t.toml:1:6: not valid UTF-8"},
	{"a = 1\r\n b = 2\r", "t.toml:2:7: a carriage return not followed by a newline"},
	{"[a\n", "t.toml:1:3: expected ']' to end the table header"},
	{"a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
	 "t.toml:1:37: nested deeper than 32"},
};

START_TEST(test_bad)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_ynode *root = NULL;

	ck_assert_int_lt(sbx_toml__parse("t.toml", bad[_i].text, strlen(bad[_i].text), &root, &err),
			 0);
	ck_assert_ptr_null(root);
	ck_assert_str_eq(err.msg, bad[_i].error);
}
END_TEST

/* A Harbor task directory under a fresh temporary folder; returns its task.toml. */
static const char *harbor_dir(const char *toml, bool with_test)
{
	static char dir[64], path[128];
	const struct {
		const char *rel, *text;
	} files[] = {{"environment/Dockerfile", "FROM scratch\n"},
		     {"instruction.md", "Do it.\n"},
		     {"task.toml", toml},
		     {with_test ? "tests/test.sh" : NULL, "exit 0\n"}};
	sbx_error err = SBX_ERROR_INIT;

	snprintf(dir, sizeof(dir), "/tmp/sbx-toml-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && files[i].rel; i++)
		ck_assert_msg(sbx_path_write_beneath(dir, files[i].rel, files[i].text,
						     strlen(files[i].text), &err) == 0,
			      "%s", err.msg);
	snprintf(path, sizeof(path), "%s/task.toml", dir);
	return path;
}

START_TEST(test_harbor_load)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	const char *path =
		harbor_dir("version = \"1.0\"\n[metadata]\nanything = [1, \"x\"]\n"
			   "[task]\nname = \"org/thing\"\nextra = 1\n"
			   "[verifier]\ntimeout_sec = 90.0\n[agent]\ntimeout_sec = 120\n"
			   "user = \"agent\"\n[environment]\ncpus = 1.5\nmemory_mb = 512\n"
			   "network_mode = \"no-network\"\nallow_internet = false\n",
			   true);

	ck_assert_msg(sbx_task_load(path, &t, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(t->harbor);
	ck_assert_str_eq(t->prompt, "Do it.\n");
	ck_assert_str_eq(t->title, "org/thing");
	ck_assert_uint_eq(t->harbor->verifier_timeout_s, 90);
	ck_assert_uint_eq(t->limits.timeout_s, 120);
	ck_assert_uint_eq(t->limits.memory, 512ull << 20);
	ck_assert_double_eq(t->limits.cpus, 1.5);
	ck_assert_ptr_null(t->harbor->solution);
	ck_assert_ptr_null(t->harbor->docker_image);
	ck_assert(sbx_task_id_valid(t->id));
	sbx_task_free(t);
}
END_TEST

/* A declared workdir is the workspace (one trailing '/' dropped). */
START_TEST(test_harbor_workdir)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	const char *path = harbor_dir("[environment]\nworkdir = \"/app/\"\n", true);

	ck_assert_msg(sbx_task_load(path, &t, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(t->harbor->workdir, "/app");
	sbx_task_free(t);
}
END_TEST

/* The Dockerfile's workdir: the last stage's last WORKDIR, unquoted; or one line with its line. */
static const struct {
	const char *dockerfile, *workdir, *error;
} dockerfiles[] = {
	{"FROM x\nWORKDIR /app\n", "/app", NULL},
	{"FROM x\nworkdir \"/srv/app/\"  \r\n", "/srv/app", NULL},
	{"FROM x AS b\nWORKDIR /build\nFROM y\nCOPY --from=b /build/a /a\n", NULL, NULL},
	{"FROM x\nWORKDIR /app\nWORKDIR /tmp/w\n", NULL,
	 "environment/Dockerfile:3: WORKDIR '/tmp/w': the sandbox's own mount"},
	{"FROM x\n\n  WORKDIR /$HOME/w\n", NULL,
	 "environment/Dockerfile:3: WORKDIR '/$HOME/w': only"},
	{"FROM x\nWORKDIR app\n", NULL, "Dockerfile:2: WORKDIR 'app': not an absolute path"},
};

START_TEST(test_harbor_dockerfile)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	char dir[128];
	const char *path = harbor_dir("", true);
	int r;

	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
	ck_assert_int_eq(sbx_path_write_beneath(dir, "environment/Dockerfile",
						dockerfiles[_i].dockerfile,
						strlen(dockerfiles[_i].dockerfile), &err),
			 0);
	r = sbx_task_load(path, &t, &err);
	if (dockerfiles[_i].error) {
		ck_assert_int_lt(r, 0);
		ck_assert_msg(strstr(err.msg, dockerfiles[_i].error), "%s", err.msg);
		return;
	}
	ck_assert_msg(r == 0, "%s", err.msg);
	if (dockerfiles[_i].workdir)
		ck_assert_str_eq(t->harbor->workdir, dockerfiles[_i].workdir);
	else
		ck_assert_ptr_null(t->harbor->workdir);
	sbx_task_free(t);
}
END_TEST

static const struct {
	const char *wd;
	bool ok;
} workdirs[] = {
	{"/app", true},
	{"/srv/app", true},
	{"/usr/src/app", true},
	{"/root", true},
	{"/workspace", true},
	{"/home/u/my-proj_1.0", true},
	{"app", false},
	{"/", false},
	{"", false},
	{"/tmp", false},
	{"/tmp/app", false},
	{"/proc/1", false},
	{"/dev", false},
	{"/sys/fs", false},
	{"/run/app", false},
	{"/opt", false},
	{"/opt/sandboxctl", false},
	{"/opt/sandboxctl/lib", false},
	{"/tests", false},
	{"/logs/verifier", false},
	{"/etc", false},
	{"/etc/app", false},
	{"/usr", false},
	{"/usr/bin", false},
	{"/usr/local/bin", false},
	{"/lib64", false},
	{"/a/../etc", false},
	{"/a//b", false},
	{"/a/.", false},
	{"/a b", false},
	{"/$HOME", false},
	{"/a,b", false},
	{"/a\nb", false},
};

START_TEST(test_workdir_refusal)
{
	const char *why = sbx_task_harbor_workdir_refusal(workdirs[_i].wd);

	ck_assert_msg(workdirs[_i].ok ? !why : !!why, "'%s': %s", workdirs[_i].wd,
		      why ? why : "accepted");
}
END_TEST

START_TEST(test_workdir_too_long)
{
	char wd[300];

	memset(wd, 'a', sizeof(wd) - 1);
	wd[0] = '/';
	wd[sizeof(wd) - 1] = '\0';
	ck_assert_ptr_nonnull(sbx_task_harbor_workdir_refusal(wd));
	wd[SBX_TASK_HARBOR_WORKDIR_MAX] = '\0';
	ck_assert_ptr_null(sbx_task_harbor_workdir_refusal(wd));
}
END_TEST

static const struct {
	const char *toml, *error; /* error: the message's tail, after "<dir>/" */
	bool with_test;
} harbor_bad[] = {
	{"[environment]\nnetwork_mode = \"public\"\n",
	 "task.toml:2:16: environment.network_mode 'public' asks for network; sandboxes have none "
	 "(use \"no-network\")",
	 true},
	{"[agent]\nnetwork_mode = \"allowlist\"\n",
	 "task.toml:2:16: agent.network_mode 'allowlist' asks for network; sandboxes have none "
	 "(use "
	 "\"no-network\")",
	 true},
	{"[environment]\nallow_internet = true\n",
	 "task.toml:2:18: allow_internet: asks for network; sandboxes have none", true},
	{"[environment]\nallowed_hosts = [\"pypi.org\"]\n",
	 "task.toml:2:17: allowed_hosts: asks for network; sandboxes have none", true},
	{"[[steps]]\nname = \"a\"\n",
	 "task.toml:1:1: multi-step tasks ([[steps]]) are not supported", true},
	{"[environment]\ngpus = 1\n", "task.toml:2:8: gpus: GPUs are not supported", true},
	{"[environment]\nworkdir = \"/tmp/app\"\n",
	 "task.toml:2:11: environment.workdir '/tmp/app': the sandbox's own mount or a system "
	 "directory",
	 true},
	{"[environment]\nworkdir = \"app\"\n",
	 "task.toml:2:11: environment.workdir 'app': not an absolute path", true},
	{"[environment]\nworkdir = 1\n", "task.toml:2:11: environment.workdir '1': not a string",
	 true},
	{"[verifier]\ntimeout_sec = 0\n",
	 "task.toml:2:15: verifier.timeout_sec must be a number between 1 and 86400", true},
	{"[verifier]\ntimout_sec = 1\n", "task.toml:2:1: unknown key 'verifier.timout_sec'", true},
	{"[mystery]\n", "task.toml:1:1: unknown key 'mystery'", true},
	{"", "tests/test.sh is missing (a Harbor task directory needs it)", false},
};

START_TEST(test_harbor_bad)
{
	sbx_error err = SBX_ERROR_INIT;
	sbx_task *t = NULL;
	const char *path = harbor_dir(harbor_bad[_i].toml, harbor_bad[_i].with_test);
	const char *tail;

	ck_assert_int_lt(sbx_task_load(path, &t, &err), 0);
	ck_assert_ptr_null(t);
	tail = strstr(err.msg, "/sbx-toml-");
	ck_assert_ptr_nonnull(tail);
	tail = strchr(tail + 1, '/');
	ck_assert_msg((tail && strcmp(tail + 1, harbor_bad[_i].error) == 0) ||
			      strstr(err.msg, harbor_bad[_i].error),
		      "%s", err.msg);
}
END_TEST

static void add_cases(Suite *s)
{
	TCase *tc = SBX_TEST_CASE(s, "toml", NULL, NULL, 0, test_values, test_harbor_load,
				  test_harbor_workdir, test_workdir_too_long);

	SBX_TEST_TABLE(tc, test_bad, bad);
	SBX_TEST_TABLE(tc, test_harbor_bad, harbor_bad);
	SBX_TEST_TABLE(tc, test_workdir_refusal, workdirs);
	SBX_TEST_TABLE(tc, test_harbor_dockerfile, dockerfiles);
}

SBX_TEST_MAIN("task-toml", add_cases)
