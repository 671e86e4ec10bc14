/* SPDX-License-Identifier: MIT */
/* The agents a run can start: a host command, the demo agent, the oracle. */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run-internal.h"
#include "sbx/cleanup.h"

static char *find_demo_agent(const sbx_run *run)
{
	char self[PATH_MAX];
	ssize_t n;
	static const char *const rel[] = {"/agents/sandbox-demo-agent", "/sandbox-demo-agent",
					  "/../libexec/sandboxctl/sandbox-demo-agent"};

	if (run->o.demo_agent_path)
		return strdup(run->o.demo_agent_path);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		dirname(self);
		for (size_t i = 0; i < SBX_ELEMENTSOF(rel); i++) {
			char *p;

			if (asprintf(&p, "%s%s", self, rel[i]) < 0)
				return NULL;
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	/* Then PATH. */
	for (const char *d = getenv("PATH"); d && *d;) {
		size_t len = strcspn(d, ":");
		char *p;

		if (len && asprintf(&p, "%.*s/sandbox-demo-agent", (int)len, d) >= 0) {
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
		d += len + (d[len] == ':');
	}
	errno = ENOENT;
	return NULL;
}

int sbx_run__check_agent(const sbx_run *run, sbx_error *err)
{
	_cleanup_free_ char *demo = NULL;

	if (!run->o.agent || strcmp(run->o.agent, "demo") != 0)
		return 0;
	demo = find_demo_agent(run);
	if (!demo)
		return sbx_error_set(
			err, errno == ENOMEM ? -ENOMEM : -ENOENT,
			"--agent demo: sandbox-demo-agent not found next to sandboxctl "
			"or in PATH (build it: meson compile sandbox-demo-agent)");
	return 0;
}

int sbx_run__start_agent(sbx_run *run, sbx_error *err)
{
	_cleanup_free_ char *mcp = NULL, *rest = NULL, *sse = NULL, *prompt = NULL, *rid = NULL,
			    *task = NULL, *outs = NULL, *deadline = NULL, *log = NULL, *demo = NULL,
			    *outlist = NULL;
	const char *agent = run->o.agent;
	char *argv[4];
	int r;

	for (size_t i = 0; i < run->task->n_outputs; i++) {
		char *n;
		if (asprintf(&n, "%s%s%s", outlist ? outlist : "", outlist ? "," : "",
			     run->task->outputs[i]) < 0)
			return sbx_error_set(err, -ENOMEM, "out of memory");
		free(outlist);
		outlist = n;
	}
	if (asprintf(&mcp, "SANDBOX_MCP_URL=%s/mcp", run->url) < 0 ||
	    asprintf(&rest, "SANDBOX_REST_URL=%s", run->url) < 0 ||
	    asprintf(&sse, "SANDBOX_SSE_URL=%s/mcp/sse", run->url) < 0 ||
	    asprintf(&prompt, "SANDBOX_TASK_PROMPT=%s",
		     run->task->prompt ? run->task->prompt : "") < 0 ||
	    asprintf(&rid, "SANDBOX_RUN_ID=%s", run->res.run_id) < 0 ||
	    asprintf(&task, "SANDBOX_TASK=%s", run->task->id) < 0 ||
	    asprintf(&outs, "SANDBOX_OUTPUTS=%s", outlist ? outlist : "") < 0 ||
	    asprintf(&deadline, "SANDBOX_DEADLINE=%" PRId64, run->res.deadline) < 0 ||
	    asprintf(&log, "%s/agent.log", run->res.run_dir) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	{
		char *env[] = {mcp, rest, sse, prompt, rid, task, outs, deadline, NULL};

		if (strcmp(agent, "demo") == 0) {
			demo = find_demo_agent(run);
			if (!demo)
				return sbx_error_set(err, -ENOENT, "sandbox-demo-agent not found");
			argv[0] = demo;
			argv[1] = NULL;
		} else {
			argv[0] = "/bin/sh";
			argv[1] = "-c";
			argv[2] = (char *)agent;
			argv[3] = NULL;
		}
		r = sbx_agent__spawn(&run->agent, argv, env, log, !run->o.quiet_agent, err);
	}
	if (r >= 0)
		run->agent_started = true;
	return r;
}

int sbx_run__oracle_agent(sbx_run *run, sbx_error *err)
{
	sbx_relay_response resp = {0};
	int r = sbx_run__copy_files_in(run, true, err);

	if (r < 0)
		return r;
	r = sbx_relay_request(run->relay, "POST", "/task/complete", NULL, "{}", 2, true, 30000,
			      &resp, err);
	if (r >= 0 && resp.status / 100 != 2)
		r = sbx_error_set(err, -EPROTO, "POST /task/complete: HTTP %d: %.200s", resp.status,
				  resp.body ? resp.body : "");
	sbx_relay_response_free(&resp);
	return r;
}
