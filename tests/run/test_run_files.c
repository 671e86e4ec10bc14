/* SPDX-License-Identifier: MIT */
/* What a run writes: the transcript, result.json, run ids, run directories, provenance. */
#include "test_run.h"

/* ---- transcript, result, ids, run dirs ---- */

/* A transcript writing to t.jsonl in a fresh scratch directory. */
static sbx_transcript *scratch_transcript(void)
{
	sbx_transcript *t = NULL;
	sbx_error err = SBX_ERROR_INIT;
	char path[300];

	sbx_test_scratch_setup();
	snprintf(path, sizeof(path), "%s/t.jsonl", sbx_test_scratch);
	ck_assert_int_eq(sbx_transcript_open(&t, path, &err), 0);
	return t;
}

START_TEST(transcript_keeps_json_and_text)
{
	sbx_transcript *t = scratch_transcript();
	sbx_error err = SBX_ERROR_INIT;
	char *text;
	size_t len;

	sbx_transcript_record(t, 1, "agent->server", "POST", "/mcp", 0, "{\"x\":1}", 7);
	sbx_transcript_record(t, 1, "server->agent", "POST", "/mcp", 500, "oops\nline", 9);
	ck_assert_uint_eq(sbx_transcript_count(t), 2);
	ck_assert_int_eq(sbx_transcript_close(t), 0);
	ck_assert_int_eq(sbx_rundir__read(sbx_test_scratch, "t.jsonl", 1 << 20, &text, &len, &err),
			 0);
	ck_assert_ptr_nonnull(strstr(text, "\"message\":{\"x\":1}"));
	ck_assert_ptr_nonnull(strstr(text, "\"body\":\"oops\\nline\""));
	ck_assert_ptr_nonnull(strstr(text, "\"status\":500"));
	free(text);
	sbx_test_scratch_teardown();
}
END_TEST

/* Each MCP message keeps the revision it speaks: its own word first, else its request's header. */
START_TEST(transcript_records_the_mcp_version)
{
	static const char modern[] =
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
		"{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}";
	static const char init[] = "{\"id\":2,\"method\":\"initialize\",\"params\":{"
				   "\"protocolVersion\":\"2025-06-18\"}}";
	static const char answer[] = "{\"id\":1,\"result\":{\"tools\":[]}}";
	static const char forged[] = "{\"id\":3,\"method\":\"initialize\",\"params\":{"
				     "\"protocolVersion\":\"0123456789012345678901234567890123\"}}";
	sbx_transcript *t = scratch_transcript();
	sbx_error err = SBX_ERROR_INIT;
	char *text;
	size_t len;

	sbx_transcript_record_mcp(t, 1, "agent->server", "POST", "/mcp", 0, NULL, modern,
				  strlen(modern));
	sbx_transcript_record_mcp(t, 1, "server->agent", "POST", "/mcp", 200, "2026-07-28", answer,
				  strlen(answer));
	sbx_transcript_record_mcp(t, 2, "agent->server", "POST", "/mcp", 0, NULL, init,
				  strlen(init));
	sbx_transcript_record_mcp(t, 3, "agent->server", "POST", "/mcp", 0, NULL, forged,
				  strlen(forged));
	sbx_transcript_record(t, 4, "agent->server", "GET", "/health", 0, "{}", 2);
	ck_assert_int_eq(sbx_transcript_close(t), 0);
	ck_assert_int_eq(sbx_rundir__read(sbx_test_scratch, "t.jsonl", 1 << 20, &text, &len, &err),
			 0);
	ck_assert_ptr_nonnull(strstr(text,
				     "\"conn\":1,\"dir\":\"agent->server\",\"method\":"
				     "\"POST\",\"path\":\"/mcp\",\"mcp_version\":\"2026-07-28\""));
	ck_assert_ptr_nonnull(strstr(text, "\"status\":200,\"mcp_version\":\"2026-07-28\""));
	ck_assert_ptr_nonnull(strstr(text,
				     "\"conn\":2,\"dir\":\"agent->server\",\"method\":"
				     "\"POST\",\"path\":\"/mcp\",\"mcp_version\":\"2025-06-18\""));
	/* An agent's 34-character "version" is no label; nor has a non-MCP line one. */
	ck_assert_ptr_null(strstr(text, "\"mcp_version\":\"0123"));
	ck_assert_ptr_nonnull(strstr(text, "\"path\":\"/health\",\"message\""));
	free(text);
	sbx_test_scratch_teardown();
}
END_TEST

START_TEST(run_ids_are_safe)
{
	char *id = sbx_run_id_new("banking_reserve");
	char *odd = sbx_run_id_new("../../etc/passwd");

	ck_assert(sbx_run_id_valid(id));
	ck_assert_ptr_nonnull(strstr(id, "-banking_reserve-"));
	ck_assert(sbx_run_id_valid(odd));
	ck_assert_ptr_null(strchr(odd, '/'));
	ck_assert(!sbx_run_id_valid("../x"));
	ck_assert(!sbx_run_id_valid(".hidden"));
	ck_assert(!sbx_run_id_valid(""));
	ck_assert(!sbx_run_id_valid("a b"));
	free(id);
	free(odd);
}
END_TEST

/* r's reason, compared with want (NULL: none). */
static void check_reason(const sbx_run_result *r, const char *want)
{
	char *why = sbx_run_result_reason(r);

	if (!want)
		ck_assert_ptr_null(why);
	else
		ck_assert_str_eq(why ? why : "(null)", want);
	free(why);
}

START_TEST(result_reason_says_why_in_one_line)
{
	/* A gate's first changed cell; its value, the agent's, cut on a character boundary. */
	static const char report[] =
		"{\"gate_failed\":true,\"cases\":[{\"name\":\"answer\",\"gate\":false,"
		"\"status\":\"PASS\"},{\"name\":\"inputs unchanged\",\"gate\":true,"
		"\"status\":\"PARTIAL\",\"failure\":null,\"mismatches_total\":3,\"mismatches\":"
		"[{\"cell\":\"Sheet1!A2\",\"expected\":\"Item 01\",\"got\":"
		"\"ééééééééééééééééééééééééééééééééééééééééééé\"}]}]}";
	_cleanup_json_ cJSON *tree = cJSON_Parse(report);
	sbx_run_result r = {0};

	r.status = SBX_RUN_PASS;
	check_reason(&r, NULL);
	r.status = SBX_RUN_TIMEOUT;
	r.limits.resolved.timeout_s = 8;
	check_reason(&r, "deadline 8 s passed during the agent phase");
	r.status = SBX_RUN_SANDBOX_FAILED;
	r.error_kind = "oom";
	r.error = "the sandbox ran out of memory (512 MiB)";
	check_reason(&r, "sandbox failed: oom: the sandbox ran out of memory (512 MiB)");
	r.status = SBX_RUN_AGENT_ERROR;
	r.agent_exit = 1;
	r.agent_tail = "starting | boom";
	check_reason(&r, "agent exited 1: boom");
	{
		/* The agent's log line is cut: the reason stays one short line. */
		char tail[600], *why;

		memset(tail, 'x', sizeof(tail) - 1);
		tail[sizeof(tail) - 1] = '\0';
		r.agent_tail = tail;
		why = sbx_run_result_reason(&r);
		ck_assert_ptr_nonnull(why);
		ck_assert_uint_le(strlen(why), 300);
		ck_assert_str_eq(why + strlen(why) - strlen("…"), "…");
		free(why);
	}
	r.agent_exit = 127;
	r.agent_tail = NULL;
	check_reason(&r, "agent exited 127 (command not found) before complete_task");
	r.status = SBX_RUN_FAIL;
	r.grade.graded = true;
	ck_assert_ptr_nonnull(tree);
	r.grade.report = tree;
	check_reason(&r, "gate 'inputs unchanged' failed: Sheet1!A2 changed (expected \"Item 01\", "
			 "got \"éééééééééééééééééééé…\"); 2 more cell(s)");
	r.grade.graded = false;
	r.grade.error = (char *)"grader crashed: signal 11 (SIGSEGV)";
	check_reason(&r, "grading failed: grader crashed: signal 11 (SIGSEGV)");
	r.grade.error = NULL;
	r.grade.graded = true;
	r.grade.report = NULL; /* none, or none readable: the cell counts say it */
	r.grade.cells_graded = 5;
	r.grade.cells_matched = 2;
	check_reason(&r, "2 of 5 graded cells matched");
}
END_TEST

START_TEST(result_json_separates_infra_from_outcome)
{
	sbx_run_result r = {0};
	cJSON *j = NULL;
	char *text;

	r.run_id = "id1";
	r.task = "t";
	r.agent = "oracle";
	r.agent_exit = -1;
	r.status = SBX_RUN_INFRA_ERROR;
	r.error = "image 'x' missing";
	r.error_kind = "image_missing";
	r.phase_done[SBX_PHASE_CREATE] = true;
	r.phase_ms[SBX_PHASE_CREATE] = 12.5;
	r.limits.resolved.memory = 2ULL << 30;
	r.limits.resolved.pids = 256;
	r.applied.known = true;
	r.applied.cap_drop_all = true;
	r.applied.readonly_rootfs = true;
	r.applied.pids = 256;
	strcpy(r.applied.network_mode, "none");
	strcpy(r.applied.user, "1000:1000");
	text = sbx_run_result_json(&r);
	ck_assert_int_eq(sbx_json_parse(text, strlen(text), &j, NULL), 0);
	ck_assert_str_eq(sbx_json_get_string(j, "status", ""), "infra_error");
	ck_assert_str_eq(sbx_json_get_string(j, "outcome", ""), "infrastructure");
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(j, "error"), "kind", ""),
			 "image_missing");
	ck_assert(sbx_json_get_number(sbx_json_get(j, "timings_ms"), "create", 0) == 12.5);
	ck_assert(cJSON_IsNull(sbx_json_get(sbx_json_get(j, "timings_ms"), "copy_out")));
	ck_assert(sbx_json_get_number(sbx_json_get(j, "limits"), "pids", 0) == 256);
	ck_assert(sbx_json_get_number(j, "exit_code", 0) == 3);
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(sbx_json_get(j, "sandbox"), "hardening"),
					     "network_mode", ""),
			 "none");
	ck_assert(sbx_json_get_bool(sbx_json_get(sbx_json_get(j, "sandbox"), "hardening"),
				    "readonly_rootfs", false));
	ck_assert(sbx_json_get_number(sbx_json_get(sbx_json_get(j, "sandbox"), "hardening"), "pids",
				      0) == 256);
	cJSON_Delete(j);
	free(text);

	r.status = SBX_RUN_TIMEOUT;
	r.error = NULL;
	r.grade.graded = true;
	r.grade.score = 0.5;
	r.grade.status = SBX_GRADE_PARTIAL;
	text = sbx_run_result_json(&r);
	ck_assert_int_eq(sbx_json_parse(text, strlen(text), &j, NULL), 0);
	ck_assert_str_eq(sbx_json_get_string(j, "outcome", ""), "task");
	ck_assert(sbx_json_get_number(j, "score", 0) == 0.5);
	ck_assert(sbx_json_get_number(j, "exit_code", 0) == 4);
	cJSON_Delete(j);
	free(text);

	/* The sandbox failing is the agent's side: a sweep must not count it as ours. */
	r.status = SBX_RUN_SANDBOX_FAILED;
	r.grade.graded = false;
	text = sbx_run_result_json(&r);
	ck_assert_int_eq(sbx_json_parse(text, strlen(text), &j, NULL), 0);
	ck_assert_str_eq(sbx_json_get_string(j, "outcome", ""), "agent");
	ck_assert(sbx_json_get_number(j, "exit_code", 0) == 6);
	cJSON_Delete(j);
	free(text);
	ck_assert_int_eq(sbx_run_status_exit_code(SBX_RUN_PASS), 0);
	ck_assert_int_eq(sbx_run_status_exit_code(SBX_RUN_FAIL), 1);
	ck_assert_int_eq(sbx_run_status_exit_code(SBX_RUN_PARTIAL), 1);
}
END_TEST

START_TEST(rundir_is_fresh_and_confined)
{
	char runs[300], *dir = NULL, src[320], link[340];
	sbx_error err = SBX_ERROR_INIT;
	FILE *f;

	sbx_test_scratch_setup();
	snprintf(runs, sizeof(runs), "%s/runs/deeper", sbx_test_scratch);
	ck_assert_int_eq(sbx_rundir__create(runs, "r1", &dir, &err), 0);
	ck_assert_int_eq(sbx_rundir__create(runs, "r1", &dir, &err), -EEXIST);
	snprintf(src, sizeof(src), "%s/src", sbx_test_scratch);
	mkdir(src, 0755);
	snprintf(link, sizeof(link), "%s/src/a.txt", sbx_test_scratch);
	f = fopen(link, "w");
	fputs("data", f);
	fclose(f);
	snprintf(link, sizeof(link), "%s/src/evil", sbx_test_scratch);
	ck_assert_int_eq(symlink("/etc/passwd", link), 0);
	sbx_error_clear(&err);
	ck_assert_int_eq(sbx_rundir__copy(src, "a.txt", dir, "inputs/sub/a.txt", &err), 0);
	sbx_error_clear(&err);
	ck_assert_int_lt(sbx_rundir__copy(src, "evil", dir, "inputs/evil", &err), 0);
	sbx_error_clear(&err);
	ck_assert_int_lt(sbx_rundir__copy(src, "../src/a.txt", dir, "x", &err), 0);
	sbx_error_clear(&err);
	ck_assert_int_lt(sbx_rundir__copy(src, "a.txt", dir, "../escape", &err), 0);
	ck_assert_int_eq(sbx_rundir__write(dir, "result.json", "{}", 2, &err), 0);
	free(dir);
	sbx_test_scratch_teardown();
}
END_TEST

/*
 * A git repository, scratch/repo, with one commit holding a task.yaml in each
 * of dirs (space-separated).
 */
static void committed_repo(const char *dirs)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "set -e; cd '%s'; mkdir repo; cd repo; git init -q .; for d in %s; do "
		 "mkdir -p $d; echo $d > $d/task.yaml; done; git add .; "
		 "git -c user.name=t -c user.email=t@t commit -qm init",
		 sbx_test_scratch, dirs);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(provenance_sees_commit_and_changes)
{
	char cmd[1024], task[300];
	sbx_provenance p;
	sbx_error err = SBX_ERROR_INIT;

	sbx_test_scratch_setup();
	snprintf(task, sizeof(task), "%s/repo/tasks/t1", sbx_test_scratch);
	committed_repo("tasks/t1 tasks/t2");
	ck_assert_int_eq(sbx_provenance_get(task, &p, &err), 0);
	ck_assert(p.known);
	ck_assert_int_eq(strlen(p.commit), 40);
	ck_assert(!p.dirty);
	ck_assert_str_eq(p.task_path, "tasks/t1");
	sbx_provenance_clear(&p);

	/* A change elsewhere does not make this task dirty; one inside does. */
	snprintf(cmd, sizeof(cmd), "echo c >> '%s/repo/tasks/t2/task.yaml'", sbx_test_scratch);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(sbx_provenance_get(task, &p, &err), 0);
	ck_assert(!p.dirty);
	sbx_provenance_clear(&p);
	snprintf(cmd, sizeof(cmd), "echo new > '%s/repo/tasks/t1/extra.csv'", sbx_test_scratch);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(sbx_provenance_get(task, &p, &err), 0);
	ck_assert(p.dirty);
	ck_assert_uint_eq(p.changed, 1);
	sbx_provenance_clear(&p);

	/* Outside any repository: unknown, not an error. */
	snprintf(task, sizeof(task), "%s", sbx_test_scratch);
	ck_assert_int_eq(sbx_provenance_get(task, &p, &err), 0);
	ck_assert(!p.known);
	sbx_provenance_clear(&p);
	sbx_test_scratch_teardown();
}
END_TEST

/* A sweep's cache reads each folder once: later changes are not seen through it. */
START_TEST(provenance_cache_reads_once)
{
	char cmd[1024], task[300];
	sbx_provenance p;
	sbx_error err = SBX_ERROR_INIT;
	sbx_provenance_cache *c = sbx_provenance_cache_new();

	ck_assert_ptr_nonnull(c);
	sbx_test_scratch_setup();
	snprintf(task, sizeof(task), "%s/repo/t1", sbx_test_scratch);
	committed_repo("t1");
	ck_assert_int_eq(sbx_provenance_cache_get(c, task, &p, &err), 0);
	ck_assert(p.known && !p.dirty);
	ck_assert_str_eq(p.task_path, "t1");
	sbx_provenance_clear(&p);
	snprintf(cmd, sizeof(cmd), "echo b >> '%s/repo/t1/task.yaml'", sbx_test_scratch);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(sbx_provenance_cache_get(c, task, &p, &err), 0);
	ck_assert(p.known && !p.dirty); /* the reading the cache began with */
	ck_assert_str_eq(p.task_path, "t1");
	sbx_provenance_clear(&p);
	ck_assert_int_eq(sbx_provenance_cache_get(NULL, task, &p, &err), 0);
	ck_assert(p.dirty); /* no cache: read now */
	sbx_provenance_clear(&p);
	sbx_provenance_cache_free(c);
	sbx_test_scratch_teardown();
}
END_TEST

void run_files_cases(Suite *s)
{
	SBX_TEST_CASE(s, "files", NULL, NULL, 0, transcript_keeps_json_and_text,
		      transcript_records_the_mcp_version, run_ids_are_safe,
		      result_json_separates_infra_from_outcome, result_reason_says_why_in_one_line,
		      rundir_is_fresh_and_confined, provenance_sees_commit_and_changes,
		      provenance_cache_reads_once);
}
