/* SPDX-License-Identifier: MIT */
/*
 * trajectory.json: the run in the Agent Trajectory Interchange Format (ATIF
 * v1.4, Harbor RFC 0001), built after the fact from what the run directory
 * already holds: transcript.jsonl (every MCP or REST message the relay saw,
 * whatever the agent), and for the model agent model.jsonl (its replies, with
 * their token usage) and agent-llm.json (the model's name).
 *
 * All three files are the agent's to write into (a host agent shares the run
 * directory), so everything read here is hostile: lines are read with a cap,
 * every string is clipped to valid UTF-8 of bounded length, and the whole
 * document stays under a byte budget; what was cut is said in the root extra.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sbx-config.h"
#include "rundir.h"
#include "sbx/buf.h"
#include "sbx/cleanup.h"
#include "sbx/file.h"
#include "sbx/json.h"
#include "sbx/result.h"
#include "sbx/utf8.h"
#include "trajectory-internal.h"

#define LINE_MAX_BYTES (8u << 20)    /* a transcript line holds a body of up to 1 MiB, escaped */
#define FILE_READ_MAX  (576LL << 20) /* the transcript stops at 512 MiB */
#define PROMPT_MAX     (64u << 10)
#define TOOL_CALLS_MAX 256 /* in one model turn (the model agent refuses more) */

/* ---- small helpers -------------------------------------------------------- */

void sbx_run__traj_iso(double unix_ms, char out[64])
{
	time_t s = (time_t)(unix_ms / 1000);
	struct tm tm;

	if (unix_ms < 0 || !gmtime_r(&s, &tm) || tm.tm_year + 1900 > 9999) {
		out[0] = '\0';
		return;
	}
	snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)((long long)unix_ms % 1000));
}

/*
 * A time the files claim, kept only within the run (they are the agent's to
 * write): else -1, no timestamp, and the step sorts last.
 */
double sbx_run__traj_in_run(const traj *t, double unix_ms)
{
	return unix_ms >= (double)t->info->started_at - 1000 && unix_ms <= t->now_ms + 1000
		       ? unix_ms
		       : -1;
}

/*
 * s clipped to at most max bytes of valid UTF-8 (an invalid byte becomes
 * U+FFFD), with a marker saying how much was kept when it had to be cut.
 * malloc'd; NULL on OOM.
 */
char *sbx_run__traj_clip(traj *t, const char *s, size_t len, size_t max)
{
	_cleanup_(sbx_buf_free) sbx_buf b = SBX_BUF_INIT(max + 128);
	size_t i = 0;

	while (i < len) {
		const unsigned char *p = (const unsigned char *)s + i;
		size_t k = sbx_utf8_seq(p, len - i);
		size_t add = k ? k : 3;

		if (b.len + add > max)
			break;
		if (k ? sbx_buf_append(&b, p, k) < 0 : sbx_buf_puts(&b, "\xef\xbf\xbd") < 0)
			return NULL;
		i += k ? k : 1;
	}
	if (i < len) {
		t->clipped++;
		if (sbx_buf_printf(&b, "\n[sandboxctl: truncated, %zu of %zu bytes kept]", i, len) <
		    0)
			return NULL;
	}
	return sbx_buf_steal(&b, NULL);
}

cJSON *sbx_run__traj_string(traj *t, const char *s, size_t max)
{
	_cleanup_free_ char *c = sbx_run__traj_clip(t, s ? s : "", s ? strlen(s) : 0, max);

	return c ? cJSON_CreateString(c) : NULL;
}

/* Arguments are an object; too large ones keep their head as text. */
cJSON *sbx_run__traj_args(traj *t, const cJSON *args)
{
	_cleanup_free_ char *text = NULL, *head = NULL;
	cJSON *o;

	if (!cJSON_IsObject(args))
		return cJSON_CreateObject();
	text = cJSON_PrintUnformatted(args);
	if (!text)
		return NULL;
	if (strlen(text) <= t->content_max) {
		return cJSON_Duplicate(args, 1);
	}
	head = sbx_run__traj_clip(t, text, strlen(text), t->content_max);
	o = cJSON_CreateObject();
	if (!head || !o) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_AddBoolToObject(o, "sandboxctl_truncated", 1);
	cJSON_AddStringToObject(o, "json_head", head);
	return o;
}

/*
 * Reads path line by line; lines over LINE_MAX_BYTES are skipped (counted).
 * fn gets each parsed JSON object. A missing file is no error.
 */
static int each_line(traj *t, const char *path, void (*fn)(traj *, cJSON *))
{
	_cleanup_(sbx_buf_free) sbx_buf line = SBX_BUF_INIT(LINE_MAX_BYTES);
	_cleanup_fclose_ FILE *f = NULL;
	char chunk[65536];
	bool over = false;
	long long total = 0;
	struct stat st;
	int fd;

	/* Not a symlink, FIFO or device an agent put in its place. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP ? 0 : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return 0;
	}
	while (fgets(chunk, sizeof(chunk), f)) {
		size_t n = strlen(chunk);
		bool end = n && chunk[n - 1] == '\n';
		cJSON *o = NULL;

		total += (long long)n;
		if (total > FILE_READ_MAX) {
			t->skipped_lines++;
			break;
		}
		if (!over && sbx_buf_append(&line, chunk, end ? n - 1 : n) < 0)
			over = true;
		if (!end && !feof(f))
			continue;
		if (over)
			t->skipped_lines++;
		else if (line.len && sbx_json_parse(line.data, line.len, &o, NULL) == 0 &&
			 cJSON_IsObject(o))
			fn(t, o);
		else if (line.len)
			t->unreadable_lines++;
		cJSON_Delete(o);
		if (over)
			sbx_buf_init(&line, LINE_MAX_BYTES); /* freed by the failed append */
		else
			sbx_buf_reset(&line);
		over = false;
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- model.jsonl: the model agent's turns --------------------------------- */

/*
 * A token count as an integer; anything else, or over a billion in one turn,
 * is 0, so no sum over the turns the budget allows prints as an exponent.
 */
static double count(const cJSON *o, const char *k)
{
	double v = sbx_json_get_number(o, k, 0);

	return v > 0 && v <= 1e9 ? (double)(long long)v : 0;
}

/* The first unclaimed MCP call of that name (and, if any, those arguments). */
static call *claim(traj *t, const char *name, const cJSON *args)
{
	call *first = NULL;

	for (size_t i = 0; i < t->n_calls; i++) {
		call *c = &t->calls[i];

		if (c->used || strcmp(c->name, name) != 0)
			continue;
		if (args && cJSON_Compare(c->args, args, 1)) {
			first = c;
			break;
		}
		if (!first)
			first = c;
	}
	if (first)
		first->used = true;
	return first;
}

static void add_tool_call(traj *t, cJSON *calls, cJSON *results, const char *id, const char *name,
			  const cJSON *args)
{
	cJSON *tc, *r;
	call *c;
	_cleanup_free_ char *cid = NULL;

	if (cJSON_GetArraySize(calls) >= TOOL_CALLS_MAX) {
		t->omitted++;
		return;
	}
	tc = cJSON_CreateObject();
	r = cJSON_CreateObject();
	c = claim(t, name, args);
	cid = sbx_run__traj_clip(t, id, strlen(id), 256);
	if (!tc || !r || !cid) {
		cJSON_Delete(tc);
		cJSON_Delete(r);
		return;
	}
	cJSON_AddItemToArray(calls, tc);
	cJSON_AddStringToObject(tc, "tool_call_id", cid);
	cJSON_AddItemToObject(tc, "function_name", sbx_run__traj_string(t, name, 256));
	cJSON_AddItemToObject(tc, "arguments", sbx_run__traj_args(t, args));
	cJSON_AddItemToArray(results, r);
	cJSON_AddStringToObject(r, "source_call_id", cid);
	if (c && c->result)
		cJSON_AddStringToObject(r, "content", c->result);
	else
		cJSON_AddStringToObject(r, "content",
					c ? "[sandboxctl: the call had no answer]"
					  : "[sandboxctl: no MCP call was made for it]");
}

static void model_line(traj *t, cJSON *o)
{
	const cJSON *reply = cJSON_GetObjectItemCaseSensitive(o, "reply");
	const cJSON *usage = cJSON_GetObjectItemCaseSensitive(reply, "usage");
	const cJSON *choice =
		cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(reply, "choices"), 0);
	const cJSON *msg = cJSON_GetObjectItemCaseSensitive(choice, "message");
	_cleanup_(sbx_buf_free) sbx_buf text = SBX_BUF_INIT(t->content_max * 2);
	cJSON *s, *calls, *results, *metrics, *e;
	double prompt, completion, cached,
		created = 0, ms = sbx_run__traj_in_run(t, sbx_json_get_number(o, "t", -1) * 1000);
	char ts[64];

	if (!cJSON_IsObject(reply))
		return;
	t->model_log = true;
	if (t->spent >= t->budget) {
		t->omitted++;
		return;
	}
	s = cJSON_CreateObject();
	calls = cJSON_CreateArray();
	results = cJSON_CreateArray();
	if (!s || !calls || !results) {
		cJSON_Delete(s);
		cJSON_Delete(calls);
		cJSON_Delete(results);
		return;
	}
	if (msg) { /* OpenAI chat completions */
		sbx_buf_puts(&text, sbx_json_get_string(msg, "content", ""));
		cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(msg, "tool_calls")) {
			const cJSON *fn = cJSON_GetObjectItemCaseSensitive(e, "function");
			const char *a = sbx_json_get_string(fn, "arguments", "{}");
			_cleanup_json_ cJSON *args = NULL;

			if (sbx_json_parse(a, strlen(a), &args, NULL) < 0)
				args = NULL;
			add_tool_call(t, calls, results, sbx_json_get_string(e, "id", ""),
				      sbx_json_get_string(fn, "name", ""), args);
		}
		prompt = count(usage, "prompt_tokens");
		cached = count(cJSON_GetObjectItemCaseSensitive(usage, "prompt_tokens_details"),
			       "cached_tokens");
		completion = count(usage, "completion_tokens");
	} else { /* Anthropic messages: input_tokens excludes the cache */
		cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(reply, "content")) {
			const char *type = sbx_json_get_string(e, "type", "");

			if (strcmp(type, "text") == 0) {
				if (text.len)
					sbx_buf_putc(&text, '\n');
				sbx_buf_puts(&text, sbx_json_get_string(e, "text", ""));
			} else if (strcmp(type, "tool_use") == 0) {
				add_tool_call(t, calls, results, sbx_json_get_string(e, "id", ""),
					      sbx_json_get_string(e, "name", ""),
					      cJSON_GetObjectItemCaseSensitive(e, "input"));
			}
		}
		cached = count(usage, "cache_read_input_tokens");
		created = count(usage, "cache_creation_input_tokens");
		prompt = count(usage, "input_tokens") + cached + created;
		completion = count(usage, "output_tokens");
	}
	cJSON_AddStringToObject(s, "source", "agent");
	cJSON_AddItemToObject(s, "message",
			      sbx_run__traj_string(t, sbx_buf_str(&text), t->content_max));
	sbx_run__traj_iso(ms, ts);
	if (ts[0])
		cJSON_AddStringToObject(s, "timestamp", ts);
	if (t->model)
		cJSON_AddItemToObject(s, "model_name", sbx_run__traj_string(t, t->model, 256));
	if (cJSON_GetArraySize(calls)) {
		cJSON_AddItemToObject(s, "tool_calls", calls);
		cJSON_AddItemToObject(cJSON_AddObjectToObject(s, "observation"), "results",
				      results);
	} else {
		cJSON_Delete(calls);
		cJSON_Delete(results);
	}
	metrics = cJSON_AddObjectToObject(s, "metrics");
	cJSON_AddNumberToObject(metrics, "prompt_tokens", prompt);
	cJSON_AddNumberToObject(metrics, "completion_tokens", completion);
	cJSON_AddNumberToObject(metrics, "cached_tokens", cached);
	if (created > 0) /* billed apart: the RFC puts it in the metrics' extra */
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(metrics, "extra"),
					"cache_creation_input_tokens", created);
	t->prompt_tokens += prompt;
	t->completion_tokens += completion;
	t->cached_tokens += cached;
	t->turns_with_usage += usage != NULL;
	{
		_cleanup_free_ char *p = cJSON_PrintUnformatted(s);
		t->spent += p ? strlen(p) : 0;
	}
	sbx_run__traj_add_step(t, ms, s);
}

/* ---- assembly ------------------------------------------------------------- */

void sbx_run__traj_add_step(traj *t, double key, cJSON *step)
{
	cJSON *pair = cJSON_CreateArray(), *k = cJSON_CreateNumber(key < 0 ? 1e300 : key);

	if (!pair || !k || !step) {
		cJSON_Delete(pair);
		cJSON_Delete(k);
		cJSON_Delete(step);
		return;
	}
	cJSON_AddItemToArray(pair, k);
	cJSON_AddItemToArray(pair, step);
	cJSON_AddItemToArray(t->steps_tmp, pair);
}

/* A transcript call no model turn claimed: a step of its own. */
static void call_step(traj *t, call *c, size_t index)
{
	cJSON *s = cJSON_CreateObject(), *tc, *r;
	char ts[64], id[32];

	if (!s)
		return;
	snprintf(id, sizeof(id), "call_%zu", index + 1);
	cJSON_AddStringToObject(s, "source", "agent");
	cJSON_AddStringToObject(s, "message", "");
	sbx_run__traj_iso(c->ms, ts);
	if (ts[0])
		cJSON_AddStringToObject(s, "timestamp", ts);
	tc = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(s, "tool_calls"), tc);
	cJSON_AddStringToObject(tc, "tool_call_id", id);
	cJSON_AddStringToObject(tc, "function_name", c->name);
	cJSON_AddItemToObject(tc, "arguments", TAKE_PTR(c->args));
	r = cJSON_CreateObject();
	cJSON_AddItemToArray(
		cJSON_AddArrayToObject(cJSON_AddObjectToObject(s, "observation"), "results"), r);
	cJSON_AddStringToObject(r, "source_call_id", id);
	cJSON_AddStringToObject(r, "content",
				c->result ? c->result : "[sandboxctl: the call had no answer]");
	if (c->id) {
		cJSON *extra = cJSON_AddObjectToObject(s, "extra");
		cJSON_AddItemToObject(extra, "jsonrpc_id", cJSON_Duplicate(c->id, 1));
	}
	sbx_run__traj_add_step(t, c->ms, s);
}

typedef struct keyed {
	double key;
	int order; /* made in; ties keep it */
	cJSON *pair;
} keyed;

static int by_key(const void *a, const void *b)
{
	const keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

/* Steps in time order (ties in the order they were made), numbered from 2, step_id first. */
static int sort_steps(traj *t, cJSON *steps)
{
	int n = cJSON_GetArraySize(t->steps_tmp);
	_cleanup_free_ keyed *v = calloc(n ? (size_t)n : 1, sizeof(*v));
	cJSON *p;
	int i = 0;

	if (!v)
		return -ENOMEM;
	cJSON_ArrayForEach (p, t->steps_tmp) {
		v[i] = (keyed){.key = cJSON_GetArrayItem(p, 0)->valuedouble, .order = i, .pair = p};
		i++;
	}
	qsort(v, (size_t)n, sizeof(*v), by_key);
	for (i = 0; i < n; i++) {
		cJSON *old = cJSON_DetachItemFromArray(v[i].pair, 1), *step = cJSON_CreateObject(),
		      *c;

		if (!old || !step) {
			cJSON_Delete(old);
			cJSON_Delete(step);
			return -ENOMEM;
		}
		cJSON_AddItemToArray(steps, step);
		cJSON_AddNumberToObject(step, "step_id", i + 2);
		while ((c = old->child)) {
			cJSON_DetachItemViaPointer(old, c);
			if (!cJSON_AddItemToObject(step, c->string, c))
				cJSON_Delete(c);
		}
		cJSON_Delete(old);
	}
	return n;
}

static void traj_clear(traj *t)
{
	for (size_t i = 0; i < t->n_calls; i++) {
		cJSON_Delete(t->calls[i].id);
		cJSON_Delete(t->calls[i].args);
		free(t->calls[i].name);
		free(t->calls[i].result);
	}
	free(t->calls);
	cJSON_Delete(t->steps_tmp);
	cJSON_Delete(t->methods);
	free(t->client_name);
	free(t->client_version);
	free(t->model);
}

/* The model agent's summary names its model (the file is the agent's: capped). */
static char *summary_model(const char *run_dir)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_json_ cJSON *j = NULL;
	size_t len;

	if (sbx_rundir__read(run_dir, "agent-llm.json", 64 << 10, &text, &len, NULL) < 0 ||
	    sbx_json_parse(text, len, &j, NULL) < 0)
		return NULL;
	return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "model"))
		       ? strdup(cJSON_GetObjectItemCaseSensitive(j, "model")->valuestring)
		       : NULL;
}

static cJSON *build(traj *t)
{
	const sbx_trajectory_info *in = t->info;
	_cleanup_json_ cJSON *root = cJSON_CreateObject();
	_cleanup_free_ char *tpath = NULL, *mpath = NULL;
	cJSON *agent, *steps, *first, *fm, *extra;
	char ts[64];
	int n, r;

	if (!root || asprintf(&tpath, "%s/transcript.jsonl", in->run_dir) < 0 ||
	    asprintf(&mpath, "%s/model.jsonl", in->run_dir) < 0)
		return NULL;
	r = each_line(t, tpath, sbx_run__traj_transcript_line);
	if (r >= 0)
		r = each_line(t, mpath, model_line);
	if (r < 0)
		return NULL;
	for (size_t i = 0; i < t->n_calls; i++)
		if (!t->calls[i].used)
			call_step(t, &t->calls[i], i);

	cJSON_AddStringToObject(root, "schema_version", SBX_TRAJECTORY_SCHEMA);
	cJSON_AddItemToObject(root, "session_id", sbx_run__traj_string(t, in->session_id, 256));
	agent = cJSON_AddObjectToObject(root, "agent");
	cJSON_AddItemToObject(
		agent, "name",
		sbx_run__traj_string(t, t->client_name ? t->client_name : in->agent, 256));
	cJSON_AddStringToObject(agent, "version",
				t->client_version ? t->client_version : SBX_VERSION);
	if (t->model)
		cJSON_AddItemToObject(agent, "model_name", sbx_run__traj_string(t, t->model, 256));
	cJSON_AddItemToObject(cJSON_AddObjectToObject(agent, "extra"), "sandboxctl_agent",
			      sbx_run__traj_string(t, in->agent, 1024));

	steps = cJSON_AddArrayToObject(root, "steps");
	first = cJSON_CreateObject();
	cJSON_AddItemToArray(steps, first);
	cJSON_AddNumberToObject(first, "step_id", 1);
	cJSON_AddStringToObject(first, "source", "user");
	cJSON_AddItemToObject(first, "message", sbx_run__traj_string(t, in->prompt, PROMPT_MAX));
	sbx_run__traj_iso((double)in->started_at, ts);
	if (ts[0])
		cJSON_AddStringToObject(first, "timestamp", ts);
	n = sort_steps(t, steps);
	if (n < 0)
		return NULL;

	fm = cJSON_AddObjectToObject(root, "final_metrics");
	if (t->model_log) {
		cJSON_AddNumberToObject(fm, "total_prompt_tokens", t->prompt_tokens);
		cJSON_AddNumberToObject(fm, "total_completion_tokens", t->completion_tokens);
		cJSON_AddNumberToObject(fm, "total_cached_tokens", t->cached_tokens);
	}
	cJSON_AddNumberToObject(fm, "total_steps", n + 1);

	extra = cJSON_AddObjectToObject(root, "extra");
	cJSON_AddStringToObject(extra, "sandboxctl_version", SBX_VERSION);
	cJSON_AddStringToObject(extra, "source",
				t->model_log ? "transcript.jsonl, model.jsonl"
					     : "transcript.jsonl");
	cJSON_AddItemToObject(extra, "other_mcp_requests", TAKE_PTR(t->methods));
	if (t->clipped || t->omitted || t->skipped_lines || t->unreadable_lines) {
		cJSON *tr = cJSON_AddObjectToObject(extra, "truncated");
		cJSON_AddNumberToObject(tr, "contents_clipped", (double)t->clipped);
		cJSON_AddNumberToObject(tr, "calls_or_turns_omitted", (double)t->omitted);
		cJSON_AddNumberToObject(tr, "lines_over_cap_skipped", (double)t->skipped_lines);
		cJSON_AddNumberToObject(tr, "lines_unreadable", (double)t->unreadable_lines);
		cJSON_AddNumberToObject(tr, "content_max_bytes", (double)t->content_max);
		cJSON_AddNumberToObject(tr, "budget_bytes", (double)t->budget);
		cJSON_AddStringToObject(tr, "full_record", "transcript.jsonl");
	}
	return TAKE_PTR(root);
}

int sbx_run_trajectory_write(const sbx_trajectory_info *info, sbx_error *err)
{
	traj t = {.info = info};
	_cleanup_json_ cJSON *root = NULL;
	_cleanup_free_ char *text = NULL;

	assert(info && info->run_dir);
	{
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		t.now_ms = (double)now.tv_sec * 1000 + (double)(now.tv_nsec / 1000000);
	}
	t.content_max = info->content_max ? info->content_max : SBX_TRAJECTORY_CONTENT_MAX;
	t.budget = info->max_bytes ? info->max_bytes : SBX_TRAJECTORY_MAX;
	t.model = info->model ? strdup(info->model) : summary_model(info->run_dir);
	t.steps_tmp = cJSON_CreateArray();
	t.methods = cJSON_CreateObject();
	if (t.steps_tmp && t.methods)
		root = build(&t);
	traj_clear(&t);
	if (!root)
		return sbx_error_set(err, -ENOMEM,
				     "trajectory '%s/trajectory.json': cannot build it",
				     info->run_dir);
	text = cJSON_Print(root);
	if (!text)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	return sbx_rundir__write(info->run_dir, "trajectory.json", text, strlen(text), err);
}
