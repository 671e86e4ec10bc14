/* SPDX-License-Identifier: MIT */
/* The agents a run can start: a host command, the demo and model agents, the oracle. */
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

/* A built-in agent's program ("sandbox-demo-agent", "sandbox-llm-agent"): next to
 * sandboxctl in the build (cmd/agents/), in libexec when installed, then in PATH. */
static char *find_builtin_agent(const sbx_run *run, const char *prog)
{
	char self[PATH_MAX];
	ssize_t n;
	static const char *const rel[] = {"/agents/", "/", "/../libexec/sandboxctl/"};

	if (run->o.demo_agent_path && strcmp(prog, "sandbox-demo-agent") == 0)
		return strdup(run->o.demo_agent_path);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		dirname(self);
		for (size_t i = 0; i < SBX_ELEMENTSOF(rel); i++) {
			char *p;

			if (asprintf(&p, "%s%s%s", self, rel[i], prog) < 0)
				return NULL;
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
	}
	for (const char *d = getenv("PATH"); d && *d;) {
		size_t len = strcspn(d, ":");
		char *p;

		if (len && asprintf(&p, "%.*s/%s", (int)len, d, prog) >= 0) {
			if (access(p, X_OK) == 0)
				return p;
			free(p);
		}
		d += len + (d[len] == ':');
	}
	errno = ENOENT;
	return NULL;
}

/* "demo" and "llm [ARGS]" are built in; the program that runs them, or NULL. */
static const char *builtin_program(const char *agent)
{
	if (strcmp(agent, "demo") == 0)
		return "sandbox-demo-agent";
	if (strcmp(agent, "llm") == 0 || strncmp(agent, "llm ", 4) == 0)
		return "sandbox-llm-agent";
	return NULL;
}

/* argv for a built-in agent: the program, then the agent string's words after
 * its name (`llm --model X` → sandbox-llm-agent --model X). Frees with free(). */
static char **builtin_argv(char *prog_path, const char *agent, char **words)
{
	size_t n = 0;
	char **argv, *save = NULL;

	*words = strdup(agent);
	argv = calloc(strlen(agent) / 2 + 3, sizeof(*argv));
	if (!*words || !argv) {
		free(argv);
		return NULL;
	}
	argv[n++] = prog_path;
	strtok_r(*words, " \t", &save); /* the agent's name */
	for (char *w; (w = strtok_r(NULL, " \t", &save));)
		argv[n++] = w;
	argv[n] = NULL;
	return argv;
}

int sbx_run__check_agent(const sbx_run *run, sbx_error *err)
{
	_cleanup_free_ char *path = NULL;
	const char *prog = run->o.agent ? builtin_program(run->o.agent) : NULL;

	if (!prog)
		return 0;
	path = find_builtin_agent(run, prog);
	if (!path)
		return sbx_error_set(err, errno == ENOMEM ? -ENOMEM : -ENOENT,
				     "--agent %s: %s not found next to sandboxctl or in PATH "
				     "(build it: meson compile %s)",
				     run->o.agent, prog, prog);
	return 0;
}

int sbx_run__start_agent(sbx_run *run, sbx_error *err)
{
	_cleanup_free_ char *mcp = NULL, *rest = NULL, *sse = NULL, *prompt = NULL, *rid = NULL,
			    *task = NULL, *outs = NULL, *deadline = NULL, *log = NULL, *prog = NULL,
			    *outlist = NULL, *rundir = NULL, *words = NULL, *sock = NULL;
	_cleanup_free_ char **builtin = NULL;
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
	    asprintf(&rundir, "SANDBOX_RUN_DIR=%s", run->res.run_dir) < 0 ||
	    (run->unix_socket && !run->res.published &&
	     asprintf(&sock, "SANDBOX_UNIX_SOCKET=%s", run->unix_socket) < 0) ||
	    asprintf(&log, "%s/agent.log", run->res.run_dir) < 0)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	{
		char *env[] = {mcp,  rest,     sse,    prompt, rid, task,
			       outs, deadline, rundir, sock,   NULL};
		const char *name = builtin_program(agent);

		if (name) {
			prog = find_builtin_agent(run, name);
			if (!prog)
				return sbx_error_set(err, -ENOENT, "%s not found", name);
			builtin = builtin_argv(prog, agent, &words);
			if (!builtin)
				return sbx_error_set(err, -ENOMEM, "out of memory");
		} else {
			argv[0] = "/bin/sh";
			argv[1] = "-c";
			argv[2] = (char *)agent;
			argv[3] = NULL;
		}
		r = sbx_agent__spawn(&run->agent, builtin ? builtin : argv, env, log,
				     !run->o.quiet_agent, err);
	}
	if (r >= 0)
		run->agent_started = true;
	return r;
}

bool sbx_run__is_oracle(const sbx_run *run)
{
	return run->o.agent && strcmp(run->o.agent, "oracle") == 0;
}

int sbx_run__oracle_agent(sbx_run *run, sbx_error *err)
{
	sbx_relay_response resp = {0};
	/* Normally the copy-in already placed the oracle's files with the task's. */
	int r = run->oracle_in ? 0 : sbx_run__copy_files_in(run, false, true, err);

	if (r < 0)
		return r;
	/* The host's own path (the agent's POST /task/complete does the same); recorded,
	 * as the oracle plays the agent. A 404 is an older image: the reference's path. */
	r = sbx_relay_request(run->relay, "POST", "/control/complete", NULL, "{}", 2, true, 30000,
			      &resp, err);
	if (r >= 0 && resp.status == 404) {
		sbx_relay_response_free(&resp);
		run->status_api = SBX_STATUS_V1;
		r = sbx_relay_request(run->relay, "POST", "/task/complete", NULL, "{}", 2, true,
				      30000, &resp, err);
	}
	if (r >= 0 && resp.status / 100 != 2)
		r = sbx_error_set(err, -EPROTO, "POST /control/complete: HTTP %d: %.200s",
				  resp.status, resp.body ? resp.body : "");
	sbx_relay_response_free(&resp);
	return r;
}
