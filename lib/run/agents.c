/* SPDX-License-Identifier: MIT */
/* The agents a run can start: a host command, the demo and model agents, the oracle. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run-internal.h"
#include "sbx/cleanup.h"
#include "sbx/suggest.h"

extern char **environ;

/* A built-in agent's program ("sandbox-demo-agent", "sandbox-llm-agent"): next to
 * sandboxctl in the build (cmd/agents/), in libexec when installed, then in PATH. */
static char *find_builtin_agent(const char *demo_agent_path, const char *prog)
{
	char self[PATH_MAX];
	ssize_t n;
	static const char *const rel[] = {"/agents/", "/", "/../libexec/sandboxctl/"};

	if (demo_agent_path && strcmp(prog, "sandbox-demo-agent") == 0)
		return strdup(demo_agent_path);
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
	return sbx_agent__which(prog);
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
	argv = calloc(strlen(agent) / 2 + 4, sizeof(*argv)); /* room for a last option */
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

/*
 * sandbox-llm-agent --check with the agent string's options: the model agent
 * judges its own options (model, api, base URL) before any sandbox exists.
 * Its first stderr line is the error.
 */
static int check_llm(const char *agent, char *prog, sbx_error *err)
{
	_cleanup_free_ char *words = NULL;
	_cleanup_free_ char **argv = builtin_argv(prog, agent, &words);
	posix_spawn_file_actions_t fa;
	char said[1024] = "", *nl;
	size_t len = 0, n = 0;
	int p[2], r, st;
	pid_t pid;

	if (!argv || pipe2(p, O_CLOEXEC) < 0)
		return sbx_error_set(err, -errno ? -errno : -ENOMEM, "--agent %s: %s", agent,
				     strerror(errno ? errno : ENOMEM));
	while (argv[n])
		n++;
	argv[n] = "--check";
	r = posix_spawn_file_actions_init(&fa);
	if (r == 0) {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, p[1], 2);
		r = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	close(p[1]);
	if (r != 0) {
		close(p[0]);
		return sbx_error_set(err, -r, "--agent %s: %s: %s", agent, prog, strerror(r));
	}
	for (;;) {
		char buf[512];
		ssize_t got = read(p[0], buf, sizeof(buf));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		for (ssize_t i = 0; i < got && len + 1 < sizeof(said); i++)
			said[len++] = buf[i];
	}
	close(p[0]);
	said[len] = '\0';
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return sbx_error_set(err, -errno, "--agent %s: %s", agent, strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if ((nl = strchr(said, '\n')))
		*nl = '\0';
	nl = strstr(said, "agent: ");
	return sbx_error_set(err, -EINVAL, "--agent '%s': %s", agent,
			     *said ? (nl ? nl + strlen("agent: ") : said)
				   : "the model agent refused its options");
}

/* Words the shell runs itself: no program to look for. */
static bool shell_word(const char *w, size_t len)
{
	static const char *const own[] = {
		"!",	 "{",	     ".",	 ":",	  "[",	   "alias", "break",  "case",
		"cd",	 "command",  "continue", "echo",  "eval",  "exec",  "exit",   "export",
		"false", "for",	     "getopts",	 "hash",  "if",	   "kill",  "printf", "pwd",
		"read",	 "readonly", "return",	 "set",	  "shift", "test",  "times",  "trap",
		"true",	 "type",     "ulimit",	 "umask", "unset", "until", "wait",   "while",
	};

	/* Quoting, expansions, an assignment, a redirection: the shell's to judge. */
	if (memchr(w, '=', len) || strcspn(w, "$`\"'\\(){};&|<>*?[]~#") < len)
		return true;
	for (size_t i = 0; i < SBX_ELEMENTSOF(own); i++)
		if (strlen(own[i]) == len && memcmp(own[i], w, len) == 0)
			return true;
	return false;
}

int sbx_run_check_agent(const char *agent, const char *demo_agent_path, sbx_error *err)
{
	static const char *const builtins[] = {"oracle", "demo", "llm"};
	_cleanup_free_ char *path = NULL, *word = NULL, *found = NULL;
	const char *prog, *w, *near;
	size_t len;

	if (!agent || strcmp(agent, "oracle") == 0)
		return 0;
	prog = builtin_program(agent);
	if (prog) {
		path = find_builtin_agent(demo_agent_path, prog);
		if (!path)
			return sbx_error_set(
				err, errno == ENOMEM ? -ENOMEM : -ENOENT,
				"--agent %s: %s not found next to sandboxctl or in PATH "
				"(build it: meson compile %s)",
				agent, prog, prog);
		return strcmp(prog, "sandbox-llm-agent") == 0 ? check_llm(agent, path, err) : 0;
	}
	/* A shell command: its first word must be something the shell can run. */
	w = agent + strspn(agent, " \t\n");
	len = strcspn(w, " \t\n");
	if (len == 0)
		return sbx_error_set(err, -EINVAL, "--agent: empty command");
	if (shell_word(w, len))
		return 0;
	word = strndup(w, len);
	if (!word)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	found = sbx_agent__which(word);
	if (found)
		return 0;
	if (errno == ENOMEM)
		return sbx_error_set(err, -ENOMEM, "out of memory");
	if (strchr(word, '/'))
		return sbx_error_set(err, -ENOENT, "--agent '%s': '%s' is not an executable file",
				     agent, word);
	near = sbx_suggest(word, builtins, SBX_ELEMENTSOF(builtins));
	return sbx_error_set(err, -ENOENT,
			     "--agent '%s': '%s' is neither a built-in agent (oracle, demo, llm) "
			     "nor a command in PATH%s%s%s",
			     agent, word, near ? " (did you mean '" : "", near ? near : "",
			     near ? "'?)" : "");
}

int sbx_run__check_agent(const sbx_run *run, sbx_error *err)
{
	return sbx_run_check_agent(run->o.agent, run->o.demo_agent_path, err);
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
			prog = find_builtin_agent(run->o.demo_agent_path, name);
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
	/* Normally the copy-in already placed the oracle's files with the task's. */
	int r = run->task->harbor ? sbx_run__harbor_oracle(run, err)
		: run->oracle_in  ? 0
				  : sbx_run__copy_files_in(run, false, true, err);

	if (r < 0 || run->task->harbor)
		return r;
	return sbx_run__oracle_complete(run, err);
}

int sbx_run__oracle_complete(sbx_run *run, sbx_error *err)
{
	sbx_relay_response resp = {0};
	int r;

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
