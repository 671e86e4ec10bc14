/* SPDX-License-Identifier: MIT */
/*
 * The lifecycle, prepare → launch → wait → finish, with no engine: the
 * sandbox is the real sandbox-mcp as a child process (backend_local.c).
 * Every end of an episode, every failure class and what result.json says
 * of each. Agents are host shell commands talking to the relay with curl.
 */
#include "check_main.h"
#include "test_files.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend_local.h"
#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/path.h"
#include "sbx/run.h"

static char tmp[256];
static local_config cfg;
static volatile sig_atomic_t interrupted;

/* The agent's one tool call and its completion, through the relay (REST). */
#define CALL                                                                                       \
	"call() { curl -sf --noproxy '*' -X POST -H 'Content-Type: application/json' "             \
	"-d \"$2\" \"$SANDBOX_REST_URL$1\" >/dev/null; }; "
#define WRITE(v)                                                                                   \
	"call /tools/call '{\"tool_name\":\"execute_shell\",\"arguments\":{\"command\":"           \
	"\"printf " v " > answer.txt\"}}'"
#define COMPLETE "call /v1/task/complete '{}'"

static void put(const char *rel, const char *text)
{
	ck_assert_int_eq(sbx_path_write_beneath(tmp, rel, text, strlen(text), NULL), 0);
}

static void setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/sbx-lifecycle-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	put("tasks/answer/task.yaml", "id: answer\n"
				      "title: The answer\n"
				      "difficulty: easy\n"
				      "prompt: Write 42 into answer.txt.\n"
				      "files: [files/question.txt]\n"
				      "outputs: [answer.txt]\n"
				      "oracle: oracle/answer.txt\n");
	put("tasks/answer/files/question.txt", "What is six times seven?\n");
	/* Graded by lib/grade in process (no grader program): answer.txt is read as CSV, so
	 * PASS when it says 42, FAIL otherwise (missing included). */
	put("tasks/answer/oracle/answer.txt", "42");
	memset(&cfg, 0, sizeof(cfg));
	interrupted = 0;
}

static void teardown(void)
{
	ck_assert_int_eq(sbx_path_remove_tree_at(AT_FDCWD, tmp), 0);
}

static sbx_run_opts opts_for(const char *agent)
{
	static char tasks[300], runs[300];
	sbx_run_opts o = SBX_RUN_OPTS_INIT;

	snprintf(tasks, sizeof(tasks), "%s/tasks", tmp);
	snprintf(runs, sizeof(runs), "%s/runs", tmp);
	o.task = "answer";
	o.tasks_dir = tasks;
	o.runs_dir = runs;
	o.agent = agent;
	o.quiet_agent = true;
	o.test = true;
	o.ready_timeout_s = 20;
	o.interrupted = &interrupted;
	o.backend = local_backend_new;
	o.backend_userdata = &cfg;
	return o;
}

/* runs/<id>/result.json, parsed. */
static cJSON *result_json(const sbx_run *run)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	cJSON *j = NULL;
	size_t len;

	ck_assert_int_ge(asprintf(&path, "%s/result.json", sbx_run_get_result(run)->run_dir), 0);
	ck_assert_int_eq(sbx_file_read_capped(AT_FDCWD, path, 1 << 20, &text, &len, NULL), 0);
	ck_assert_int_eq(sbx_json_parse(text, len, &j, NULL), 0);
	return j;
}

/* What every episode's result.json says, whatever the end; the sandbox is gone. */
static void check_result(const sbx_run *run, const char *status, const char *end)
{
	_cleanup_json_ cJSON *j = result_json(run);
	const sbx_run_result *res = sbx_run_get_result(run);

	ck_assert_str_eq(sbx_json_get_string(j, "status", "?"), status);
	ck_assert_str_eq(sbx_run_status_name(res->status), status);
	ck_assert_str_eq(sbx_json_get_string(j, "ended_by", "?"), end);
	ck_assert_int_eq(sbx_json_get_number(j, "exit_code", -1),
			 sbx_run_status_exit_code(res->status));
	ck_assert_str_eq(sbx_json_get_string(j, "outcome", "?"),
			 res->status <= SBX_RUN_TIMEOUT	      ? "task"
			 : res->status == SBX_RUN_INTERRUPTED ? "interrupted"
			 : res->status == SBX_RUN_INFRA_ERROR ? "infrastructure"
							      : "agent");
	ck_assert_str_eq(sbx_json_get_string(j, "task", "?"), "answer");
	ck_assert_str_eq(sbx_json_get_string(j, "run_id", "?"), res->run_id);
	if (cfg.root[0])
		ck_assert_msg(access(cfg.root, F_OK) < 0, "sandbox '%s' left behind", cfg.root);
}

static void check_ran(const sbx_run *run)
{
	const sbx_run_result *res = sbx_run_get_result(run);

	ck_assert_str_eq(res->backend, "local-test");
	ck_assert(res->phase_done[SBX_PHASE_CREATE] && res->phase_done[SBX_PHASE_START]);
	ck_assert(res->phase_done[SBX_PHASE_COPY_IN] && res->phase_done[SBX_PHASE_READY]);
	ck_assert(res->phase_done[SBX_PHASE_REMOVE]);
	ck_assert_ptr_null(res->error);
}

static sbx_run *execute(const sbx_run_opts *o)
{
	sbx_run *run = NULL;
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_msg(sbx_run_execute(o, &run, &err) == 0, "%s", sbx_error_message(&err));
	return run;
}

/* on_ready: the starting files are in the workspace before the agent starts. */
static void saw_inputs(sbx_run *run, void *userdata)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	size_t len;

	ck_assert_int_ge(asprintf(&path, "%s/question.txt", local_backend_workspace(cfg.last)), 0);
	ck_assert_int_eq(sbx_file_read_capped(AT_FDCWD, path, 1024, &text, &len, NULL), 0);
	ck_assert_str_eq(text, "What is six times seven?\n");
	*(bool *)userdata = true;
}

START_TEST(complete_task_ends_graded)
{
	sbx_run_opts o = opts_for(CALL WRITE("42") " && " COMPLETE);
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	bool ready = false;
	const sbx_run_result *res;

	o.on_ready = saw_inputs;
	o.on_ready_userdata = &ready;
	run = execute(&o);
	res = sbx_run_get_result(run);
	ck_assert(ready);
	check_result(run, "pass", "complete_task");
	check_ran(run);
	ck_assert(res->grade.graded);
	ck_assert_int_eq(res->agent_exit, 0);
	ck_assert(!res->agent_stopped);
	ck_assert_str_eq(res->sandbox_recalc, "none");
	ck_assert_uint_ge(res->relay.requests, 2);
	/* The outputs came through GET /control/file, not the tar. */
	ck_assert_uint_eq(cfg.copy_outs, 0);
}
END_TEST

/*
 * The host waits on the server's long-poll: completion is seen at once,
 * not at the next poll, and a long wait costs a few requests, not one per tick.
 */
START_TEST(completion_is_seen_by_the_long_poll)
{
	sbx_run_opts o = opts_for(CALL WRITE("42") " && sleep 1.5 && " COMPLETE " && sleep 5");
	_cleanup_(sbx_run_freep) sbx_run *run = execute(&o);
	const sbx_run_result *res = sbx_run_get_result(run);

	check_result(run, "pass", "complete_task");
	/* The agent sleeps 5 s after completing: the episode ended well before. */
	ck_assert_msg(res->phase_ms[SBX_PHASE_AGENT] < 2700, "agent phase %.0f ms",
		      res->phase_ms[SBX_PHASE_AGENT]);
	/* ~1.6 s of waiting in 250 ms long-polls: a few requests, not a stream of them. */
	ck_assert_msg(res->relay.requests < 20, "%lu requests", res->relay.requests);
	ck_assert(res->agent_stopped);
}
END_TEST

/* A server that starts late is probed with backoff: a handful of streams, not one per 5 ms. */
START_TEST(readiness_backs_off)
{
	sbx_run_opts o = opts_for("oracle");
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;

	cfg.start_delay_ms = 1500;
	run = execute(&o);
	check_result(run, "pass", "complete_task");
	check_ran(run);
	ck_assert_msg(sbx_run_get_result(run)->phase_ms[SBX_PHASE_READY] >= 1400, "ready %.0f ms",
		      sbx_run_get_result(run)->phase_ms[SBX_PHASE_READY]);
	/* 20 ms pauses for half a second, then doubling to 160 ms: about 35 probes in
	 * 1.5 s (300 at a fixed 5 ms). */
	ck_assert_msg(cfg.streams < 50, "%u streams opened", cfg.streams);
}
END_TEST

/*
 * An image built before the control API (its server answers 404 there):
 * the run steps down to the old status path, completes and collects by the
 * reference's paths and the tar, and passes.
 */
START_TEST(older_image_steps_down)
{
	sbx_run_opts o = opts_for("oracle");
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	_cleanup_free_ char *old = NULL, *real = NULL;
	const char *src = getenv("SBX_SOURCE_ROOT"), *build = getenv("SBX_BUILD_ROOT");

	ck_assert_int_ge(asprintf(&old, "%s/tests/run/old_server.py", src ? src : ".."), 0);
	ck_assert_int_ge(asprintf(&real, "%s/server/sandbox-mcp", build ? build : "."), 0);
	setenv("SANDBOX_MCP", real, 1);
	cfg.server = old;
	run = execute(&o);
	check_result(run, "pass", "complete_task");
	check_ran(run);
	ck_assert_int_ne(run->status_api, SBX_STATUS_CONTROL);
	ck_assert_uint_eq(cfg.copy_outs, 1); /* no /control/file: the tar */
}
END_TEST

START_TEST(agent_exit_ends_graded)
{
	sbx_run_opts o = opts_for(CALL WRITE("41"));
	_cleanup_(sbx_run_freep) sbx_run *run = execute(&o);
	const sbx_run_result *res = sbx_run_get_result(run);

	check_result(run, "fail", "agent_exit");
	check_ran(run);
	ck_assert(res->grade.graded);
	ck_assert_int_eq(res->grade.status, SBX_GRADE_FAIL);
	ck_assert_int_eq(res->agent_exit, 0);
}
END_TEST

START_TEST(agent_error_is_flagged_with_its_tail)
{
	sbx_run_opts o = opts_for("sh -c 'echo boom; exit 3'");
	_cleanup_(sbx_run_freep) sbx_run *run = execute(&o);
	const sbx_run_result *res = sbx_run_get_result(run);
	_cleanup_json_ cJSON *j = result_json(run);

	check_result(run, "agent_error", "agent_exit");
	check_ran(run);
	ck_assert_int_eq(res->agent_exit, 3);
	ck_assert_ptr_nonnull(res->agent_tail);
	ck_assert_ptr_nonnull(strstr(res->agent_tail, "boom"));
	ck_assert(res->grade.graded); /* graded, but not a real attempt */
	ck_assert_str_eq(sbx_json_get_string(j, "status", ""), "agent_error");
}
END_TEST

/*
 * The task is running when the agent starts, before any tool call: the
 * reference's GET /task/status answered 404 "No active task" until then
 * (issue 27). The agent reads it first thing, through the relay.
 */
START_TEST(task_is_active_before_the_first_tool_call)
{
	sbx_run_opts o = opts_for("curl -s --noproxy '*' -o \"$SANDBOX_RUN_DIR/status.json\" "
				  "-w '%{http_code}' \"$SANDBOX_REST_URL/task/status\" "
				  "> \"$SANDBOX_RUN_DIR/status.code\"");
	_cleanup_(sbx_run_freep) sbx_run *run = execute(&o);
	_cleanup_free_ char *path = NULL, *text = NULL, *code = NULL;
	_cleanup_json_ cJSON *j = NULL;
	size_t len;

	check_result(run, "fail", "agent_exit");
	ck_assert_int_ge(asprintf(&path, "%s/status.code", sbx_run_get_result(run)->run_dir), 0);
	ck_assert_int_eq(sbx_file_read_capped(AT_FDCWD, path, 64, &code, &len, NULL), 0);
	free(path);
	ck_assert_int_ge(asprintf(&path, "%s/status.json", sbx_run_get_result(run)->run_dir), 0);
	ck_assert_int_eq(sbx_file_read_capped(AT_FDCWD, path, 1 << 16, &text, &len, NULL), 0);
	ck_assert_msg(strcmp(code, "200") == 0, "GET /task/status: %s %s", code, text);
	ck_assert_int_eq(sbx_json_parse(text, len, &j, NULL), 0);
	ck_assert_str_eq(sbx_json_get_string(j, "status", "?"), "running");
	ck_assert_str_eq(sbx_json_get_string(j, "task_id", "?"), "answer");
	/* It counts down to the host's deadline, as it did when a tool call started it. */
	ck_assert(sbx_json_get_number(j, "remaining", 0) > 0);
}
END_TEST

START_TEST(oracle_passes)
{
	sbx_run_opts o = opts_for("oracle");
	_cleanup_(sbx_run_freep) sbx_run *run = execute(&o);

	check_result(run, "pass", "complete_task");
	check_ran(run);
}
END_TEST

START_TEST(deadline_collects_without_the_server)
{
	sbx_run_opts o = opts_for("sleep 30");
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_run_result *res;
	sbx_run_end end;

	ck_assert_int_eq(sbx_run_prepare(&run, &o, &err), 0);
	ck_assert_msg(sbx_run_launch(run, &err) == 0, "%s", sbx_error_message(&err));
	/* The agent's work, and a deadline that passes while it sleeps. */
	ck_assert_int_eq(sbx_path_write_beneath(local_backend_workspace(cfg.last), "answer.txt",
						"42", 2, NULL),
			 0);
	run->deadline_ms = sbx_now_ms() + 100;
	end = sbx_run_wait(run);
	ck_assert_int_eq(end, SBX_END_DEADLINE);
	ck_assert_int_eq(sbx_run_finish(run, end, &err), 0);
	res = sbx_run_get_result(run);
	check_result(run, "timeout", "deadline");
	check_ran(run);
	ck_assert_uint_eq(cfg.copy_outs, 1);
	/* Past the deadline the outputs come by copy_out: graded anyway. */
	ck_assert(res->grade.graded);
	ck_assert_int_eq(res->grade.status, SBX_GRADE_PASS);
	ck_assert(res->agent_stopped);
}
END_TEST

static void interrupt_now(sbx_run *run, void *userdata)
{
	interrupted = SIGINT;
}

/* A sleeping agent's run, with what happens once it is ready. */
static sbx_run *execute_sleeper(void (*on_ready)(sbx_run *run, void *userdata))
{
	sbx_run_opts o = opts_for("sleep 30");

	o.on_ready = on_ready;
	return execute(&o);
}

START_TEST(interrupt_ends_ungraded)
{
	_cleanup_(sbx_run_freep) sbx_run *run = execute_sleeper(interrupt_now);
	const sbx_run_result *res = sbx_run_get_result(run);

	check_result(run, "interrupted", "interrupted");
	check_ran(run);
	ck_assert(!res->grade.graded);
	ck_assert(res->agent_stopped);
	ck_assert_int_eq(sbx_run_status_exit_code(res->status), 130);
}
END_TEST

static void kill_server(sbx_run *run, void *userdata)
{
	local_backend_kill(cfg.last);
}

START_TEST(server_death_is_sandbox_failed)
{
	_cleanup_(sbx_run_freep) sbx_run *run = execute_sleeper(kill_server);
	const sbx_run_result *res = sbx_run_get_result(run);

	check_result(run, "sandbox_failed", "sandbox_died");
	ck_assert_str_eq(res->error_kind, "sandbox_died");
	ck_assert_ptr_nonnull(strstr(res->error, "exited with status 137"));
	ck_assert(!res->grade.graded);
}
END_TEST

/* A launch that fails: infra_error with its kind, result.json written, nothing left. */
static void check_launch_failure(const char *kind)
{
	sbx_run_opts o = opts_for("sleep 30");
	_cleanup_(sbx_run_freep) sbx_run *run = execute(&o);
	const sbx_run_result *res = sbx_run_get_result(run);
	_cleanup_json_ cJSON *j = result_json(run);

	check_result(run, "infra_error", "none");
	ck_assert_str_eq(res->error_kind, kind);
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(j, "error"), "kind", "?"), kind);
	ck_assert_int_eq(res->agent_exit, -1); /* no agent was started */
}

START_TEST(unreachable_engine_is_infra_error)
{
	cfg.fail_new = -ECONNREFUSED;
	check_launch_failure("engine");
}
END_TEST

START_TEST(missing_image_is_infra_error)
{
	cfg.fail_create = -ENOENT;
	check_launch_failure("image_missing");
}
END_TEST

START_TEST(server_that_never_answers_is_infra_error)
{
	cfg.server = "/nonexistent/sandbox-mcp";
	check_launch_failure("sandbox_died");
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "ends", setup, teardown, 30, complete_task_ends_graded,
		      completion_is_seen_by_the_long_poll, readiness_backs_off,
		      older_image_steps_down, agent_exit_ends_graded,
		      agent_error_is_flagged_with_its_tail,
		      task_is_active_before_the_first_tool_call, oracle_passes,
		      deadline_collects_without_the_server, interrupt_ends_ungraded,
		      server_death_is_sandbox_failed);

	SBX_TEST_CASE(s, "failures", setup, teardown, 30, unreachable_engine_is_infra_error,
		      missing_image_is_infra_error, server_that_never_answers_is_infra_error);
}

SBX_TEST_MAIN("lifecycle", add_cases)
