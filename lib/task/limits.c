/* SPDX-License-Identifier: MIT */
/*
 * sbx_limits: an episode's limits, resolved from their sources (flag >
 * task > default) and compared as a sandbox's shape.
 */
#include <stdio.h>
#include <string.h>

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
