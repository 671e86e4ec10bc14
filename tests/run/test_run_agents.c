/* SPDX-License-Identifier: MIT */
/* Host agents as process groups, and the grading child's answers as untrusted input. */
#include "test_run.h"

/* ---- host agents ---- */

/*
 * Runs the agent argv (environment env) logging to agent.log in the scratch
 * directory, checks it exits within 5 s with want_exit; its log (free it).
 */
static char *agent_log(char **argv, char **env, int want_exit)
{
	sbx_agent_proc a;
	sbx_error err = SBX_ERROR_INIT;
	char log[300], *text;
	size_t len;

	snprintf(log, sizeof(log), "%s/agent.log", sbx_test_scratch);
	unlink(log);
	ck_assert_int_eq(sbx_agent__spawn(&a, argv, env, log, false, &err), 0);
	ck_assert(sbx_agent__wait(&a, 5000));
	ck_assert_int_eq(a.exit_code, want_exit);
	sbx_agent__stop(&a, 100);
	ck_assert_int_eq(
		sbx_rundir__read(sbx_test_scratch, "agent.log", 1 << 20, &text, &len, &err), 0);
	return text;
}

START_TEST(agent_gets_env_and_logs)
{
	char *argv[] = {"/bin/sh", "-c", "echo url=$SANDBOX_MCP_URL; echo oops >&2; exit 7", NULL};
	char *env[] = {"SANDBOX_MCP_URL=http://127.0.0.1:1/mcp", NULL};
	char *text;

	sbx_test_scratch_setup();
	text = agent_log(argv, env, 7);
	ck_assert_ptr_nonnull(strstr(text, "url=http://127.0.0.1:1/mcp"));
	ck_assert_ptr_nonnull(strstr(text, "oops"));
	free(text);
	sbx_test_scratch_teardown();
}
END_TEST

static bool pid_alive(pid_t pid)
{
	char path[64], st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	/* A zombie waiting for its parent is as good as gone. */
	if (fscanf(f, "%*d %*s %c", &st) != 1)
		st = 0;
	fclose(f);
	return st && st != 'Z';
}

START_TEST(agent_inherits_only_stdio)
{
	char *text;
	/* The shell's own table, listed by a child while the shell waits. */
	char *argv[] = {"/bin/sh", "-c", "ls /proc/$$/fd", NULL};
	char *missing[] = {"/nonexistent/agent", NULL};
	int leak = open("/dev/null", O_RDONLY); /* no O_CLOEXEC, like a careless library */
	int sock = socket(AF_UNIX, SOCK_STREAM, 0);

	ck_assert_int_ge(leak, 3);
	ck_assert_int_ge(sock, 3);
	sbx_test_scratch_setup();
	text = agent_log(argv, NULL, 0);
	ck_assert_str_eq(text, "0\n1\n2\n");
	free(text);
	/* An exec that fails is reported by sandboxctl, from outside the fork. */
	text = agent_log(missing, NULL, 127);
	ck_assert_ptr_nonnull(strstr(text, "cannot run agent '/nonexistent/agent'"));
	free(text);
	close(leak);
	close(sock);
	sbx_test_scratch_teardown();
}
END_TEST

/* The pid after "tag=" in the agent's log, waiting up to 5 s for it; 0 when none came. */
static pid_t logged_pid(sbx_agent_proc *a, const char *tag)
{
	sbx_error err = SBX_ERROR_INIT;
	pid_t pid = 0;

	for (int i = 0; i < 500 && !pid; i++) {
		char *text = NULL;
		size_t len;

		usleep(10000);
		sbx_agent__poll(a);
		if (sbx_rundir__read(sbx_test_scratch, "agent.log", 1 << 20, &text, &len, &err) ==
			    0 &&
		    strstr(text, tag))
			pid = (pid_t)atoi(strstr(text, tag) + strlen(tag));
		free(text);
	}
	return pid;
}

START_TEST(agent_stop_takes_the_whole_group)
{
	sbx_agent_proc a;
	sbx_error err = SBX_ERROR_INIT;
	char log[300];
	pid_t child;
	/* A grandchild that ignores nothing special: the group must go. */
	char *argv[] = {"/bin/sh", "-c", "sleep 300 & echo child=$!; wait", NULL};

	sbx_test_scratch_setup();
	snprintf(log, sizeof(log), "%s/agent.log", sbx_test_scratch);
	ck_assert_int_eq(sbx_agent__spawn(&a, argv, NULL, log, false, &err), 0);
	child = logged_pid(&a, "child=");
	ck_assert_int_gt(child, 0);
	ck_assert(pid_alive(child));
	sbx_agent__stop(&a, 2000);
	ck_assert_int_ge(a.exit_code, 0);
	for (int i = 0; i < 100 && pid_alive(child); i++)
		usleep(20000);
	ck_assert_msg(!pid_alive(child), "the agent's child %d outlived stop", (int)child);
	sbx_test_scratch_teardown();
}
END_TEST

/*
 * What an agent starts in a session of its own (setsid, after a double fork:
 * out of its process group, reparented away from it) ends with it, whether it
 * exits on its own or is stopped. Fails on a supervisor that only signals the group.
 */
START_TEST(agent_descendants_end_with_it)
{
	static const char *const scripts[] = {
		/* exits on its own, leaving a daemon behind */
		"(setsid sh -c 'echo daemon=$$; exec sleep 300' &); sleep 0.3; exit 0",
		/* still running at stop, its setsid child waiting */
		"setsid sh -c 'echo daemon=$$; trap \"\" TERM; exec sleep 300' & sleep 300",
	};

	sbx_test_scratch_setup();
	for (size_t i = 0; i < SBX_ELEMENTSOF(scripts); i++) {
		char *argv[] = {"/bin/sh", "-c", (char *)scripts[i], NULL};
		sbx_error err = SBX_ERROR_INIT;
		sbx_agent_proc a;
		char log[300];
		bool survived;
		pid_t daemon;

		snprintf(log, sizeof(log), "%s/agent.log", sbx_test_scratch);
		unlink(log);
		ck_assert_int_eq(sbx_agent__spawn(&a, argv, NULL, log, false, &err), 0);
		daemon = logged_pid(&a, "daemon=");
		ck_assert_int_gt(daemon, 0);
		if (i == 0)
			ck_assert(sbx_agent__wait(&a, 5000));
		sbx_agent__stop(&a, 2000);
		for (int k = 0; k < 100 && pid_alive(daemon); k++)
			usleep(20000);
		survived = pid_alive(daemon);
		if (survived)
			kill(daemon, SIGKILL);
		ck_assert_msg(!survived, "script %zu: its setsid child %d outlived the agent", i,
			      (int)daemon);
	}
	sbx_test_scratch_teardown();
}
END_TEST

/*
 * The parent side of the grading child: a scripted "grader" answers each
 * row; only a well-formed answer from a child that exited 0 is a grade,
 * the grader's own error stays an error, anything else is a grade error
 * with its reason (sbx_run_grade_isolated).
 */
#define GOOD_ANSWER                                                                                \
	"{\"status\":1,\"score\":0.5,\"cells_graded\":4,\"cells_matched\":2,\"recalc\":"           \
	"\"none\",\"recalc_formulas\":0,\"recalc_native\":0,\"recalc_unsupported\":0,"             \
	"\"report_text\":\"t\",\"report\":{}}"
static const struct {
	const char *script; /* sh, after the #! line */
	int r;		    /* what sbx_run_grade_isolated returns */
	bool graded;
	const char *why; /* the grade error's start, or the error's message */
} grader_rows[] = {
	{"printf '%s' '" GOOD_ANSWER "'", 0, true, NULL},
	{"printf '{\"status\":3,\"score\":0}'", 0, false, "grader answered garbage (bad status)"},
	{"printf '{\"status\":0,\"score\":1.5}'", 0, false, "grader answered garbage (bad score)"},
	{"printf '{\"status\":0,\"score\":\"1\"}'", 0, false,
	 "grader answered garbage (bad score)"},
	{"printf '{\"status\":0,\"score\":1,\"cells_graded\":-1}'", 0, false,
	 "grader answered garbage (bad count)"},
	{"printf '%s' '" GOOD_ANSWER "' | sed 's/\"cells_matched\":2/\"cells_matched\":1.5/'", 0,
	 false, "grader answered garbage (bad count)"},
	{"printf '%s' '" GOOD_ANSWER "' | sed 's/\"none\"/\"aaaaaaaaaaaaaaaaaaaa\"/'", 0, false,
	 "grader answered garbage (bad recalc)"},
	{"printf '%s' '" GOOD_ANSWER "' | sed 's/\"t\"/5/'", 0, false,
	 "grader answered garbage (bad report)"},
	{"printf '[]'", 0, false, "grader answered garbage (not a JSON object)"},
	{"true", 0, false, "grader answered garbage (no answer)"},
	{"printf '{\"error\":\"oracle gone\",\"code\":-2}'", -ENOENT, false, "oracle gone"},
	{"printf '{\"error\":\"odd\",\"code\":7}'", -EIO, false, "odd"},
	{"printf '{\"limit\":\"memory\"}'", 0, false, "grader exceeded its 2 GiB memory limit"},
	{"echo boom >&2; kill -SEGV $$", 0, false,
	 "grader crashed: signal 11 (SIGSEGV) (its stderr: grader.log)"},
	{"kill -XCPU $$", 0, false, "grader exceeded its 120 s CPU limit"},
	{"exit 3", 0, false, "grader exited with status 3"},
	/* Silent, or its answer half written: killed at the wall-clock limit. */
	{"exec sleep 30", 0, false, "grader exceeded its 2 s time limit"},
	{"printf '{\"status\":0,'; exec sleep 30", 0, false, "grader exceeded its 2 s time limit"},
	{"exec >&-; exec sleep 30", 0, false, "grader exceeded its 2 s time limit"},
	{"printf '%s' '" GOOD_ANSWER "'; exit 1", 0, false, "grader exited with status 1"},
};

START_TEST(grade_child_answers_are_untrusted)
{
	char prog[128], log[128];
	sbx_task task = {.path = (char *)"task.yaml"};
	sbx_run_grade g = {0};
	sbx_error err = SBX_ERROR_INIT;
	struct stat st;
	FILE *f;
	int r;

	sbx_test_scratch_setup();
	snprintf(prog, sizeof(prog), "%s/grader", sbx_test_scratch);
	snprintf(log, sizeof(log), "%s/grader.log", sbx_test_scratch);
	f = fopen(prog, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!/bin/sh\n%s\n", grader_rows[_i].script);
	fclose(f);
	ck_assert_int_eq(chmod(prog, 0700), 0);
	r = sbx_run_grade_isolated(prog, &task, sbx_test_scratch,
				   &(sbx_run_grader_opts){.log_path = log, .wall_s = 2}, &g, &err);
	ck_assert_msg(r == grader_rows[_i].r, "row %d: r %d (%s)", _i, r, sbx_error_message(&err));
	ck_assert(g.graded == grader_rows[_i].graded);
	if (g.graded) {
		ck_assert_int_eq(g.status, SBX_GRADE_PARTIAL);
		ck_assert(g.score == 0.5 && g.cells_graded == 4 && g.cells_matched == 2);
		ck_assert_str_eq(g.recalc, "none");
		ck_assert_str_eq(g.report_text, "t");
		ck_assert(cJSON_IsObject(g.report));
		ck_assert_ptr_null(g.error);
	} else if (r < 0) {
		ck_assert_str_eq(sbx_error_message(&err), grader_rows[_i].why);
	} else {
		ck_assert_msg(g.error && strcmp(g.error, grader_rows[_i].why) == 0,
			      "row %d: '%s', want '%s'", _i, g.error, grader_rows[_i].why);
	}
	/* The child's stderr is kept only when it said something. */
	ck_assert_int_eq(stat(log, &st) == 0, strstr(grader_rows[_i].script, ">&2") != NULL);
	sbx_run_grade_clear(&g);
	sbx_test_scratch_teardown();
}
END_TEST

START_TEST(grade_child_that_cannot_start_is_an_error)
{
	sbx_task task = {.path = (char *)"task.yaml"};
	sbx_run_grade g = {0};
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(sbx_run_grade_isolated("/nonexistent/sandbox-grader", &task, "/tmp", NULL,
						&g, &err),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(sbx_error_message(&err), "could not start"));
	ck_assert(!g.graded && !g.error);
}
END_TEST

void run_agents_cases(Suite *s)
{
	TCase *tc;

	SBX_TEST_CASE(s, "agents", NULL, NULL, 30, agent_gets_env_and_logs,
		      agent_stop_takes_the_whole_group, agent_inherits_only_stdio,
		      agent_descendants_end_with_it);

	tc = SBX_TEST_CASE(s, "grade-child", NULL, NULL, 30,
			   grade_child_that_cannot_start_is_an_error);
	SBX_TEST_TABLE(tc, grade_child_answers_are_untrusted, grader_rows);
}
