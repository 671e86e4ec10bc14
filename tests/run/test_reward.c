/* SPDX-License-Identifier: MIT */
/* The verifier's answer read as hostile input (lib/run/reward.c). */
#include "check_main.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run-internal.h"

/* The framed answer of verify.c's script, for json/txt (NULL: absent) and a tail. */
static size_t answer(char *buf, size_t cap, const char *json, size_t jl, const char *txt,
		     const char *tail)
{
	size_t n = (size_t)snprintf(buf, cap, "exit 3\nms 42\nreward.json %ld\n",
				    json ? (long)jl : -1L);

	if (json) {
		memcpy(buf + n, json, jl);
		n += jl;
	}
	n += (size_t)snprintf(buf + n, cap - n, "reward.txt %ld\n%s", txt ? (long)strlen(txt) : -1L,
			      txt ? txt : "");
	n += (size_t)snprintf(buf + n, cap - n, "tail %zu\n%s", strlen(tail), tail);
	return n;
}

static void read_one(sbx_run_verifier *v, const char *json, const char *txt)
{
	static char buf[1 << 17];
	size_t n = answer(buf, sizeof(buf), json, json ? strlen(json) : 0, txt, "out\n");

	memset(v, 0, sizeof(*v));
	sbx_run__verifier_read(v, buf, n);
}

static void clear(sbx_run_verifier *v)
{
	free(v->rewards_json);
	free(v->output_tail);
	free(v->error);
}

START_TEST(test_precedence)
{
	sbx_run_verifier v;

	read_one(&v, "{\"reward\": 0.25, \"tests\": 4}", "1");
	ck_assert(v.rewarded);
	ck_assert_double_eq(v.reward, 0.25);
	ck_assert_str_eq(v.reward_source, "reward.json");
	ck_assert_str_eq(v.rewards_json, "{\"reward\":0.25,\"tests\":4}");
	ck_assert_int_eq(v.exit_code, 3);
	ck_assert_double_eq(v.test_ms, 42);
	ck_assert_str_eq(v.output_tail, "out\n");
	clear(&v);
	read_one(&v, NULL, " 1\n");
	ck_assert(v.rewarded);
	ck_assert_double_eq(v.reward, 1);
	ck_assert_str_eq(v.reward_source, "reward.txt");
	clear(&v);
	read_one(&v, NULL, NULL);
	ck_assert(!v.rewarded);
	ck_assert_str_eq(v.error,
			 "test.sh wrote neither /logs/verifier/reward.json nor reward.txt");
	clear(&v);
}
END_TEST

static const struct {
	const char *json, *txt, *error;
} hostile[] = {
	{"{\"reward\": NaN}", NULL, "reward.json is not a JSON object"},
	{"{\"reward\": 1e999}", NULL, "reward.json holds a value that is not a finite number"},
	{"{\"reward\": \"1\"}", NULL, "reward.json holds a value that is not a finite number"},
	{"{\"reward\": {\"x\": 1}}", NULL, "reward.json holds a value that is not a finite number"},
	{"{\"score\": 1}", NULL, "reward.json has no \"reward\" key"},
	{"[1]", NULL, "reward.json is not a JSON object"},
	{"{\"reward\": 1", "1", "reward.json is not a JSON object"}, /* no fallback to txt */
	{NULL, "nan", "reward.txt does not hold one finite number"},
	{NULL, "inf", "reward.txt does not hold one finite number"},
	{NULL, "1 2", "reward.txt does not hold one finite number"},
	{NULL, "one", "reward.txt does not hold one finite number"},
	{NULL, "", "reward.txt does not hold one finite number"},
	{NULL, "1111111111111111111111111111111111111111111111111111111111111111111111",
	 "reward.txt is over 64 bytes"},
};

START_TEST(test_hostile)
{
	sbx_run_verifier v;

	read_one(&v, hostile[_i].json, hostile[_i].txt);
	ck_assert(!v.rewarded);
	ck_assert_ptr_nonnull(v.error);
	ck_assert_str_eq(v.error, hostile[_i].error);
	clear(&v);
}
END_TEST

START_TEST(test_caps_and_garbage)
{
	static char buf[1 << 18], json[70000];
	sbx_run_verifier v;
	size_t n;
	int k;

	/* 33 keys. */
	k = snprintf(json, sizeof(json), "{\"reward\": 1");
	for (int i = 0; i < 32; i++)
		k += snprintf(json + k, sizeof(json) - (size_t)k, ", \"k%d\": %d", i, i);
	snprintf(json + k, sizeof(json) - (size_t)k, "}");
	read_one(&v, json, NULL);
	ck_assert_str_eq(v.error, "reward.json has more than 32 keys");
	clear(&v);
	/* Over 64 KiB (the script reads 64 KiB + 1). */
	memset(json, ' ', 65537);
	memcpy(json, "{\"reward\": 1}", 13);
	memset(&v, 0, sizeof(v));
	n = answer(buf, sizeof(buf), json, 65537, NULL, "");
	sbx_run__verifier_read(&v, buf, n);
	ck_assert_str_eq(v.error, "reward.json is over 64 KiB");
	clear(&v);
	/* A NUL inside reward.txt, a length past the end, garbage. */
	memset(&v, 0, sizeof(v));
	n = answer(buf, sizeof(buf), NULL, 0, "1", "");
	memcpy(strstr(buf, "reward.txt 1\n") + 13, "\0", 1);
	sbx_run__verifier_read(&v, buf, n);
	ck_assert_str_eq(v.error, "reward.txt holds a NUL byte");
	clear(&v);
	memset(&v, 0, sizeof(v));
	sbx_run__verifier_read(&v, "exit 0\nms 1\nreward.json 999\n{}", 30);
	ck_assert_str_eq(v.error, "the verifier's answer was garbled");
	clear(&v);
	memset(&v, 0, sizeof(v));
	sbx_run__verifier_read(&v, "exit 0 ms 1", 11);
	ck_assert_str_eq(v.error, "the verifier's answer was garbled");
	clear(&v);
	memset(&v, 0, sizeof(v));
	sbx_run__verifier_read(&v, NULL, 0);
	ck_assert(!v.rewarded && v.error);
	clear(&v);
}
END_TEST

static void add_cases(Suite *s)
{
	TCase *tc =
		SBX_TEST_CASE(s, "reward", NULL, NULL, 0, test_precedence, test_caps_and_garbage);

	SBX_TEST_TABLE(tc, test_hostile, hostile);
}

SBX_TEST_MAIN("reward", add_cases)
