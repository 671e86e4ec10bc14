/* SPDX-License-Identifier: MIT */
/*
 * sandboxctl mcp --task NAME: the task's sandbox as an MCP stdio server, for
 * desktop clients that start servers from their config. stdin/stdout carry
 * JSON-RPC lines only; everything else goes to stderr. When the client
 * closes stdin, the task is completed or the deadline passes, the outputs are
 * collected and graded, the sandbox removed and result.json written, as for
 * `run`.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sbx/run.h"

/* From cmd_run.c. */
int cmd_run__grade(const sbx_task *task, const char *outputs_dir, sbx_run_grade *out,
		   void *userdata, sbx_error *err);
int cmd_run__parse_common(const char *name, const char *arg, sbx_run_opts *o);
void cmd_run__install_signals(void);
extern volatile sig_atomic_t cmd_run__interrupted;

static void help(void)
{
	printf("Usage: sandboxctl mcp --task NAME [options]\n\n"
	       "Serves a task's sandbox as an MCP stdio server: JSON-RPC messages, one per\n"
	       "line, on stdin and stdout, relayed to the server inside the sandbox. The\n"
	       "episode ends when the client closes stdin, calls complete_task, or the\n"
	       "deadline passes; the outputs are then graded and the sandbox removed.\n"
	       "The result goes to runs/<run-id>/ as for 'sandboxctl run'.\n\n"
	       "Options (as for 'sandboxctl run'):\n"
	       "  --task NAME --timeout S --memory SIZE --cpus N --pids N --runtime NAME\n"
	       "  --image REF --grace S --runs-dir DIR --run-id ID --tasks-dir DIR --keep\n\n"
	       "Client configuration (e.g. claude_desktop_config.json):\n"
	       "  {\"mcpServers\": {\"banking\": {\"command\": \"sandboxctl\",\n"
	       "    \"args\": [\"mcp\", \"--task\", \"banking_reserve\"]}}}\n");
}

int cmd_mcp(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"task", required_argument, NULL, 0x100},
		{"image", required_argument, NULL, 0x100},
		{"timeout", required_argument, NULL, 0x100},
		{"memory", required_argument, NULL, 0x100},
		{"cpus", required_argument, NULL, 0x100},
		{"pids", required_argument, NULL, 0x100},
		{"runtime", required_argument, NULL, 0x100},
		{"seccomp", required_argument, NULL, 0x100},
		{"keep", no_argument, NULL, 0x100},
		{"runs-dir", required_argument, NULL, 0x100},
		{"run-id", required_argument, NULL, 0x100},
		{"tasks-dir", required_argument, NULL, 0x100},
		{"grace", required_argument, NULL, 0x100},
		{"test-label", no_argument, NULL, 0x100},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	sbx_run_opts o = SBX_RUN_OPTS_INIT;
	_cleanup_(sbx_run_freep) sbx_run *run = NULL;
	sbx_error err = SBX_ERROR_INIT;
	const sbx_run_result *res;
	sbx_run_end end = SBX_END_NONE;
	int c, r, idx = 0;

	optind = 1;
	while ((c = cli_getopt("mcp", argc, argv, "+h", longopts, &idx)) != -1) {
		if (c == 'h') {
			help();
			return EXIT_PASS;
		}
		r = c == 0x100 ? cmd_run__parse_common(longopts[idx].name, optarg, &o) : 0;
		if (r < 0)
			return EXIT_USAGE;
		if (r == 0)
			return EXIT_USAGE; /* CLI_OPT_ERROR: cli_getopt said why */
	}
	if (cli_no_arguments("mcp", argc, argv) < 0)
		return EXIT_USAGE;
	if (!o.task)
		return cli_error("mcp: --task NAME is required"), EXIT_USAGE;
	o.grade = cmd_run__grade;
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
