/* SPDX-License-Identifier: MIT */
/*
 * sandbox-llm-agent: the model agent `sandboxctl run --agent llm` starts.
 *
 *   system prompt + task prompt → the sandbox's tools (tools/list, in the
 *   provider's schema) → model reply → every tool call, in order, through the
 *   relay (MCP tools/call) → the results back → … until the model calls
 *   complete_task, stops calling tools, or a limit is hit.
 *
 * Exit 0 when the attempt ran (whatever the model did: the grade says how
 * good it was); 3 when the provider failed it (a bad key, a malformed reply,
 * errors past the retries) — the run then records agent_error; 2 on usage.
 * Each message goes to model.jsonl once, as first sent (no key; images as
 * size and hash); the summary (turns, tool calls, usage, stop reason) to a JSON file
 * the run merges into result.json.
 */
#include <errno.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "llm.h"
#include "llm_agent.h"
#include "llm_reply.h"
#include "mcp_client.h"
#include "say.h"
#include "sbx/suggest.h"

/*
 * The memory bound (README "--agent llm"), with a reply's own (llm_reply.h):
 * a tool result is kept to RESULT_MAX, a turn's results to TURN_RESULTS_MAX;
 * the conversation sent back is kept within CONVERSATION_MAX by eliding the
 * oldest turns' big pieces (llm_trim).
 */
#define RESULT_MAX	 (1L << 20)
#define TURN_RESULTS_MAX (4L << 20)
#define CONVERSATION_MAX (8L << 20)
#define MAX_TRIES	 8
/* Tool calls in one reply (each runs, and each answer stays in the conversation). */
#define MAX_CALLS 256
/* Nothing accepts the connection: tries, and the waits between them (seconds). */
#define CONNECT_TRIES 3
static const double connect_waits[CONNECT_TRIES - 1] = {0.5, 1.0};

static const char default_system[] =
	"You are an agent working inside a sandbox on a spreadsheet task. Use the tools "
	"to inspect the files, do exactly what the task asks, save your work, and then "
	"call complete_task. Do not ask the user questions: nobody will answer.";

typedef struct agent {
	options o;
	const llm_api *api;
	char *key;
	char url[1024];
	time_t deadline;
	FILE *log;
	CURL *curl;
	mcp_client mcp;
	/* the summary */
	long turns, tool_calls, tool_errors, retries;
	uint64_t in_tokens, out_tokens, cached_tokens;
	int logged_messages; /* of the request's list, in model.jsonl */
	const char *stop_reason;
	char error[3072];
} agent;

const char *const agent_name = "llm-agent";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Replaces every copy of the key in s (in place) with "[redacted]"-sized stars. */
static void redact_key(const agent *a, char *s)
{
	size_t kl = a->key ? strlen(a->key) : 0;
	char *p;

	if (kl < 4 || !s)
		return;
	while ((p = strstr(s, a->key)))
		memset(p, '*', kl);
}

/* Images in a logged message become "<image N bytes sha256:HEX>". */
static void redact_images(cJSON *node)
{
	for (cJSON *c = node ? node->child : NULL; c; c = c->next) {
		const char *v = cJSON_GetStringValue(c);

		if (v && c->string && strlen(v) > 256 &&
		    (strcmp(c->string, "data") == 0 ||
		     (strcmp(c->string, "url") == 0 && strncmp(v, "data:", 5) == 0))) {
			unsigned char md[EVP_MAX_MD_SIZE];
			unsigned int mdlen = 0;
			char hex[2 * EVP_MAX_MD_SIZE + 1], text[200];

			EVP_Digest(v, strlen(v), md, &mdlen, EVP_sha256(), NULL);
			for (unsigned i = 0; i < mdlen; i++)
				snprintf(hex + 2 * i, 3, "%02x", md[i]);
			snprintf(text, sizeof(text), "<image %zu bytes sha256:%s>", strlen(v), hex);
			cJSON_SetValuestring(c, text);
		} else {
			redact_images(c);
		}
	}
}

/*
 * One model.jsonl line: {"t", "turn", kind: body, ...extra}. body is the
 * caller's; with redact, images in (a copy of) it are logged as size + hash.
 */
static void record(agent *a, const char *kind, cJSON *body, long status, double ms, bool redact,
		   int messages_from)
{
	cJSON *line, *copy;
	char *text;

	if (!a->log)
		return;
	line = cJSON_CreateObject();
	cJSON_AddNumberToObject(line, "t", now_s());
	cJSON_AddNumberToObject(line, "turn", (double)a->turns);
	if (status)
		cJSON_AddNumberToObject(line, "status", (double)status);
	if (ms >= 0)
		cJSON_AddNumberToObject(line, "ms", round(ms * 1000) / 1000);
	if (messages_from >= 0)
		cJSON_AddNumberToObject(line, "messages_from", messages_from);
	if (!body) {
		cJSON_AddNullToObject(line, kind);
	} else if (redact) {
		copy = cJSON_Duplicate(body, 1);
		redact_images(copy);
		cJSON_AddItemToObject(line, kind, copy);
	} else { /* a reply: no images, and no second copy of up to LLM_REPLY_VALUES nodes */
		cJSON_AddItemReferenceToObject(line, kind, body);
	}
	text = cJSON_PrintUnformatted(line);
	if (text) {
		redact_key(a, text);
		fprintf(a->log, "%s\n", text);
		fflush(a->log);
	}
	free(text);
	cJSON_Delete(line);
}

/*
 * The request, each message once: its "messages" holds those not logged
 * before (from index "messages_from" of the request's own list on), the
 * model's turns as a pointer to their reply line, and "tools" only in the
 * first request (they do not change). So model.jsonl grows with what was
 * said, not with the conversation's length times its turns.
 */
static void record_request(agent *a, cJSON *body)
{
	cJSON *msgs = cJSON_GetObjectItemCaseSensitive(body, "messages"), *m;
	cJSON *view = cJSON_CreateObject(), *shown = cJSON_CreateArray();
	int from = a->logged_messages, i = 0;

	if (!a->log)
		goto done;
	for (cJSON *c = body->child; c; c = c->next)
		if (c != msgs && (a->turns <= 1 || strcmp(c->string, "tools") != 0))
			cJSON_AddItemReferenceToObject(view, c->string, c);
	cJSON_ArrayForEach (m, msgs) {
		const char *role =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "role"));
		cJSON *o;

		if (i++ < from)
			continue;
		if (!role || strcmp(role, "assistant") != 0) {
			cJSON_AddItemReferenceToArray(shown, m);
			continue;
		}
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "role", "assistant");
		cJSON_AddStringToObject(o, "logged_as", "the reply of the turn before");
		cJSON_AddItemToArray(shown, o);
	}
	a->logged_messages = i;
	cJSON_AddItemToObject(view, "messages", shown);
	shown = NULL;
	record(a, "request", view, 0, -1, true, from);
done:
	cJSON_Delete(shown);
	cJSON_Delete(view);
}

/* The provider's error message from a JSON error body, or a short excerpt. */
static void provider_error(agent *a, long status, const llm_body *b, const char *curl_err)
{
	/* A big error body is shown as an excerpt, unparsed: it may be millions of values. */
	cJSON *j = b->b.data && b->b.len < (64 << 10) ? cJSON_Parse(b->b.data) : NULL;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));

	if (!m)
		m = cJSON_GetStringValue(e);
	if (curl_err)
		snprintf(a->error, sizeof(a->error), "%s: %s", a->url, curl_err);
	else
		snprintf(a->error, sizeof(a->error), "%s answered HTTP %ld: %.300s", a->url, status,
			 m ? m : (b->b.data ? b->b.data : "(empty)"));
	redact_key(a, a->error);
	for (char *p = a->error; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	cJSON_Delete(j);
}

static bool retryable(long status)
{
	return status == 408 || status == 409 || status == 429 || status >= 500;
}

/*
 * Sleeps for attempt's backoff (full jitter, capped), or Retry-After; false when
 * the wait would end past the deadline (a Retry-After far off gives up at once).
 */
static bool back_off(agent *a, int attempt, double retry_after)
{
	double cap = fmin(30.0, 0.5 * (double)(1L << (attempt < 6 ? attempt : 6)));
	double wait = retry_after >= 0 ? retry_after : cap * ((double)rand() / (double)RAND_MAX);
	double left = (double)a->deadline - now_s();

	if (wait > left - 1)
		return false;
	a->retries++;
	say("retrying in %.2f s (%s)", wait, a->error);
	nanosleep(&(struct timespec){(time_t)wait, (long)((wait - floor(wait)) * 1e9)}, NULL);
	return true;
}

/* Nothing accepted the connection: a base URL with nothing behind it, not a busy provider. */
static bool refused_connection(CURLcode rc)
{
	return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	       rc == CURLE_COULDNT_RESOLVE_PROXY;
}

/* POSTs body to the model; the parsed reply, or NULL with a->error set. */
static cJSON *ask(agent *a, cJSON *body)
{
	char *text = cJSON_PrintUnformatted(body);
	struct curl_slist *h = NULL;
	cJSON *reply = NULL;
	int refusals = 0;
	double started = now_s();

	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip per request */
	h = a->api->headers(h, a->key);
	record_request(a, body);
	for (int attempt = 0; attempt < MAX_TRIES && text; attempt++) {
		llm_body b;
		long status = 0, timeout = (long)(a->deadline - time(NULL));
		double t0 = now_s();
		CURLcode rc;

		if (timeout < 1) {
			snprintf(a->error, sizeof(a->error), "the run's deadline passed");
			break;
		}
		curl_easy_setopt(a->curl, CURLOPT_URL, a->url);
		curl_easy_setopt(a->curl, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(a->curl, CURLOPT_POSTFIELDS, text);
		llm_body_init(&b, a->curl);
		curl_easy_setopt(a->curl, CURLOPT_TIMEOUT, timeout < 600 ? timeout : 600L);
		rc = curl_easy_perform(a->curl);
		if (rc == CURLE_OK)
			curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
		if (rc == CURLE_OK && status == 200) {
			reply = llm_body_parse(&b, a->url, a->error, sizeof(a->error));
			if (reply)
				record(a, "reply", reply, status, (now_s() - t0) * 1000, false, -1);
			free(b.b.data);
			break;
		}
		if (b.refused)
			llm_body_refusal(&b, a->url, a->error, sizeof(a->error));
		else
			provider_error(a, status, &b,
				       rc == CURLE_OK ? NULL : curl_easy_strerror(rc));
		if (refused_connection(rc) && ++refusals < CONNECT_TRIES) {
			size_t len = strlen(a->error);

			snprintf(a->error + len, sizeof(a->error) - len, " (try %d of %d)",
				 refusals, CONNECT_TRIES);
		} else if (refused_connection(rc)) {
			size_t len = strlen(a->error);

			snprintf(a->error + len, sizeof(a->error) - len,
				 " (%d tries over %.1f s: is anything serving the base URL?)",
				 CONNECT_TRIES, now_s() - started);
		}
		{
			cJSON *err = cJSON_CreateString(a->error);
			record(a, "error", err, status, (now_s() - t0) * 1000, false, -1);
			cJSON_Delete(err);
		}
		free(b.b.data);
		/* A reply refused while it came would come again: not retried. */
		if (b.refused || (rc == CURLE_OK && !retryable(status)) ||
		    (refused_connection(rc) && refusals >= CONNECT_TRIES))
			break;
		if (!back_off(a, attempt,
			      refused_connection(rc) ? connect_waits[refusals - 1]
						     : (double)b.retry_after))
			break;
	}
	curl_slist_free_all(h);
	free(text);
	return reply;
}

/* Runs one tool call through the relay; the model sees what came back. */
static void run_call(agent *a, const llm_call *c, llm_result *out)
{
	cJSON *res;
	const cJSON *block;
	size_t len = 0;

	a->tool_calls++;
	if (!c->args) {
		out->text = strdup(c->bad_args ? c->bad_args : "bad arguments");
		out->is_error = true;
		a->tool_errors++;
		return;
	}
	res = mcp_client_call(&a->mcp, c->name, cJSON_Duplicate(c->args, 1));
	if (!res) {
		out->text = strdup(a->mcp.error[0] ? a->mcp.error : "the tool call failed");
		out->is_error = true;
		a->tool_errors++;
		return;
	}
	out->is_error = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "isError"));
	if (out->is_error)
		a->tool_errors++;
	cJSON_ArrayForEach (block, cJSON_GetObjectItemCaseSensitive(res, "content")) {
		const char *type =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(block, "type"));

		if (type && strcmp(type, "text") == 0) {
			const char *t = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(block, "text"));
			size_t n = t ? strlen(t) : 0;
			char *joined = realloc(out->text, len + n + 2);

			if (!joined)
				break;
			out->text = joined;
			if (len)
				out->text[len++] = '\n';
			memcpy(out->text + len, t ? t : "", n);
			len += n;
			out->text[len] = '\0';
		} else if (type && strcmp(type, "image") == 0 && !out->image_b64) {
			const char *d = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(block, "data"));
			const char *m = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(block, "mimeType"));

			if (d) {
				out->image_b64 = strdup(d);
				out->image_mime = strdup(m ? m : "image/png");
			}
		}
	}
	cJSON_Delete(res);
}

/*
 * What of a turn's tool results the conversation keeps: each text up to
 * RESULT_MAX, all of them (images too) up to TURN_RESULTS_MAX; what is cut
 * says so, and an image past the budget is dropped with a note.
 */
static void keep_results(const llm_reply *r, llm_result *results)
{
	static const char why[] = "a tool result is kept to 1 MiB, a turn's results to 4 MiB";
	size_t left = TURN_RESULTS_MAX;

	for (size_t i = 0; i < r->n_calls; i++) {
		llm_result *x = &results[i];
		size_t kept = llm_cut(&x->text, left < RESULT_MAX ? left : RESULT_MAX, why);
		size_t img = x->image_b64 ? strlen(x->image_b64) : 0;

		left = left > kept ? left - kept : 0;
		if (img > left) {
			char *text = NULL;

			if (asprintf(&text,
				     "%s\n[an image of %zu bytes dropped by sandbox-llm-agent: %s]",
				     x->text ? x->text : "", img, why) >= 0) {
				free(x->text);
				x->text = text;
			}
			free(x->image_b64);
			x->image_b64 = NULL;
			img = 0;
		}
		left -= img;
	}
}

/* The loop; 0 when the attempt ran, 3 when the provider failed it. */
static int converse(agent *a, const char *system, const char *prompt, cJSON *tools)
{
	cJSON *messages = cJSON_CreateArray();
	int rc = 0;

	llm_add_message(messages, "user", cJSON_CreateString(prompt));
	a->stop_reason = "max_turns";
	while (a->turns < a->o.max_turns) {
		int turn_start = cJSON_GetArraySize(messages);
		cJSON *body, *reply;
		llm_reply r = {0};
		llm_result *results;
		char why[512] = "";
		bool done = false, malformed;

		if (a->o.max_total_tokens > 0 &&
		    a->in_tokens + a->out_tokens >= (uint64_t)a->o.max_total_tokens) {
			a->stop_reason = "max_total_tokens";
			break;
		}
		if (time(NULL) >= a->deadline) {
			a->stop_reason = "deadline";
			break;
		}
		a->turns++;
		body = a->api->request(a->o.model, system, messages, tools, a->o.max_output_tokens,
				       a->o.temperature, a->o.has_temperature, a->o.seed,
				       a->o.has_seed);
		reply = ask(a, body);
		cJSON_Delete(body);
		if (!reply) {
			a->stop_reason = "provider_error";
			rc = 3;
			break;
		}
		malformed = a->api->parse(reply, &r, why, sizeof(why)) < 0;
		if (!malformed && r.n_calls > MAX_CALLS) {
			snprintf(why, sizeof(why),
				 "it calls %zu tools: over the %d a reply may call", r.n_calls,
				 MAX_CALLS);
			malformed = true;
		}
		if (malformed) {
			snprintf(a->error, sizeof(a->error), "malformed reply from %s: %s", a->url,
				 why[0] ? why : "out of memory");
			a->stop_reason = "malformed_reply";
			llm_reply_clear(&r);
			cJSON_Delete(reply);
			rc = 3;
			break;
		}
		a->in_tokens += r.in_tokens;
		a->out_tokens += r.out_tokens;
		a->cached_tokens += r.cached_tokens;
		a->api->add_assistant(messages, reply);
		cJSON_Delete(reply);
		if (r.text && *r.text)
			say("turn %ld: %.200s", a->turns, r.text);
		if (r.n_calls == 0) {
			a->stop_reason = "no_tool_calls";
			llm_reply_clear(&r);
			break;
		}
		results = calloc(r.n_calls, sizeof(*results));
		if (!results) {
			llm_reply_clear(&r);
			rc = 3;
			break;
		}
		for (size_t i = 0; i < r.n_calls; i++) {
			run_call(a, &r.calls[i], &results[i]);
			say("turn %ld: %s → %s", a->turns, r.calls[i].name,
			    results[i].is_error ? "error" : "ok");
			if (strcmp(r.calls[i].name, "complete_task") == 0 && !results[i].is_error)
				done = true;
		}
		keep_results(&r, results);
		a->api->add_results(messages, &r, results);
		/* This turn stays whole; older ones give way once the budget is passed. */
		llm_trim(messages, (size_t)turn_start, CONVERSATION_MAX);
		for (size_t i = 0; i < r.n_calls; i++)
			llm_result_clear(&results[i]);
		free(results);
		llm_reply_clear(&r);
		if (done) {
			a->stop_reason = "complete_task";
			break;
		}
	}
	cJSON_Delete(messages);
	return rc;
}

static void write_summary(const agent *a)
{
	cJSON *s = cJSON_CreateObject(), *u;
	char *text;
	FILE *f;

	if (!a->o.summary_path)
		return;
	cJSON_AddStringToObject(s, "model", a->o.model);
	cJSON_AddStringToObject(s, "api", a->api->name);
	cJSON_AddNumberToObject(s, "turns", (double)a->turns);
	cJSON_AddNumberToObject(s, "tool_calls", (double)a->tool_calls);
	cJSON_AddNumberToObject(s, "tool_errors", (double)a->tool_errors);
	cJSON_AddNumberToObject(s, "retries", (double)a->retries);
	u = cJSON_AddObjectToObject(s, "usage");
	cJSON_AddNumberToObject(u, "input_tokens", (double)a->in_tokens);
	cJSON_AddNumberToObject(u, "output_tokens", (double)a->out_tokens);
	cJSON_AddNumberToObject(u, "cached_tokens", (double)a->cached_tokens);
	cJSON_AddStringToObject(s, "stop_reason", a->stop_reason ? a->stop_reason : "unknown");
	if (a->error[0])
		cJSON_AddStringToObject(s, "error", a->error);
	text = cJSON_Print(s);
	f = text ? fopen(a->o.summary_path, "we") : NULL;
	if (f) {
		fprintf(f, "%s\n", text);
		fclose(f);
	} else {
		say("cannot write %s: %s", a->o.summary_path, strerror(errno));
	}
	free(text);
	cJSON_Delete(s);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	if (buf) {
		len = fread(buf, 1, (1 << 20) - 1, f);
		buf[len] = '\0';
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	static char log_buf[4096], sum_buf[4096];
	agent a = {0};
	const char *run_dir = getenv("SANDBOX_RUN_DIR"), *deadline = getenv("SANDBOX_DEADLINE");
	const char *prompt = getenv("SANDBOX_TASK_PROMPT"), *base;
	bool ok;
	char *system = NULL, why[512] = "";
	cJSON *list_resp = NULL, *tools = NULL;
	const cJSON *list;
	int rc = 3;

	if (llm_agent_parse_args(argc, argv, &a.o) < 0) {
		llm_agent_usage(stderr);
		return 2;
	}
	if (strcmp(a.o.api_name, "openai") == 0) {
		a.api = &llm_openai;
	} else if (strcmp(a.o.api_name, "anthropic") == 0) {
		a.api = &llm_anthropic;
	} else {
		static const char *const apis[] = {"openai", "anthropic"};
		const char *near = sbx_suggest(a.o.api_name, apis, 2);

		say("--api: '%s' is not openai or anthropic%s%s%s", a.o.api_name,
		    near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
		return 2;
	}
	base = a.o.base_url ? a.o.base_url : getenv(a.api->base_env);
	if (!base || !*base)
		base = a.api->default_base;
	if (llm_agent_check_base_url(base) < 0)
		return 2;
	if (a.o.system_file) {
		system = read_file(a.o.system_file);
		if (!system) {
			say("--system-prompt: cannot read '%s': %s", a.o.system_file,
			    strerror(errno));
			return 2;
		}
	}
	if (a.o.check) {
		free(system);
		return 0;
	}
	a.o.mcp_url = getenv("SANDBOX_MCP_URL");
	if (!a.o.mcp_url || !prompt) {
		say("SANDBOX_MCP_URL and SANDBOX_TASK_PROMPT must be set (sandboxctl run sets "
		    "them)");
		return 2;
	}
	if (run_dir && !a.o.log_path) {
		snprintf(log_buf, sizeof(log_buf), "%s/model.jsonl", run_dir);
		a.o.log_path = log_buf;
	}
	if (run_dir && !a.o.summary_path) {
		snprintf(sum_buf, sizeof(sum_buf), "%s/agent-llm.json", run_dir);
		a.o.summary_path = sum_buf;
	}
	a.deadline = deadline ? (time_t)strtoll(deadline, NULL, 10) : 0;
	if (a.deadline <= 0)
		a.deadline = time(NULL) + 3600;
	a.key = getenv(a.o.key_env ? a.o.key_env : a.api->key_env);
	a.key = a.key ? strdup(a.key) : NULL;
	{
		size_t bl = strlen(base);

		while (bl > 0 && base[bl - 1] == '/')
			bl--;
		snprintf(a.url, sizeof(a.url), "%.*s%s", (int)bl, base, a.api->path);
	}
	if (a.o.log_path) {
		a.log = fopen(a.o.log_path, "ae");
		if (!a.log)
			say("cannot open %s: %s (no model log)", a.o.log_path, strerror(errno));
	}
	srand((unsigned)(time(NULL) ^ getpid()));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	a.curl = curl_easy_init();
	ok = a.curl && mcp_client_open(&a.mcp, a.o.mcp_url, "sandbox-llm-agent", "1.0") == 0;
	if (!ok) {
		snprintf(a.error, sizeof(a.error), "cannot reach the sandbox: %s", a.mcp.error);
		a.stop_reason = "sandbox_unreachable";
	} else if (!(list = mcp_client_rpc(&a.mcp, "tools/list", NULL, &list_resp))) {
		snprintf(a.error, sizeof(a.error), "tools/list: %s", a.mcp.error);
		a.stop_reason = "sandbox_unreachable";
	} else if (!(tools = a.api->tools(cJSON_GetObjectItemCaseSensitive(list, "tools"), why,
					  sizeof(why)))) {
		snprintf(a.error, sizeof(a.error), "%s cannot take the sandbox's tools: %s",
			 a.api->name, why);
		a.stop_reason = "bad_tools";
	} else {
		say("%s at %s, model %s, %d tools", a.api->name, a.url, a.o.model,
		    cJSON_GetArraySize(tools));
		rc = converse(&a, system ? system : default_system, prompt, tools);
	}
	if (a.error[0])
		say("%s", a.error);
	say("stopped: %s after %ld turns, %ld tool calls (%ld errors), %llu+%llu tokens",
	    a.stop_reason ? a.stop_reason : "?", a.turns, a.tool_calls, a.tool_errors,
	    (unsigned long long)a.in_tokens, (unsigned long long)a.out_tokens);
	write_summary(&a);
	cJSON_Delete(tools);
	cJSON_Delete(list_resp);
	mcp_client_close(&a.mcp);
	if (a.curl)
		curl_easy_cleanup(a.curl);
	curl_global_cleanup();
	if (a.log)
		fclose(a.log);
	free(system);
	free(a.key);
	return rc;
}
