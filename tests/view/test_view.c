/* SPDX-License-Identifier: MIT */
/*
 * lib/view without an engine or a browser: HTML escaping (hostile agent text),
 * path confinement (`..`, absolute paths, symlinks out, connection.json), the
 * directory scanner on synthetic run and sweep directories, and the pages
 * built from them (the grid's red cell, the escaped transcript).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "test_files.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"
#include "sbx/view.h"

static void mkdir_in(const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", sbx_test_scratch, rel);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

/* ---- escaping ---- */

static char *escaped(const char *s, size_t len)
{
	sbx_buf b = SBX_BUF_INIT(1 << 20);

	ck_assert_int_eq(sbx_html_escape_n(&b, s, len), 0);
	return sbx_buf_steal(&b, NULL);
}

START_TEST(escape_markup)
{
	_cleanup_free_ char *a = escaped("<script>alert('x')</script>&\"", 29);

	ck_assert_str_eq(a, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;");
}
END_TEST

START_TEST(escape_utf8_and_controls)
{
	/* Valid UTF-8 stays; a stray byte, an overlong '<' and a NUL become U+FFFD. */
	_cleanup_free_ char *a = escaped("é\x80\xc0\xbc\x01\ttab\n", 11);
	_cleanup_free_ char *b = escaped("a\0<", 3);

	ck_assert_str_eq(a, "é\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\ttab\n");
	ck_assert_str_eq(b, "a\xef\xbf\xbd&lt;");
}
END_TEST

START_TEST(escape_url)
{
	sbx_buf b = SBX_BUF_INIT(4096);

	ck_assert_int_eq(sbx_url_escape(&b, "runs/a b\"<>?#%/x"), 0);
	ck_assert_str_eq(sbx_buf_str(&b), "runs/a%20b%22%3C%3E%3F%23%25/x");
	sbx_buf_free(&b);
}
END_TEST

/* ---- confinement ---- */

START_TEST(confine_refuses_escapes)
{
	sbx_error err = SBX_ERROR_INIT;
	char *data = NULL;
	size_t len;
	int fd, r;

	mkdir_in("run");
	sbx_test_put(sbx_test_scratch, "run/result.json", "{}");
	{
		char p[4200];

		snprintf(p, sizeof(p), "%s/run/out", sbx_test_scratch);
		ck_assert_int_eq(symlink("/etc", p), 0);
		snprintf(p, sizeof(p), "%s/run/pw", sbx_test_scratch);
		ck_assert_int_eq(symlink("../../../../../../etc/passwd", p), 0);
		snprintf(p, sizeof(p), "%s/run/inside", sbx_test_scratch);
		ck_assert_int_eq(symlink("result.json", p), 0);
	}
	ck_assert_int_eq(
		sbx_view_read(sbx_test_scratch_fd, "run/result.json", 100, &data, &len, NULL), 0);
	ck_assert_str_eq(data, "{}");
	free(data);
	/*
	 * A symlink that stays inside is followed with openat2; without it (old
	 * kernels, valgrind) the fallback refuses every symlink: stricter, never looser.
	 */
	r = sbx_view_read(sbx_test_scratch_fd, "run/inside", 100, &data, &len, NULL);
	ck_assert(r == 0 || r == -ELOOP);
	if (r == 0)
		free(data);
	ck_assert_int_lt(sbx_view_open(sbx_test_scratch_fd, "../etc/passwd", O_RDONLY, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, ".."));
	ck_assert_int_lt(sbx_view_open(sbx_test_scratch_fd, "run/../../etc/passwd", O_RDONLY, NULL),
			 0);
	ck_assert_int_lt(sbx_view_open(sbx_test_scratch_fd, "/etc/passwd", O_RDONLY, NULL), 0);
	ck_assert_int_lt(sbx_view_open(sbx_test_scratch_fd, "run/out/passwd", O_RDONLY, NULL), 0);
	ck_assert_int_lt(sbx_view_open(sbx_test_scratch_fd, "run/pw", O_RDONLY, NULL), 0);
	ck_assert_int_eq(
		sbx_view_read(sbx_test_scratch_fd, "run/result.json", 1, &data, &len, NULL),
		-EFBIG);
	ck_assert_int_eq(sbx_view_read(sbx_test_scratch_fd, "run", 100, &data, &len, NULL),
			 -EINVAL);
	fd = sbx_view_open(sbx_test_scratch_fd, "", O_RDONLY | O_DIRECTORY, NULL);
	ck_assert_int_ge(fd, 0);
	close(fd);
}
END_TEST

/* A run's connection.json holds its token: not through a symlink, not through a hard link. */
START_TEST(confine_refuses_links_to_connection_json)
{
	sbx_error err = SBX_ERROR_INIT;
	char *data = NULL, p[4200], q[4200];
	size_t len;

	mkdir_in("run");
	mkdir_in("run/outputs");
	sbx_test_put(sbx_test_scratch, "run/connection.json", "{\"authorization\":\"Bearer t\"}");
	snprintf(p, sizeof(p), "%s/run/outputs/report.txt", sbx_test_scratch);
	ck_assert_int_eq(symlink("../connection.json", p), 0);
	snprintf(p, sizeof(p), "%s/run/outputs/deep.txt", sbx_test_scratch);
	ck_assert_int_eq(symlink("report.txt", p), 0); /* a chain ends there too */
	/* Alone, its own name is readable (the scanner's live badge reads it). */
	ck_assert_int_eq(
		sbx_view_read(sbx_test_scratch_fd, "run/connection.json", 100, &data, &len, NULL),
		0);
	free(data);
	/* openat2 follows symlinks inside the root; the fallback refuses every symlink. */
	ck_assert_int_lt(sbx_view_read(sbx_test_scratch_fd, "run/outputs/report.txt", 100, &data,
				       &len, &err),
			 0);
	ck_assert_int_lt(sbx_view_open(sbx_test_scratch_fd, "run/outputs/deep.txt", O_RDONLY, NULL),
			 0);
	ck_assert_int_lt(sbx_view_open(sbx_test_scratch_fd, "run/outputs/report.txt", O_PATH, NULL),
			 0);
	snprintf(p, sizeof(p), "%s/run/connection.json", sbx_test_scratch);
	snprintf(q, sizeof(q), "%s/run/outputs/notes.txt", sbx_test_scratch);
	ck_assert_int_eq(link(p, q), 0);
	sbx_error_clear(&err);
	ck_assert_int_eq(
		sbx_view_read(sbx_test_scratch_fd, "run/outputs/notes.txt", 100, &data, &len, &err),
		-EACCES);
	ck_assert_ptr_nonnull(strstr(err.msg, "hard-linked"));
	ck_assert_int_lt(sbx_view_open(sbx_test_scratch_fd, "run/connection.json", O_RDONLY, NULL),
			 0);
	/* A plain file and a symlink to one are still served. */
	sbx_test_put(sbx_test_scratch, "run/outputs/plain.txt", "ok");
	ck_assert_int_eq(
		sbx_view_read(sbx_test_scratch_fd, "run/outputs/plain.txt", 100, &data, &len, NULL),
		0);
	free(data);
}
END_TEST

/* ---- the scanner ---- */

static void make_run(const char *dir, const char *status, double score, const char *started)
{
	char rel[256], text[1024];

	mkdir_in(dir);
	snprintf(rel, sizeof(rel), "%s/result.json", dir);
	snprintf(text, sizeof(text),
		 "{\"run_id\":\"%s\",\"task\":\"t<1>\",\"status\":\"%s\",\"score\":%g,"
		 "\"agent\":{\"kind\":\"demo\",\"model\":\"m\"},\"timings_ms\":{\"total\":1500},"
		 "\"started_at\":\"%s\"}",
		 dir, status, score, started);
	sbx_test_put(sbx_test_scratch, rel, text);
}

START_TEST(scan_finds_runs_and_sweeps_newest_first)
{
	sbx_view_entry *v = NULL;
	size_t n = 0;
	struct timespec ts[2] = {{.tv_sec = 1000}, {.tv_sec = 1000}};
	char p[4200];

	make_run("old", "pass", 1, "2026-01-01T00:00:00Z");
	make_run("new", "partial", 0.5, "2026-02-01T00:00:00Z");
	snprintf(p, sizeof(p), "%s/old/result.json", sbx_test_scratch);
	ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
	mkdir_in("live");
	sbx_test_put(sbx_test_scratch, "live/transcript.jsonl", "{}\n");
	mkdir_in("sw");
	sbx_test_put(sbx_test_scratch, "sw/sweep.json",
		     "{\"tasks\":[{\"name\":\"a\"}],\"agents\":[\"oracle\"],\"episodes\":2}");
	sbx_test_put(sbx_test_scratch, "sw/results.jsonl",
		     "{\"episode\":0,\"attempt\":1,\"task\":\"a\",\"agent\":\"oracle\","
		     "\"epoch\":0,\"run_id\":\"r0\",\"status\":\"pass\",\"score\":1,"
		     "\"agent_ms\":1,\"total_ms\":10}\n{\"episode\":1,\"attem");
	mkdir_in("empty");
	snprintf(p, sizeof(p), "%s/link", sbx_test_scratch);
	ck_assert_int_eq(symlink("/", p), 0); /* not followed */

	ck_assert_int_eq(sbx_view_scan(&sbx_test_scratch_fd, 1, 100, &v, &n, NULL), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(v[n - 1].id, "old"); /* oldest last */
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].rel, "new") == 0) {
			ck_assert_str_eq(v[i].status, "partial");
			ck_assert_str_eq(v[i].model, "m");
			ck_assert_double_eq_tol(v[i].score, 0.5, 1e-9);
			ck_assert_double_eq_tol(v[i].total_ms, 1500, 1e-9);
		} else if (strcmp(v[i].rel, "live") == 0) {
			ck_assert_str_eq(v[i].status, "running");
			ck_assert(v[i].live);
			ck_assert(isnan(v[i].score));
		} else if (strcmp(v[i].rel, "sw") == 0) {
			ck_assert_int_eq(v[i].kind, SBX_VIEW_SWEEP);
			ck_assert_str_eq(v[i].status,
					 "sweep 1/2"); /* the torn line is not counted */
			ck_assert_str_eq(v[i].task, "a");
		}
	}
	sbx_view_entries_free(v, n);
	/* The cap keeps the newest. */
	ck_assert_int_eq(sbx_view_scan(&sbx_test_scratch_fd, 1, 1, &v, &n, NULL), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_ne(v[0].id, "old");
	sbx_view_entries_free(v, n);
}
END_TEST

/* ---- pages ---- */

/* kind: 'i' the list, 'r' a run, 's' a sweep, 'c' sweep rel compared with sweep with. */
static char *page_of(int kind, const char *rel, const char *with)
{
	static const char *names[] = {"root"};
	sbx_view_ctx ctx = {.rootfds = &sbx_test_scratch_fd,
			    .root_names = names,
			    .n_roots = 1,
			    .prefix = "/tok/",
			    .nonce = "n0nce"};
	sbx_buf b = SBX_BUF_INIT(64 << 20);
	int r;

	r = kind == 'i'	  ? sbx_view_page_index(&ctx, NULL, NULL, NULL, &b, NULL)
	    : kind == 'r' ? sbx_view_page_run(&ctx, 0, rel, &b, NULL)
	    : kind == 's' ? sbx_view_page_sweep(&ctx, 0, rel, &b, NULL)
			  : sbx_view_page_compare(&ctx, 0, rel, 0, with, &b, NULL);
	ck_assert_int_eq(r, 0);
	return sbx_buf_steal(&b, NULL);
}

/* Fails unless text holds each of has and none of lacks (NULL-terminated lists). */
static void check_text(const char *text, const char *const *has, const char *const *lacks)
{
	for (; *has; has++)
		ck_assert_msg(strstr(text, *has), "missing: %s", *has);
	for (; *lacks; lacks++)
		ck_assert_msg(!strstr(text, *lacks), "should not be there: %s", *lacks);
}

#define TEXTS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NO_TEXTS   ((const char *const[]){NULL})

START_TEST(run_page_escapes_the_transcript)
{
	_cleanup_free_ char *page = NULL, *index = NULL;

	make_run("r", "partial", 0.5, "2026-01-01T00:00:00Z");
	sbx_test_put(sbx_test_scratch, "r/transcript.jsonl",
		     "{\"t_ms\":1,\"dir\":\"agent->server\",\"path\":\"/tools/call\",\"message\":"
		     "{\"tool_name\":\"write_cell\",\"arguments\":{\"value\":\"<script>alert(1)</"
		     "script>\"}}}\n"
		     "{\"t_ms\":2,\"dir\":\"server->agent\",\"path\":\"/tools/call\",\"message\":"
		     "{\"success\":false,\"error\":\"<b>bad</b>\"}}\n");
	sbx_test_put(sbx_test_scratch, "r/connection.json",
		     "{\"authorization\":\"Bearer secret\"}");
	page = page_of('r', "r", NULL);
	check_text(page,
		   TEXTS("&lt;script&gt;alert(1)&lt;/script&gt;", "turn result error",
			 "&lt;b&gt;bad&lt;/b&gt;", "<script nonce=\"n0nce\">"),
		   TEXTS("<script>alert", "connection.json", /* the token's file is not linked */
			 "id=\"turns\"" /* no model.jsonl: not an llm run */));
	index = page_of('i', NULL, NULL);
	check_text(index, TEXTS("t&lt;1&gt;", "href=\"/tok/r/0/r\""), NO_TEXTS);
}
END_TEST

START_TEST(run_page_mcp_transcript)
{
	_cleanup_free_ char *page = NULL;

	/* Two connections reuse id 1: only conn 2's is a tool call, and its reply an error. */
	make_run("p", "fail", 0, "2026-01-01T00:00:00Z");
	sbx_test_put(sbx_test_scratch, "p/transcript.jsonl",
		     "{\"conn\":1,\"dir\":\"agent->server\",\"message\":{\"id\":1,\"method\":"
		     "\"initialize\"}}\n"
		     "{\"conn\":2,\"dir\":\"agent->server\",\"mcp_version\":\"2026-07-28\","
		     "\"message\":{\"id\":1,\"method\":"
		     "\"tools/"
		     "call\",\"params\":{\"name\":\"read_cell\",\"arguments\":{\"c\":\"A1\"}}}}\n"
		     "{\"conn\":1,\"dir\":\"server->agent\",\"status\":200,\"mcp_version\":\"<b>\","
		     "\"message\":{\"id\":1,"
		     "\"result\":{\"protocolVersion\":\"x\"}}}\n"
		     "{\"conn\":2,\"dir\":\"server->agent\",\"status\":200,\"message\":{\"id\":1,"
		     "\"result\":{\"isError\":true,\"content\":[{\"type\":\"text\",\"text\":\"no "
		     "<sheet>\"}]}}}\n"
		     "{\"conn\":2,\"dir\":\"server->agent\",\"status\":200,\"message\":{\"id\":1");
	page = page_of('r', "p", NULL);
	check_text(page,
		   TEXTS("agent calls <b>read_cell</b>",
			 "ms</span> <span class=\"dim\">MCP 2026-07-28</span>", /* its revision */
			 "MCP &lt;b&gt;</span></summary>", /* the agent's text, escaped */
			 "<summary>reply 200",		   /* initialize's reply: folded */
			 "<pre>no &lt;sheet&gt;</pre>",	   /* the text, unwrapped */
			 "turn result error", "data-lines=\"4\"" /* the torn last line waits */),
		   NO_TEXTS);
}
END_TEST

START_TEST(run_page_model_turns)
{
	_cleanup_free_ char *page = NULL;

	make_run("m", "pass", 1, "2026-01-01T00:00:00Z");
	sbx_test_put(
		sbx_test_scratch, "m/model.jsonl",
		"{\"turn\":1,\"request\":{}}\n{\"turn\":1,\"status\":200,\"ms\":12,\"reply\":{"
		"\"choices\":[{\"message\":{\"content\":\"<svg onload=x>\",\"tool_calls\":[{"
		"\"function\":{\"name\":\"read_cell\"}}]}}],\"usage\":{\"prompt_tokens\":7}}}\n"
		"{\"turn\":2,\"status\":429,\"reply\":{\"content\":[{\"type\":\"tool_use\","
		"\"name\":\"write_cell\"}]}}\n");
	page = page_of('r', "m", NULL);
	check_text(page,
		   TEXTS("id=\"turns\"", "&lt;svg onload=x&gt; → read_cell",
			 "&quot;prompt_tokens&quot;:7", "errtext\">429", " → write_cell"),
		   TEXTS("<svg onload"));
}
END_TEST

/*
 * A verifier's reward.json nested as deep as result.json may be (the reader
 * refuses past SBX_JSON_MAX_DEPTH) and a 2 MiB output tail of markup: the page
 * is still made, everything escaped.
 */
static void hostile_verifier(const char *dir, int depth)
{
	enum { TAIL = 2 << 20 };
	size_t cap = 6 * (size_t)depth + TAIL + 512, n = 0;
	_cleanup_free_ char *text = malloc(cap);
	char rel[64];

	ck_assert_ptr_nonnull(text);
	mkdir_in(dir);
	n += (size_t)snprintf(text, cap, "{\"run_id\":\"%s\",\"verifier\":{\"rewards\":", dir);
	for (int i = 0; i < depth; i++)
		n += (size_t)snprintf(text + n, cap - n, "{\"a\":");
	n += (size_t)snprintf(text + n, cap - n, "1");
	for (int i = 0; i < depth; i++)
		text[n++] = '}';
	n += (size_t)snprintf(text + n, cap - n, ",\"output_tail\":\"");
	for (int i = 0; i < TAIL / 8; i++, n += 8)
		memcpy(text + n, "<script>", 8);
	snprintf(text + n, cap - n, "\"}}");
	snprintf(rel, sizeof(rel), "%s/result.json", dir);
	sbx_test_put(sbx_test_scratch, rel, text);
}

/* The error sbx_view_page_run gives for rel (it must fail). */
static char *page_error(const char *rel)
{
	static const char *names[] = {"root"};
	sbx_view_ctx ctx = {.rootfds = &sbx_test_scratch_fd, .root_names = names, .n_roots = 1};
	sbx_buf b = SBX_BUF_INIT(1 << 20);
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_lt(sbx_view_page_run(&ctx, 0, rel, &b, &err), 0);
	sbx_buf_free(&b);
	return strdup(err.msg);
}

START_TEST(run_page_shows_the_verifier)
{
	_cleanup_free_ char *page = NULL;

	/* A Harbor run: what its verifier said comes from the task's tests, hostile or not. */
	mkdir_in("h");
	sbx_test_put(sbx_test_scratch, "h/result.json",
		     "{\"run_id\":\"h\",\"task\":\"hb\",\"status\":\"pass\",\"score\":1,"
		     "\"verifier\":{\"reward\":1,\"rewards\":{\"<img src=x>\":1},"
		     "\"reward_file\":\"reward.json\",\"exit_code\":0,\"timed_out\":false,"
		     "\"output_tail\":\"1 passed\\n<script>alert(2)</script>\","
		     "\"workdir\":\"/app\",\"timings_ms\":{\"test_sh\":69.5}}}");
	page = page_of('r', "h", NULL);
	check_text(page,
		   TEXTS("<h2>Verifier</h2>", "reward_file</th><td>reward.json",
			 "timings_ms.test_sh</th><td>69.5", "&lt;img src=x&gt;",
			 "1 passed\n&lt;script&gt;alert(2)&lt;/script&gt;</pre>"),
		   TEXTS("<script>alert(2)", "<img src=x>"));
	free(page);
	make_run("n", "pass", 1, "2026-01-01T00:00:00Z");
	page = page_of('r', "n", NULL);
	check_text(page, NO_TEXTS, TEXTS("<h2>Verifier</h2>"));
	free(page);
	page = NULL;
	hostile_verifier("d", SBX_JSON_MAX_DEPTH - 2); /* the result and the verifier objects */
	page = page_of('r', "d", NULL);
	check_text(page, TEXTS("<h2>Verifier</h2>", "rewards.a</th><td>{"), TEXTS("<script>"));
	free(page);
	/* Deeper than that: result.json is not read, the page is refused in one error. */
	hostile_verifier("e", 900);
	page = page_error("e");
	ck_assert_msg(strstr(page, "not a run directory"), "%s", page);
}
END_TEST

START_TEST(run_page_grid_from_grade_json)
{
	_cleanup_free_ char *page = NULL;

	make_run("g", "partial", 0.5, "2026-01-01T00:00:00Z");
	mkdir_in("g/outputs");
	mkdir_in("g/task");
	mkdir_in("g/task/oracle");
	sbx_test_put(sbx_test_scratch, "g/outputs/out.csv", "a,1\nb,<i>\n");
	sbx_test_put(sbx_test_scratch, "g/task/oracle/want.csv", "a,1\nb,2\n");
	sbx_test_put(sbx_test_scratch, "g/grade.json",
		     "{\"status\":\"PARTIAL\",\"graded\":2,\"matched\":1,\"cases\":[{\"name\":"
		     "\"c\",\"output\":\"out.csv\",\"oracle\":\"/abs/want.csv\",\"status\":"
		     "\"PARTIAL\",\"graded\":4,\"matched\":3,\"mismatches_total\":1,"
		     "\"mismatches\":[{\"cell\":\"Sheet1!B2\",\"reason\":\"type\",\"expected\":2,"
		     "\"got\":\"<i>\"}]}]}");
	page = page_of('r', "g", NULL);
	check_text(page,
		   TEXTS("<table class=\"grid\">",
			 "class=\"bad\" data-cell=\"Sheet1!B2\" title=\"expected 2, "
			 "got &lt;i&gt; (type)\"",
			 "class=\"ok\" data-cell=\"Sheet1!B1\""),
		   NO_TEXTS);
}
END_TEST

/* A sweep of tasks alpha and beta under one agent, 8 epochs: bit e of pass_alpha
 * (pass_beta) says whether epoch e of that task passed, with score 1, else 0. */
static void make_sweep(const char *dir, unsigned pass_alpha, unsigned pass_beta)
{
	char rel[256], text[8192];
	size_t len = 0;

	mkdir_in(dir);
	snprintf(rel, sizeof(rel), "%s/sweep.json", dir);
	sbx_test_put(sbx_test_scratch, rel,
		     "{\"tasks\":[{\"name\":\"alpha\"},{\"name\":\"beta\"}],\"agents\":"
		     "[\"oracle\"],\"epochs\":8,\"retries\":0,\"timeout_s\":60,\"episodes\":16}");
	for (unsigned i = 0; i < 16; i++) {
		unsigned e = i / 2, t = i % 2;
		bool pass = ((t ? pass_beta : pass_alpha) >> e) & 1;

		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"{\"episode\":%u,\"attempt\":1,\"task\":\"%s\",\"agent\":"
					"\"oracle\",\"epoch\":%u,\"run_id\":\"%s-%u\",\"status\":"
					"\"%s\",\"score\":%d,\"agent_ms\":1,\"total_ms\":10}\n",
					i, t ? "beta" : "alpha", e, dir, i, pass ? "pass" : "fail",
					pass);
		ck_assert_uint_lt(len, sizeof(text));
	}
	snprintf(rel, sizeof(rel), "%s/results.jsonl", dir);
	sbx_test_put(sbx_test_scratch, rel, text);
}

START_TEST(compare_page_pairs_and_sign_test)
{
	_cleanup_free_ char *page = NULL;

	/* alpha: A passes all 8 epochs, B none; beta: A none, B epochs 0 and 1. */
	make_sweep("a", 0xff, 0);
	make_sweep("b", 0, 0x3);
	page = page_of('c', "a", "b");
	check_text(
		page,
		TEXTS("paired by task, agent, epoch, seed",
		      /* 8 pairs, 8 discordant for A: p = 2 × 2^-8 = 0.0078, highlighted;
		       * B − A = −1 exactly. */
		      "<tr><td>alpha</td><td class=\"num\">8</td><td class=\"num\">8</td><td "
		      "class=\"num\">0</td><td class=\"num\">8 / 0</td><td class=\"num "
		      "errtext\">0.00781</td><td class=\"num\">-1.000 <span class=\"dim\">"
		      "[-1.000, -1.000]</span></td></tr>",
		      /* 2 discordant for B: p = 2 × 1/4; B − A = 2/8. */
		      "<tr><td>beta</td><td class=\"num\">8</td><td class=\"num\">0</td><td "
		      "class=\"num\">2</td><td class=\"num\">0 / 2</td><td "
		      "class=\"num\">0.5</td><td class=\"num\">+0.250 ",
		      /* Overall 8 against 2 of 16 pairs: p = 2 × (1 + 10 + 45) / 1024 = 0.109. */
		      "<tr><td>(overall)</td><td class=\"num\">16</td><td class=\"num\">8</td><td "
		      "class=\"num\">2</td><td class=\"num\">8 / 2</td><td "
		      "class=\"num\">0.109</td><td class=\"num\">-0.375 ",
		      "id=\"summary-a\"", "id=\"summary-b\""),
		NO_TEXTS);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "escape", NULL, NULL, 0, escape_markup, escape_utf8_and_controls,
		      escape_url);

	SBX_TEST_CASE(s, "confine", sbx_test_scratch_path_setup, sbx_test_scratch_open_teardown, 0,
		      confine_refuses_escapes, confine_refuses_links_to_connection_json);

	SBX_TEST_CASE(s, "scan", sbx_test_scratch_path_setup, sbx_test_scratch_open_teardown, 0,
		      scan_finds_runs_and_sweeps_newest_first);

	SBX_TEST_CASE(s, "pages", sbx_test_scratch_path_setup, sbx_test_scratch_open_teardown, 0,
		      run_page_escapes_the_transcript, run_page_shows_the_verifier,
		      run_page_grid_from_grade_json, run_page_model_turns, run_page_mcp_transcript,
		      compare_page_pairs_and_sign_test);
}

SBX_TEST_MAIN("view", add_cases)
