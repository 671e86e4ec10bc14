/* SPDX-License-Identifier: MIT */
/*
 * lib/serve without an engine: routing, the token check, POST /v1/episodes
 * validation and the /metrics text.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "openenv.h"
#include "serve-internal.h"

#define TOKEN "0123456789abcdef0123456789abcdef"

/* ---- routing ---- */

static int route(const char *method, const char *path, char *id)
{
	char buf[SERVE_ID_MAX + 1] = "";
	int r = sbx_serve__route(method, path, buf);

	if (id)
		strcpy(id, buf);
	return r;
}

START_TEST(routes)
{
	char id[SERVE_ID_MAX + 1];

	ck_assert_int_eq(route("GET", "/v1/health", NULL), SERVE_ROUTE_HEALTH);
	ck_assert_int_eq(route("GET", "/v1/health/", NULL), SERVE_ROUTE_HEALTH);
	ck_assert_int_eq(route("GET", "/metrics", NULL), SERVE_ROUTE_METRICS);
	ck_assert_int_eq(route("GET", "/metrics?x=1", NULL), SERVE_ROUTE_METRICS);
	ck_assert_int_eq(route("POST", "/v1/episodes", NULL), SERVE_ROUTE_CREATE);
	ck_assert_int_eq(route("GET", "/v1/episodes", NULL), SERVE_ROUTE_LIST);
	ck_assert_int_eq(route("GET", "/v1/episodes/20261203-0101-x-abc", id), SERVE_ROUTE_GET);
	ck_assert_str_eq(id, "20261203-0101-x-abc");
	ck_assert_int_eq(route("DELETE", "/v1/episodes/e1", id), SERVE_ROUTE_ABORT);
	ck_assert_str_eq(id, "e1");
	ck_assert_int_eq(route("POST", "/v1/episodes/e2/finish", id), SERVE_ROUTE_FINISH);
	ck_assert_str_eq(id, "e2");
}
END_TEST

START_TEST(routes_refused)
{
	/* The path exists, not with that method. */
	ck_assert_int_eq(route("POST", "/v1/health", NULL), -405);
	ck_assert_int_eq(route("DELETE", "/v1/episodes", NULL), -405);
	ck_assert_int_eq(route("POST", "/v1/episodes/e1", NULL), -405);
	ck_assert_int_eq(route("GET", "/v1/episodes/e1/finish", NULL), -405);
	/* No such path, or an id that is not a run id. */
	ck_assert_int_eq(route("GET", "/", NULL), -404);
	ck_assert_int_eq(route("GET", "/v1/episodesX", NULL), -404);
	ck_assert_int_eq(route("GET", "/v1/episodes/../etc", NULL), -404);
	ck_assert_int_eq(route("GET", "/v1/episodes/.hidden", NULL), -404);
	ck_assert_int_eq(route("GET", "/v1/episodes/a%2Fb", NULL), -404);
	ck_assert_int_eq(route("POST", "/v1/episodes/e1/finish/x", NULL), -404);
	ck_assert_int_eq(route("POST", "/v1/episodes/e1/stop", NULL), -404);
	{
		char long_id[300];

		memset(long_id, 'a', sizeof(long_id));
		memcpy(long_id, "/v1/episodes/", 13);
		long_id[sizeof(long_id) - 1] = 0;
		ck_assert_int_eq(route("GET", long_id, NULL), -404);
	}
}
END_TEST

START_TEST(sandbox_routes)
{
	char id[SERVE_ID_MAX + 1];

	ck_assert_int_eq(route("POST", "/v1/sandboxes", NULL), SERVE_ROUTE_SBX_CREATE);
	ck_assert_int_eq(route("GET", "/v1/sandboxes/", NULL), SERVE_ROUTE_SBX_LIST);
	ck_assert_int_eq(route("GET", "/v1/sandboxes/sbx-0011", id), SERVE_ROUTE_SBX_GET);
	ck_assert_str_eq(id, "sbx-0011");
	ck_assert_int_eq(route("DELETE", "/v1/sandboxes/sbx-1", id), SERVE_ROUTE_SBX_DELETE);
	ck_assert_int_eq(route("POST", "/v1/sandboxes/sbx-2/exec", id), SERVE_ROUTE_SBX_EXEC);
	ck_assert_str_eq(id, "sbx-2");
	ck_assert_int_eq(route("GET", "/v1/sandboxes/sbx-3/files?path=a/b", id),
			 SERVE_ROUTE_SBX_FILES);
	ck_assert_int_eq(route("PUT", "/v1/sandboxes/sbx-3/files", id), SERVE_ROUTE_SBX_FILES);
	ck_assert_str_eq(id, "sbx-3");
	/* Wrong methods, unknown paths, ids that are not ids. */
	ck_assert_int_eq(route("PUT", "/v1/sandboxes", NULL), -405);
	ck_assert_int_eq(route("GET", "/v1/sandboxes/sbx-2/exec", NULL), -405);
	ck_assert_int_eq(route("DELETE", "/v1/sandboxes/sbx-3/files", NULL), -405);
	ck_assert_int_eq(route("POST", "/v1/sandboxes/sbx-3", NULL), -405);
	ck_assert_int_eq(route("GET", "/v1/sandboxesX", NULL), -404);
	ck_assert_int_eq(route("GET", "/v1/sandboxes/../x/files", NULL), -404);
	ck_assert_int_eq(route("GET", "/v1/sandboxes/.x/files", NULL), -404);
	ck_assert_int_eq(route("GET", "/v1/sandboxes/sbx-1/filesx", NULL), -404);
	ck_assert_int_eq(route("POST", "/v1/sandboxes/sbx-1/exec/x", NULL), -404);
	ck_assert_int_eq(route("GET", "/v1/sandboxes//files", NULL), -404);
}
END_TEST

START_TEST(sandbox_body_caps)
{
	ck_assert_uint_eq(sbx_serve__body_max("/v1/episodes"), SERVE_BODY_MAX);
	ck_assert_uint_eq(sbx_serve__body_max("/v1/sandboxes"), SERVE_BODY_MAX);
	ck_assert_uint_eq(sbx_serve__body_max("/v1/sandboxes/sbx-1/files?path=x"), 100u << 20);
	ck_assert_uint_eq(sbx_serve__body_max("/v1/sandboxes/sbx-1/exec"), 144u << 20);
	/* The suffix of a query does not open the larger cap. */
	ck_assert_uint_eq(sbx_serve__body_max("/v1/episodes?x=/files"), SERVE_BODY_MAX);
	ck_assert_uint_eq(sbx_serve__body_max("/v1/sandboxes?x=/exec"), SERVE_BODY_MAX);
}
END_TEST

/* ---- the token ---- */

START_TEST(token_in_path_or_bearer)
{
	const char *rest = NULL;

	ck_assert(sbx_serve__authorized(TOKEN, "/" TOKEN "/v1/health", NULL, &rest));
	ck_assert_str_eq(rest, "/v1/health");
	ck_assert(sbx_serve__authorized(TOKEN, "/" TOKEN, NULL, &rest));
	ck_assert_str_eq(rest, "/");
	ck_assert(sbx_serve__authorized(TOKEN, "/v1/health", "Bearer " TOKEN, &rest));
	ck_assert_str_eq(rest, "/v1/health");
}
END_TEST

START_TEST(token_refused)
{
	const char *rest = NULL;

	ck_assert(!sbx_serve__authorized(TOKEN, "/v1/health", NULL, &rest));
	ck_assert(!sbx_serve__authorized(TOKEN, "/v1/health", "Bearer ", &rest));
	ck_assert(!sbx_serve__authorized(TOKEN, "/v1/health", "Bearer " TOKEN "x", &rest));
	ck_assert(!sbx_serve__authorized(TOKEN, "/v1/health", "Basic " TOKEN, &rest));
	ck_assert(!sbx_serve__authorized(TOKEN, "/0123456789abcdef0123456789abcdee/v1/health", NULL,
					 &rest));
	ck_assert(!sbx_serve__authorized(TOKEN, "/0123456789abcdef/v1/health", NULL, &rest));
	ck_assert(!sbx_serve__authorized(TOKEN, "/" TOKEN "0/v1/health", NULL, &rest));
	ck_assert(!sbx_serve__authorized("", "//v1/health", "Bearer ", &rest));
	ck_assert(!sbx_serve__token_equal("abc", "abd"));
	ck_assert(!sbx_serve__token_equal("ab", "abc"));
	ck_assert(!sbx_serve__token_equal("abcd", "abc"));
	ck_assert(sbx_serve__token_equal("abc", "abc"));
}
END_TEST

/* ---- POST /v1/episodes ---- */

static int parse(const char *body, serve_create_req *r, sbx_error *err)
{
	return sbx_serve__parse_create(body, strlen(body), 3600, r, err);
}

START_TEST(create_valid)
{
	serve_create_req r = {0};
	sbx_error err = SBX_ERROR_INIT;

	ck_assert_int_eq(parse("{\"task\":\"banking_reserve\"}", &r, &err), 0);
	ck_assert_str_eq(r.task, "banking_reserve");
	ck_assert(!r.seeded);
	ck_assert_uint_eq(r.timeout_s, 0);
	ck_assert_ptr_null(r.tags_json);
	sbx_serve__create_req_clear(&r);

	ck_assert_int_eq(parse("{\"task\":\"t\",\"seed\":7,\"timeout\":30,"
			       "\"tags\":{\"step\":3,\"policy\":\"p1\",\"eval\":true}}",
			       &r, &err),
			 0);
	ck_assert(r.seeded);
	ck_assert_uint_eq(r.seed, 7);
	ck_assert_uint_eq(r.timeout_s, 30);
	ck_assert_str_eq(r.tags_json, "{\"step\":3,\"policy\":\"p1\",\"eval\":true}");
	sbx_serve__create_req_clear(&r);

	ck_assert_int_eq(parse("{\"task\":\"t\",\"seed\":null,\"timeout\":null}", &r, &err), 0);
	ck_assert(!r.seeded);
	sbx_serve__create_req_clear(&r);
}
END_TEST

START_TEST(create_invalid)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{",
		"{}",
		"{\"task\":\"\"}",
		"{\"task\":7}",
		"{\"task\":\"../etc\"}",
		"{\"task\":\"a/b\"}",
		"{\"task\":\".hidden\"}",
		"{\"task\":\"t\",\"seed\":-1}",
		"{\"task\":\"t\",\"seed\":1.5}",
		"{\"task\":\"t\",\"seed\":\"7\"}",
		"{\"task\":\"t\",\"seed\":1e300}",
		"{\"task\":\"t\",\"timeout\":0}",
		"{\"task\":\"t\",\"timeout\":3601}",
		"{\"task\":\"t\",\"timeout\":2.5}",
		"{\"task\":\"t\",\"tags\":[]}",
		"{\"task\":\"t\",\"tags\":{\"a\":{}}}",
		"{\"task\":\"t\",\"tags\":{\"a\":[1]}}",
		"{\"task\":\"t\",\"timout\":30}", /* a typo is refused, not a default */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		serve_create_req r = {0};
		sbx_error err = SBX_ERROR_INIT;

		ck_assert_msg(parse(bad[i], &r, &err) == -EINVAL, "accepted: %s", bad[i]);
		ck_assert_msg(sbx_error_message(&err)[0], "no message for: %s", bad[i]);
		ck_assert_ptr_null(r.task);
	}
}
END_TEST

START_TEST(create_limits)
{
	char body[SERVE_BODY_MAX + 64];
	serve_create_req r = {0};
	sbx_error err = SBX_ERROR_INIT;
	size_t n;

	/* Too many tags. */
	n = (size_t)snprintf(body, sizeof(body), "{\"task\":\"t\",\"tags\":{");
	for (int i = 0; i <= SERVE_TAGS_MAX; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, "%s\"k%d\":1", i ? "," : "", i);
	snprintf(body + n, sizeof(body) - n, "}}");
	ck_assert_int_eq(parse(body, &r, &err), -EINVAL);
	/* A body over the cap, whatever it holds. */
	memset(body, ' ', sizeof(body));
	ck_assert_int_eq(sbx_serve__parse_create(body, SERVE_BODY_MAX + 1, 3600, &r, &err),
			 -EINVAL);
}
END_TEST

/* ---- /metrics ---- */

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

START_TEST(metrics_text)
{
	serve_metrics m = {0};
	serve_pool_gauge g[] = {{"sandboxctl/sandbox-slim:latest", 1, 2, 1}};
	serve_engine_gauge eg[] = {{NULL, 2, 1, false, 0}, {"unix:///tmp/d2.sock", 0, 0, true, 3}};
	char *t;

	sbx_serve__metrics_observe_claim(&m, 0.012, true);  /* le 0.025 */
	sbx_serve__metrics_observe_claim(&m, 0.020, true);  /* le 0.025 */
	sbx_serve__metrics_observe_claim(&m, 0.420, false); /* le 0.6 */
	sbx_serve__metrics_observe_claim(&m, 99, false);    /* +Inf only */
	m.cold_starts = 2;
	m.finished[SBX_RUN_PASS] = 3;
	m.finished[SBX_RUN_TIMEOUT] = 1;
	m.live = 2;
	m.engine_errors = 1;
	t = sbx_serve__metrics_text(&m, g, 1, eg, 2);
	ck_assert_ptr_nonnull(t);
	ck_assert(has_line(t, "sandboxctl_serve_engine_episodes{engine=\"default\"} 2"));
	ck_assert(has_line(t, "sandboxctl_serve_engine_warm{engine=\"default\"} 1"));
	ck_assert(has_line(t, "sandboxctl_serve_engine_drained{engine=\"default\"} 0"));
	ck_assert(has_line(t, "sandboxctl_serve_engine_drained{engine=\"unix:///tmp/d2.sock\"} 1"));
	ck_assert(has_line(
		t, "sandboxctl_serve_pool_size{image=\"sandboxctl/sandbox-slim:latest\"} 1"));
	ck_assert(has_line(
		t, "sandboxctl_serve_pool_target{image=\"sandboxctl/sandbox-slim:latest\"} 2"));
	ck_assert(has_line(t, "sandboxctl_serve_claims_total{kind=\"warm\"} 2"));
	ck_assert(has_line(t, "sandboxctl_serve_claims_total{kind=\"cold\"} 2"));
	ck_assert(has_line(t, "sandboxctl_serve_cold_starts_total 2"));
	/* Cumulative buckets, then +Inf = count. */
	ck_assert(has_line(t, "sandboxctl_serve_claim_seconds_bucket{le=\"0.01\"} 0"));
	ck_assert(has_line(t, "sandboxctl_serve_claim_seconds_bucket{le=\"0.025\"} 2"));
	ck_assert(has_line(t, "sandboxctl_serve_claim_seconds_bucket{le=\"0.4\"} 2"));
	ck_assert(has_line(t, "sandboxctl_serve_claim_seconds_bucket{le=\"0.6\"} 3"));
	ck_assert(has_line(t, "sandboxctl_serve_claim_seconds_bucket{le=\"10\"} 3"));
	ck_assert(has_line(t, "sandboxctl_serve_claim_seconds_bucket{le=\"+Inf\"} 4"));
	ck_assert(has_line(t, "sandboxctl_serve_claim_seconds_count 4"));
	ck_assert(has_line(t, "sandboxctl_serve_claim_seconds_sum 99.452000"));
	ck_assert(has_line(t, "sandboxctl_serve_episodes 2"));
	ck_assert(has_line(t, "sandboxctl_serve_episodes_finished_total{status=\"pass\"} 3"));
	ck_assert(has_line(t, "sandboxctl_serve_episodes_finished_total{status=\"timeout\"} 1"));
	ck_assert(has_line(t, "sandboxctl_serve_engine_errors_total 1"));
	ck_assert(has_line(t, "# TYPE sandboxctl_serve_claim_seconds histogram"));
	ck_assert(has_line(t, "# TYPE sandboxctl_serve_claims_total counter"));
	/* Every line is a comment or "name[{labels}] value". */
	for (char *line = t, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		ck_assert(line[0] == '#' || strncmp(line, "sandboxctl_serve_", 17) == 0);
		ck_assert(memchr(line, ' ', (size_t)(nl - line)));
	}
	free(t);
}
END_TEST

START_TEST(metrics_label_escaped)
{
	serve_metrics m = {0};
	serve_pool_gauge g[] = {{"we\"ird\\img", 0, 1, 0}};
	char *t = sbx_serve__metrics_text(&m, g, 1, NULL, 0);

	ck_assert(has_line(t, "sandboxctl_serve_pool_size{image=\"we\\\"ird\\\\img\"} 0"));
	free(t);
}
END_TEST

START_TEST(error_json)
{
	char *t = sbx_serve__error_json("no \"such\" episode");

	ck_assert_str_eq(t, "{\"error\":\"no \\\"such\\\" episode\"}");
	free(t);
}
END_TEST

/* The frames an OpenEnv session answers before any episode: no engine needed. */
static char *openenv_answer(openenv_session *os, const char *msg, bool *close)
{
	char *reply = NULL;

	sbx_serve__openenv_message(os, msg, strlen(msg), &reply, close);
	return reply;
}

START_TEST(openenv_frames)
{
	static const struct {
		const char *msg, *want;
	} cases[] = {
		{"not json", "\"code\":\"INVALID_JSON\""},
		{"[1,2]", "\"code\":\"INVALID_JSON\""},
		{"{\"type\":\"fly\"}", "\"code\":\"UNKNOWN_TYPE\""},
		{"{}", "\"code\":\"UNKNOWN_TYPE\""},
		{"{\"type\":\"step\",\"data\":7}", "\"code\":\"VALIDATION_ERROR\""},
		{"{\"type\":\"step\",\"data\":{\"type\":\"list_tools\"}}",
		 "no episode; send reset first"},
		{"{\"type\":\"reset\",\"data\":[1]}", "\"code\":\"VALIDATION_ERROR\""},
		{"{\"type\":\"mcp\",\"data\":{}}", "\"code\":\"VALIDATION_ERROR\""},
		{"{\"type\":\"state\"}",
		 "{\"type\":\"state\",\"data\":{\"episode_id\":null,\"step_count\":0}}"},
	};
	openenv_session *os = sbx_serve__openenv_session_new(NULL, "banking_reserve");
	bool close;
	char *r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = openenv_answer(os, cases[i].msg, &close);
		ck_assert_msg(r && strstr(r, cases[i].want), "%s -> %s", cases[i].msg, r);
		ck_assert(!close);
		free(r);
	}
	r = openenv_answer(os, "{\"type\":\"close\"}", &close);
	ck_assert(!r && close);
	sbx_serve__openenv_session_free(os);
}
END_TEST

START_TEST(openenv_error_escaped)
{
	char *t = sbx_serve__openenv_error("EXECUTION_ERROR", "tool '%s'", "a\"b\n");

	ck_assert_str_eq(t, "{\"type\":\"error\",\"data\":{\"message\":\"tool 'a\\\"b\\n'\","
			    "\"code\":\"EXECUTION_ERROR\"}}");
	free(t);
}
END_TEST

static void add_cases(Suite *s)
{
	SBX_TEST_CASE(s, "api", NULL, NULL, 0, routes, routes_refused, sandbox_routes,
		      sandbox_body_caps, token_in_path_or_bearer, token_refused, create_valid,
		      create_invalid, create_limits, error_json);

	SBX_TEST_CASE(s, "metrics", NULL, NULL, 0, metrics_text, metrics_label_escaped);
	SBX_TEST_CASE(s, "openenv", NULL, NULL, 0, openenv_frames, openenv_error_escaped);
}

SBX_TEST_MAIN("serve", add_cases)
