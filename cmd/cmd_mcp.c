/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl mcp --task NAME: the task's sandbox as an MCP stdio server, for
 * desktop clients that start servers from their config. stdin/stdout carry
 * JSON-RPC lines only; everything else goes to stderr. When the client
 * closes stdin, the task is completed or the deadline passes, the outputs are
 * collected and graded, the sandbox removed and result.json written, as for
 * `run`.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_run.h"
#include "sbx/run.h"

/* The options it takes, as 'sandboxctl run' does: --help lists them, run's tells what they do. */
static const cli_option shared[] = {
	CMD_RUN_OPT_TASK(),    CMD_RUN_OPT_TIMEOUT(),
	CMD_RUN_OPT_MEMORY(),  CMD_RUN_OPT_CPUS(),
	CMD_RUN_OPT_PIDS(),    CMD_RUN_OPT_RUNTIME(),
	CMD_RUN_OPT_SECCOMP(), CMD_RUN_OPT_IMAGE(),
	CMD_RUN_OPT_GRACE(),   CMD_RUN_OPT_RUNS_DIR(),
	CMD_RUN_OPT_RUN_ID(),  CMD_RUN_OPT_TASKS_DIR(),
	CMD_RUN_OPT_KEEP(),    {0},
};

static const cli_option mcp_options[] = {
	{.text = "Usage: sandboxctl mcp --task NAME [options]\n\n"
		 "Serves a task's sandbox as an MCP stdio server: JSON-RPC messages, one per\n"
		 "line, on stdin and stdout, relayed to the server inside the sandbox. The\n"
		 "episode ends when the client closes stdin, calls complete_task, or the\n"
		 "deadline passes; the outputs are then graded and the sandbox removed.\n"
		 "The result goes to runs/<run-id>/ as for 'sandboxctl run'.\n"},
	{.heading = "Options (as for 'sandboxctl run'):"},
	{.include = shared, .group = " "},
	CMD_RUN_OPT_TEST_LABEL(),
	{.text = "\nClient configuration (e.g. claude_desktop_config.json):\n"
		 "  {\"mcpServers\": {\"banking\": {\"command\": \"sandboxctl\",\n"
		 "    \"args\": [\"mcp\", \"--task\", \"banking_reserve\"]}}}\n"},
	{0},
};

int cmd_mcp(int argc, char **argv)
{
	sbx_run_opts o;
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_run_result *res;
	sbx_run_end end = SBX_END_NONE;
	int r = cli_parse("mcp", argc, argv, mcp_options, NULL, CLI_NO_ARGUMENTS | CLI_IN_ORDER);

	if (r <= 0)
		return -r;
	o = arg_run;
	if (!o.task)
		return cli_error("mcp: --task NAME is required"), EXIT_USAGE;
	o.grader = cmd_run__grader();
	o.interrupted = &cmd_run__interrupted;
	o.quiet_agent = true;
	cmd_run__install_signals();

	r = sbx_run_prepare(&run, &o, &err);
	if (r < 0) {
		cli_error("mcp: %s", sbx_error_message(&err));
		return EXIT_USAGE;
	}
	if (sbx_run_launch(run, &err) >= 0) {
		fprintf(stderr, "sandboxctl: mcp: run %s ready; relaying stdio to the sandbox\n",
			sbx_run_get_result(run)->run_id);
		end = sbx_run_serve_stdio(run, STDIN_FILENO, STDOUT_FILENO);
	} else if (cmd_run__interrupted) {
		end = SBX_END_INTERRUPTED;
	}
	sbx_error_clear(&err);
	r = sbx_run_finish(run, end, &err);
	res = sbx_run_get_result(run);
	if (r < 0) {
		cli_error("mcp %s: writing the result: %s", res->run_id, sbx_error_message(&err));
		return EXIT_ENGINE;
	}
	fprintf(stderr, "sandboxctl: mcp: run %s: %s", res->run_id,
		sbx_run_status_name(res->status));
	if (res->grade.graded)
		fprintf(stderr, " (%s, score %.1f%%)", sbx_grade_status_name(res->grade.status),
			res->grade.score * 100);
	if (res->error)
		fprintf(stderr, ": %s", res->error);
	fprintf(stderr, "; %s/result.json\n", res->run_dir);
	return sbx_run_status_exit_code(res->status);
}
