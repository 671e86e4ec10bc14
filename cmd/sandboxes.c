/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "sandboxes.h"
#include "sbx/labels.h"

int cli_sandboxes_list(const char *cmd, const char *run_id, cli_sandboxes *out)
{
	_cleanup_free_ char *filter = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const char *filters[2] = {SBX_LABEL_RUN_ID, NULL};
	int r;

	if (run_id) {
		if (asprintf(&filter, "%s=%s", SBX_LABEL_RUN_ID, run_id) < 0) {
			filter = NULL;
			cli_error("%s: out of memory", cmd);
			return -EXIT_ENGINE;
		}
		filters[0] = filter;
	}
	r = sbx_docker_open(&out->engine, NULL, &err);
	if (r == 0)
		r = sbx_docker_container_list(out->engine, filters, &out->v, &out->n, &err);
	if (r < 0) {
		cli_error("%s: %s", cmd, err.msg);
		return -EXIT_ENGINE;
	}
	return 1;
}

void cli_sandboxes_clear(cli_sandboxes *s)
{
	sbx_docker_container_list_free(s->v, s->n);
	sbx_docker_free(s->engine);
	*s = (cli_sandboxes){0};
}

long long cli_sandbox_created(const sbx_docker_container *c)
{
	const char *v = sbx_docker_label_get(c->labels, c->n_labels, SBX_LABEL_CREATED);
	char *end;
	long long t;

	if (v) {
		t = strtoll(v, &end, 10);
		if (*v && !*end && t > 0)
			return t;
	}
	return c->created;
}
