/* SPDX-License-Identifier: MIT */
/* The engine's JSON-lines progress stream (build, import): lines, callbacks, errors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "docker-internal.h"
#include "sbx/cleanup.h"
#include "sbx/log.h"

void sbx_docker__lines_init(docker_lines *l, sbx_docker_progress_fn fn, void *payload)
{
	memset(l, 0, sizeof(*l));
	sbx_buf_init(&l->line, DOCKER_MAX_LINE);
	l->fn = fn;
	l->payload = payload;
}

void sbx_docker__lines_done(docker_lines *l)
{
	sbx_buf_free(&l->line);
	sbx_free_all(l->aux_id, l->last_status, l->error);
	l->aux_id = l->last_status = l->error = NULL;
}

static void replace(char **slot, const char *v)
{
	char *copy = strdup(v);

	if (copy) {
		free(*slot);
		*slot = copy;
	}
}

static int one_line(docker_lines *l, const char *text, size_t len)
{
	_cleanup_json_ cJSON *j = NULL;
	sbx_docker_progress p = {.raw = text};
	const char *e;

	while (len > 0 && (text[len - 1] == '\r' || text[len - 1] == ' '))
		len--;
	if (len == 0)
		return 0;
	if (sbx_json_parse(text, len, &j, NULL) < 0) {
		sbx_log_debug("docker: progress line is not JSON, ignored");
		return 0;
	}
	/* errorDetail.message is the precise one; "error" the older duplicate. */
	e = sbx_json_get_string(sbx_json_get(j, "errorDetail"), "message", NULL);
	if (!e)
		e = sbx_json_get_string(j, "error", NULL);
	if (e) {
		if (!l->error)
			replace(&l->error, e);
		return 0;
	}
	p.stream = sbx_json_get_string(j, "stream", NULL);
	p.status = sbx_json_get_string(j, "status", NULL);
	p.id = sbx_json_get_string(j, "id", NULL);
	p.aux_id = sbx_json_get_string(sbx_json_get(j, "aux"), "ID", NULL);
	if (p.aux_id)
		replace(&l->aux_id, p.aux_id);
	if (p.status)
		replace(&l->last_status, p.status);
	return l->fn ? l->fn(&p, l->payload) : 0;
}

int sbx_docker__lines_feed(docker_lines *l, const char *p, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;
		int r;

		if (sbx_buf_append(&l->line, p, take) < 0) {
			/* An endless line: drop it rather than fail the build. */
			sbx_buf_init(&l->line, DOCKER_MAX_LINE);
			sbx_log_warning("docker: progress line longer than %u bytes dropped",
					DOCKER_MAX_LINE);
		}
		if (!nl)
			return 0;
		r = one_line(l, sbx_buf_str(&l->line), l->line.len);
		sbx_buf_reset(&l->line);
		if (r < 0)
			return r;
		p = nl + 1;
		n -= take + 1;
	}
	return 0;
}

int sbx_docker__lines_finish(docker_lines *l)
{
	int r = one_line(l, sbx_buf_str(&l->line), l->line.len);

	sbx_buf_reset(&l->line);
	return r;
}
