/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "sandboxes.h"
#include "sbx/labels.h"

int cli_sandboxes_list(const char *cmd, const char *run_id, sbx_docker **d_out,
		       sbx_docker_container **out, size_t *n_out)
{
	_cleanup_(sbx_docker_freep) sbx_docker *d = NULL;
	_cleanup_free_ char *filter = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const char *filters[2] = {SBX_LABEL_RUN_ID, NULL};
	int r;

	if (run_id) {
		if (asprintf(&filter, "%s=%s", SBX_LABEL_RUN_ID, run_id) < 0) {
			filter = NULL;
			cli_error("%s: out of memory", cmd);
			return EXIT_ENGINE;
		}
		filters[0] = filter;
	}
	r = sbx_docker_open(&d, NULL, &err);
	if (r == 0)
		r = sbx_docker_container_list(d, filters, out, n_out, &err);
	if (r < 0) {
		cli_error("%s: %s", cmd, err.msg);
		return EXIT_ENGINE;
	}
	*d_out = TAKE_PTR(d);
	return EXIT_PASS;
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
