/* SPDX-License-Identifier: MIT */
/*
 * sbx_limits: an episode's limits, resolved from their sources (flag >
 * task > default), compared as a sandbox's shape, and written to (and read
 * from) JSON under the keys each document gives them.
 */
#include <stdio.h>
#include <string.h>

#include "sbx/json.h"
#include "sbx/task.h"

void sbx_limits_resolve(sbx_limits *out, const sbx_limits *flag, const sbx_limits *task,
			const sbx_limits *defaults)
{
	const sbx_limits none = {0};
	const sbx_limits *src[3] = {flag ? flag : &none, task ? task : &none,
				    defaults ? defaults : &none};
	sbx_limits l = {0};

	for (int i = 2; i >= 0; i--) {
		const sbx_limits *s = src[i];

		if (s->timeout_s)
			l.timeout_s = s->timeout_s;
		if (s->memory)
			l.memory = s->memory;
		if (s->cpus > 0)
			l.cpus = s->cpus;
		if (s->pids)
			l.pids = s->pids;
		if (s->runtime[0])
			memcpy(l.runtime, s->runtime, sizeof(l.runtime));
		if (s->grace_s)
			l.grace_s = s->grace_s;
		if (s->engine_seccomp)
			l.engine_seccomp = true;
	}
	*out = l;
}

bool sbx_limits_same_sandbox(const sbx_limits *a, const sbx_limits *b)
{
	return a->memory == b->memory && a->cpus == b->cpus && a->pids == b->pids &&
	       strcmp(a->runtime, b->runtime) == 0 && a->engine_seccomp == b->engine_seccomp;
}

void sbx_limits_set_runtime(sbx_limits *l, const char *runtime)
{
	snprintf(l->runtime, sizeof(l->runtime), "%s", runtime ? runtime : "");
}

void sbx_limits_json_write(cJSON *o, const sbx_limits *l, const sbx_limits_key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *k = keys[i].key;

		switch (keys[i].field) {
		case SBX_LIMITS_TIMEOUT:
			cJSON_AddNumberToObject(o, k, l->timeout_s);
			break;
		case SBX_LIMITS_MEMORY:
			cJSON_AddNumberToObject(o, k, (double)l->memory);
			break;
		case SBX_LIMITS_CPUS:
			cJSON_AddNumberToObject(o, k, l->cpus);
			break;
		case SBX_LIMITS_PIDS:
			cJSON_AddNumberToObject(o, k, l->pids);
			break;
		case SBX_LIMITS_RUNTIME:
			if (l->runtime[0])
				cJSON_AddStringToObject(o, k, l->runtime);
			else
				cJSON_AddNullToObject(o, k);
			break;
		case SBX_LIMITS_GRACE:
			cJSON_AddNumberToObject(o, k, l->grace_s);
			break;
		case SBX_LIMITS_SECCOMP:
			cJSON_AddStringToObject(o, k, l->engine_seccomp ? "default" : "sandbox");
			break;
		}
	}
}

/* A whole count in 0..max at v, into *out; false when it is not one. */
static bool read_count(const cJSON *v, double max, uint32_t *out)
{
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > max ||
	    v->valuedouble != (double)(unsigned)v->valuedouble)
		return false;
	*out = (uint32_t)v->valuedouble;
	return true;
}

/* One field from v (present); false when it is out of range. */
static bool read_field(const cJSON *v, sbx_limits_field f, sbx_limits *l)
{
	double d = cJSON_IsNumber(v) ? v->valuedouble : 0;

	switch (f) {
	case SBX_LIMITS_TIMEOUT:
		return read_count(v, 7 * 24 * 3600, &l->timeout_s);
	case SBX_LIMITS_MEMORY:
		if (d < 0 || d > 1e15)
			return false;
		l->memory = (uint64_t)d;
		return true;
	case SBX_LIMITS_CPUS:
		l->cpus = d;
		return d >= 0 && d <= 1024;
	case SBX_LIMITS_PIDS:
		return read_count(v, 1 << 22, &l->pids);
	case SBX_LIMITS_RUNTIME:
		sbx_limits_set_runtime(l, cJSON_IsString(v) ? v->valuestring : NULL);
		return true;
	case SBX_LIMITS_GRACE:
		return read_count(v, 3600, &l->grace_s);
	case SBX_LIMITS_SECCOMP:
		l->engine_seccomp = cJSON_IsString(v) && strcmp(v->valuestring, "default") == 0;
		return true;
	}
	return false;
}

unsigned sbx_limits_json_read(const cJSON *o, const sbx_limits_key *keys, size_t n, sbx_limits *l)
{
	unsigned bad = 0;

	for (size_t i = 0; i < n; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[i].key);

		if (v && !read_field(v, keys[i].field, l))
			bad |= 1u << keys[i].field;
	}
	return bad;
}
