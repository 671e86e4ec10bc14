/* SPDX-License-Identifier: MIT */
/*
 * The verifier's answer (verify.c's RUN_TESTS: "exit N", "ms N", then
 * reward.json, reward.txt and the output's tail as "NAME LEN" + LEN bytes),
 * read as hostile input: test.sh and whatever it ran (the agent's code, when
 * tests import it) wrote those files. reward.json must be a flat object of at
 * most SBX_RUN_REWARD_MAX_KEYS finite numbers with "reward"; reward.txt one
 * finite number; both capped. Anything else gives no reward and one line why.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/json.h"

/* The next frame "NAME LEN\n" + LEN bytes of s; LEN -1: absent (*data NULL). */
static bool frame(const char **s, const char *end, const char *name, const char **data, long *len)
{
	size_t n = strlen(name);
	char *e;

	if ((size_t)(end - *s) < n + 2 || memcmp(*s, name, n) != 0 || (*s)[n] != ' ')
		return false;
	*len = strtol(*s + n + 1, &e, 10);
	if (*e != '\n' || *len < -1 || *len > end - e - 1)
		return false;
	*data = *len >= 0 ? e + 1 : NULL;
	*s = e + 1 + (*len > 0 ? *len : 0);
	return true;
}

/* reward.json: a flat object of finite numbers with "reward". NULL, or why not. */
static const char *parse_reward_json(sbx_run_verifier *v, const char *s, long len)
{
	_cleanup_(cJSON_Deletep) cJSON *j = NULL;
	const cJSON *it, *reward;
	int n = 0;

	if (len > SBX_RUN_REWARD_MAX_BYTES)
		return "reward.json is over 64 KiB";
	if (sbx_json_parse(s, (size_t)len, &j, NULL) < 0 || !cJSON_IsObject(j))
		return "reward.json is not a JSON object";
	cJSON_ArrayForEach (it, j) {
		if (++n > SBX_RUN_REWARD_MAX_KEYS)
			return "reward.json has more than 32 keys";
		if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
			return "reward.json holds a value that is not a finite number";
		if (!it->string || strlen(it->string) > 64)
			return "reward.json has a key over 64 bytes";
	}
	reward = cJSON_GetObjectItemCaseSensitive(j, "reward");
	if (!reward)
		return "reward.json has no \"reward\" key";
	v->reward = reward->valuedouble;
	v->rewards_json = cJSON_PrintUnformatted(j);
	snprintf(v->reward_source, sizeof(v->reward_source), "reward.json");
	return NULL;
}

static const char *parse_reward_txt(sbx_run_verifier *v, const char *s, long len)
{
	char buf[80], *end;
	double d;

	if (len > 64)
		return "reward.txt is over 64 bytes";
	memcpy(buf, s, (size_t)len);
	buf[len] = '\0';
	if (strlen(buf) != (size_t)len)
		return "reward.txt holds a NUL byte";
	d = strtod(buf, &end);
	while (*end == ' ' || *end == '\n' || *end == '\t' || *end == '\r')
		end++;
	if (end == buf || *end || !isfinite(d))
		return "reward.txt does not hold one finite number";
	v->reward = d;
	snprintf(v->reward_source, sizeof(v->reward_source), "reward.txt");
	return NULL;
}

void sbx_run__verifier_read(sbx_run_verifier *v, const char *out, size_t len)
{
	const char *s = out ? out : "", *end = s + len, *json, *txt, *tail;
	long jl, tl, ll, ms;
	const char *why = NULL, *nl = memchr(s, '\n', len);

	nl = nl ? memchr(nl + 1, '\n', (size_t)(end - nl - 1)) : NULL;
	if (!nl || sscanf(s, "exit %d\nms %ld\n", &v->exit_code, &ms) != 2) {
		v->error = strdup("the verifier's answer was garbled");
		return;
	}
	s = nl + 1;
	if (!frame(&s, end, "reward.json", &json, &jl) ||
	    !frame(&s, end, "reward.txt", &txt, &tl) || !frame(&s, end, "tail", &tail, &ll)) {
		v->error = strdup("the verifier's answer was garbled");
		return;
	}
	v->test_ms = (double)ms;
	v->output_tail = ll > 0 ? strndup(tail, (size_t)ll) : NULL;
	if (json)
		why = parse_reward_json(v, json, jl);
	else if (txt)
		why = parse_reward_txt(v, txt, tl);
	else
		why = "test.sh wrote neither /logs/verifier/reward.json nor reward.txt";
	if (why)
		v->error = strdup(why);
	else
		v->rewarded = true;
}
