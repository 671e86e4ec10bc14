/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of trajectory.json (lib/run/trajectory.c) on crafted run
 * directories, no engine: calls paired with their results by JSON-RPC id
 * across connections, batches and replies the transcript cut; the byte
 * budget against a flood of calls; hostile files in the run directory (a
 * FIFO, a symlink, invalid UTF-8, impossible times).
 */
#include "check_main.h"
#include "test_files.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx/clock.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/result.h"

#define T0    "2020-01-01T00:00:00"
#define T0_MS 1577836800000LL /* T0 in unix ms */

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sbx_test_scratch, name);
	f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static cJSON *write_and_load(sbx_trajectory_info *ti, size_t *size)
{
	char path[256], *text = NULL;
	size_t len;
	cJSON *j = NULL;
	sbx_error err = SBX_ERROR_INIT;

	ti->run_dir = sbx_test_scratch;
	ti->session_id = "r1";
	ti->prompt = ti->prompt ? ti->prompt : "Do the task.";
	ti->agent = "demo";
	ti->started_at = T0_MS;
	ck_assert_msg(sbx_run_trajectory_write(ti, &err) == 0, "%s", err.msg);
	snprintf(path, sizeof(path), "%s/trajectory.json", sbx_test_scratch);
	ck_assert_int_eq(sbx_file_read_capped(AT_FDCWD, path, 64 << 20, &text, &len, NULL), 0);
	ck_assert_int_eq(sbx_json_parse(text, len, &j, NULL), 0);
	free(text);
	if (size)
		*size = len;
	return j;
}

static const cJSON *step(const cJSON *j, int i)
{
	return cJSON_GetArrayItem(sbx_json_get(j, "steps"), i);
}

static const char *call_name(const cJSON *s)
{
	return sbx_json_get_string(cJSON_GetArrayItem(sbx_json_get(s, "tool_calls"), 0),
				   "function_name", "");
}

static const char *result(const cJSON *s)
{
	return sbx_json_get_string(
		cJSON_GetArrayItem(sbx_json_get(sbx_json_get(s, "observation"), "results"), 0),
		"content", "");
}

#define LINE(ms, conn, dir, rest)                                                                  \
	"{\"ts\":\"" T0 "." ms "Z\",\"conn\":" #conn ",\"dir\":\"" dir                             \
	"\",\"method\":\"POST\"," rest "}\n"
#define A2S "agent->server"
#define S2A "server->agent"

START_TEST(trajectory_pairs_calls_with_results)
{
	sbx_trajectory_info ti = {0};
	cJSON *j;

	put("transcript.jsonl",
	    LINE("001", 1, A2S,
		 "\"path\":\"/mcp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
		 "\"initialize\",\"params\":{\"clientInfo\":{\"name\":\"bot\",\"version\":\"2\"}}}")
	    /* Two sessions, the same id, answered in the other order. */
	    LINE("010", 1, A2S,
		 "\"path\":\"/mcp\",\"message\":{\"id\":7,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"a\",\"arguments\":{\"x\":1}}}")
		    LINE("011", 2, A2S,
			 "\"path\":\"/mcp\",\"message\":{\"id\":7,\"method\":\"tools/"
			 "call\",\"params\":"
			 "{\"name\":\"b\"}}") LINE("012", 2, S2A,
						   "\"path\":\"/"
						   "mcp\",\"status\":200,\"message\":{\"id\":7,"
						   "\"result\":{\"content\":"
						   "[{\"type\":\"text\",\"text\":\"B\"}]}}")
			    LINE("013", 1, S2A,
				 "\"path\":\"/"
				 "mcp\",\"status\":200,\"message\":{\"id\":7,\"result\":{"
				 "\"isError\":"
				 "true,\"content\":[{\"type\":\"text\",\"text\":\"A\"},{\"type\":"
				 "\"image\","
				 "\"mimeType\":\"image/png\",\"data\":\"QUJD\"}]}}")
	    /* A batch, one call answered by an error, one never. */
	    LINE("020", 3, A2S,
		 "\"path\":\"/mcp\",\"message\":[{\"id\":\"c\",\"method\":\"tools/call\","
		 "\"params\":{\"name\":\"c\"}},{\"id\":\"d\",\"method\":\"tools/call\","
		 "\"params\":{\"name\":\"d\"}},{\"id\":9,\"method\":\"tools/list\"}]")
		    LINE("021", 3, S2A,
			 "\"path\":\"/"
			 "mcp\",\"status\":200,\"message\":[{\"id\":\"c\",\"error\":{\"code\":"
			 "-32602,\"message\":\"bad\"}}]")
	    /* A reply the relay cut, and the reference's REST shape. */
	    LINE("030", 4, A2S,
		 "\"path\":\"/mcp\",\"message\":{\"id\":1,\"method\":\"tools/call\",\"params\":"
		 "{\"name\":\"e\"}}")
		    LINE("031", 4, S2A,
			 "\"path\":\"/"
			 "mcp\",\"status\":200,\"truncated\":true,\"length\":2000000,\"body\":"
			 "\"{\\\"id\\\":1,\"")
			    LINE("040", 5, A2S,
				 "\"path\":\"/tools/"
				 "call\",\"message\":{\"tool_name\":\"f\",\"arguments\":{}}")
				    LINE("041", 5, S2A,
					 "\"path\":\"/tools/"
					 "call\",\"status\":200,\"message\":{\"success\":false,"
					 "\"error\":\"no such file\"}")
					    LINE("050", 6, A2S, "\"path\":\"/control/complete\""));
	j = write_and_load(&ti, NULL);
	ck_assert_str_eq(sbx_json_get_string(j, "schema_version", ""), "ATIF-v1.4");
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(j, "agent"), "name", ""), "bot");
	ck_assert_str_eq(sbx_json_get_string(step(j, 0), "message", ""), "Do the task.");
	ck_assert_str_eq(call_name(step(j, 1)), "a");
	ck_assert_str_eq(result(step(j, 1)), "[tool error] A\n[image image/png, 4 bytes base64]");
	ck_assert_int_eq(
		(int)sbx_json_get_number(
			sbx_json_get(step(j, 1), "tool_calls")->child->child->next->next, "x", 0),
		1);
	ck_assert_str_eq(call_name(step(j, 2)), "b");
	ck_assert_str_eq(result(step(j, 2)), "B");
	ck_assert_str_eq(result(step(j, 3)), "[JSON-RPC error -32602] bad");
	ck_assert_str_eq(result(step(j, 4)), "[sandboxctl: the call had no answer]");
	ck_assert_ptr_nonnull(strstr(result(step(j, 5)), "a reply of 2000000 bytes"));
	ck_assert_str_eq(call_name(step(j, 6)), "f");
	ck_assert_str_eq(result(step(j, 6)), "no such file");
	ck_assert_str_eq(sbx_json_get_string(step(j, 7), "source", ""), "system");
	ck_assert_int_eq(cJSON_GetArraySize(sbx_json_get(j, "steps")), 8);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq((int)sbx_json_get_number(step(j, i), "step_id", 0), i + 1);
	ck_assert_int_eq(
		(int)sbx_json_get_number(sbx_json_get(j, "final_metrics"), "total_steps", 0), 8);
	ck_assert_int_eq((int)sbx_json_get_number(
				 sbx_json_get(sbx_json_get(j, "extra"), "other_mcp_requests"),
				 "tools/list", 0),
			 1);
	cJSON_Delete(j);
}
END_TEST

START_TEST(trajectory_names_a_2026_client_from_meta)
{
	sbx_trajectory_info ti = {0};
	cJSON *j;

	put("transcript.jsonl",
	    LINE("001", 1, A2S,
		 "\"path\":\"/mcp\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
		 "\"server/discover\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
		 "clientInfo\":{\"name\":\"new-bot\",\"version\":\"3\"}}}}"));
	j = write_and_load(&ti, NULL);
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(j, "agent"), "name", ""), "new-bot");
	ck_assert_str_eq(sbx_json_get_string(sbx_json_get(j, "agent"), "version", ""), "3");
	ck_assert_int_eq((int)sbx_json_get_number(
				 sbx_json_get(sbx_json_get(j, "extra"), "other_mcp_requests"),
				 "server/discover", 0),
			 1);
	cJSON_Delete(j);
}
END_TEST

START_TEST(trajectory_stays_within_its_budget)
{
	sbx_trajectory_info ti = {.max_bytes = 256 << 10, .content_max = 1024};
	_cleanup_free_ char *big = malloc(8001);
	FILE *f;
	char path[256];
	size_t size;
	double t0;
	cJSON *j, *tr;

	memset(big, 'x', 8000);
	big[8000] = '\0';
	snprintf(path, sizeof(path), "%s/transcript.jsonl", sbx_test_scratch);
	f = fopen(path, "we");
	for (int i = 0; i < 4000; i++) {
		fprintf(f,
			LINE("100", 1, A2S,
			     "\"message\":{\"id\":%d,\"method\":\"tools/call\","
			     "\"params\":{\"name\":\"w\",\"arguments\":{\"v\":\"%s\"}}}"),
			i, big);
		fprintf(f,
			LINE("100", 1, S2A,
			     "\"message\":{\"id\":%d,\"result\":{\"content\":[{\"type\":\"text\","
			     "\"text\":\"%s\"}]}}"),
			i, big);
	}
	ck_assert_int_eq(fclose(f), 0);
	t0 = sbx_now_msf();
	j = write_and_load(&ti, &size);
	fprintf(stderr, "trajectory: 4000 calls, 64 MB of transcript: %.0f ms, %zu bytes\n",
		sbx_now_msf() - t0, size);
	ck_assert_uint_lt(size, 2 * (256 << 10));
	tr = (cJSON *)sbx_json_get(sbx_json_get(j, "extra"), "truncated");
	ck_assert_int_gt((int)sbx_json_get_number(tr, "calls_or_turns_omitted", 0), 3000);
	ck_assert_int_gt((int)sbx_json_get_number(tr, "contents_clipped", 0), 10);
	ck_assert_ptr_nonnull(strstr(result(step(j, 1)), "[sandboxctl: truncated, 1024 of"));
	cJSON_Delete(j);
}
END_TEST

START_TEST(trajectory_reads_hostile_files_safely)
{
	sbx_trajectory_info ti = {.prompt = "caf\xc3"};
	char path[256];
	cJSON *j;

	/* A FIFO must not block the run's finish, a symlink must not be followed. */
	snprintf(path, sizeof(path), "%s/model.jsonl", sbx_test_scratch);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/transcript.jsonl", sbx_test_scratch);
	ck_assert_int_eq(symlink("/etc/passwd", path), 0);
	j = write_and_load(&ti, NULL);
	ck_assert_str_eq(sbx_json_get_string(step(j, 0), "message", ""), "caf\xef\xbf\xbd");
	ck_assert_int_eq(cJSON_GetArraySize(sbx_json_get(j, "steps")), 1);
	cJSON_Delete(j);

	unlink(path);
	snprintf(path, sizeof(path), "%s/model.jsonl", sbx_test_scratch);
	unlink(path);
	put("model.jsonl",
	    "{\"t\":1,\"reply\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"},"
	    "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"n\",\"input\":{}}],"
	    "\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":2,"
	    "\"cache_creation_input_tokens\":3,"
	    "\"output_tokens\":1}}}\n"
	    "{\"t\":1577836800.5,\"reply\":{\"content\":[],\"usage\":"
	    "{\"input_tokens\":-4,\"output_tokens\":1e300}}}\nnot json\n");
	j = write_and_load(&ti, NULL);
	/* Step 2 has a time in the run; the one from 1970 has none and comes last. */
	ck_assert_str_eq(sbx_json_get_string(step(j, 1), "timestamp", ""), T0 ".500Z");
	ck_assert_ptr_null(sbx_json_get(step(j, 2), "timestamp"));
	ck_assert_str_eq(sbx_json_get_string(step(j, 2), "message", ""),
			 "\xef\xbf\xbd\xef\xbf\xbd");
	ck_assert_str_eq(result(step(j, 2)), "[sandboxctl: no MCP call was made for it]");
	ck_assert_int_eq(
		(int)sbx_json_get_number(sbx_json_get(step(j, 2), "metrics"), "prompt_tokens", 0),
		10);
	/* Anthropic's cache writes: in prompt_tokens, and named in the metrics' extra. */
	ck_assert_int_eq(
		(int)sbx_json_get_number(sbx_json_get(sbx_json_get(step(j, 2), "metrics"), "extra"),
					 "cache_creation_input_tokens", 0),
		3);
	ck_assert_int_eq((int)sbx_json_get_number(sbx_json_get(j, "final_metrics"),
						  "total_completion_tokens", -1),
			 1);
	ck_assert_int_eq(
		(int)sbx_json_get_number(sbx_json_get(sbx_json_get(j, "extra"), "truncated"),
					 "lines_unreadable", 0),
		1);
	cJSON_Delete(j);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "trajectory", sbx_test_scratch_setup, sbx_test_scratch_teardown, 60,
		      trajectory_pairs_calls_with_results, trajectory_names_a_2026_client_from_meta,
		      trajectory_stays_within_its_budget, trajectory_reads_hostile_files_safely);
}

SBX_TEST_MAIN("trajectory", add_cases)
