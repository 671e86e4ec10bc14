#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl run` and `sandboxctl mcp` as users type them, without an engine:
usage errors exit 2 with one clear line, bad tasks and agents are refused
before anything is created, --help documents the knobs and exit codes."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import cli_check  # noqa: E402
from cli_check import SANDBOXCTL, SRC, TASKS, check  # noqa: E402,F401


runs = tempfile.mkdtemp(prefix="sbx-cli-")
common = ["--tasks-dir", TASKS, "--runs-dir", runs]
check(["run"], 2, "--task NAME is required")
check(["run", "--bogus"], 2, "run: unknown or ambiguous option '--bogus' (see 'sandboxctl run --help')")
check(["run", "--task"], 2, "run: option '--task' needs a value")
# One wording for every command's usage errors, with "did you mean" for typos.
check(["run", "--tsk", "x"], 2, "unknown option '--tsk'; did you mean '--task'?")
check(["run", "--task", "banking_reservee"] + common, 2, "did you mean 'banking_reserve'?")
check(["tasks", "--tasks-dir", TASKS, "show", "sales_revenu"], 2, "did you mean 'sales_revenue'?")
check(["grade", "--jsn"], 2, "grade: unknown option '--jsn'; did you mean '--json'?")
check(["tasks", "--seed"], 2, "tasks: option '--seed' needs a value")
check(["ps", "--bogus"], 2, "ps: unknown or ambiguous option '--bogus' (see 'sandboxctl ps --help')")
check(["gc", "stray"], 2, "gc: unexpected argument 'stray' (see 'sandboxctl gc --help')")
check(["build", "--slimm"], 2, "build: unknown option '--slimm'; did you mean '--slim'?")
check(["rnu"], 2, "unknown command 'rnu'; did you mean 'run'?")
check(["tasks", "lst"], 2, "tasks: unknown verb 'lst' (did you mean 'list'?)")
check(["tasks", "lst"], 2, "generate NAME DIR | new NAME [--format F] | import PATH")
check(["run", "--verbos", "--task", "x"], 2, "unknown option '--verbos'; did you mean '--verbose'?")
check(["--verbos", "run"], 2, "unknown option '--verbos'; did you mean '--verbose'?")
check(["tasks", "import", os.path.join(SRC, "tests/compat/data/banking_reserve"), "--out",
       os.path.join(runs, "imp"), "--id", "a b"], 2, "task id 'a b': use letters")
check(["deploy"], 2, "unknown command 'deploy' (see 'sandboxctl --help')")
check(["help"], 0, "Commands:")
check(["help", "run"], 0, "Usage: sandboxctl run --task NAME")
check(["help", "nosuch"], 2, "unknown command 'nosuch'")
# --verbose is global but works anywhere on the line.
check(["tasks", "--tasks-dir", TASKS, "list", "--verbose"], 0, "banking_reserve")
check(["tasks", "-v", "--tasks-dir", TASKS, "list"], 0, "banking_reserve")
check(["run", "--task", "banking_reserve", "--memory", "12q"] + common, 2, "is not a size")
check(["run", "--task", "banking_reserve", "--cpus", "0"] + common, 2, "positive number")
check(["run", "--task", "banking_reserve", "--pids", "3"] + common, 2, "number >= 8")
check(["run", "--task", "banking_reserve", "--timeout", "x"] + common, 2, "number of seconds")
check(["run", "--task", "banking_reserve", "--port", "70000"] + common, 2, "is not a port")
check(["run", "--task", "banking_reserve", "--network", "bridge"] + common, 2,
      "expected 'none' or 'published'")
check(["run", "--task", "banking_reserve", "--listen", "udp"] + common, 2,
      "use tcp, unix or unix:PATH")
check(["run", "--task", "banking_reserve", "--listen", "unix", "--network", "published"] + common,
      2, "agents connect to the published port")
check(["run", "--help"], 0, "unix: a 0600 socket")
check(["run", "--help"], 0, "published: for clients that must connect straight")
check(["run", "--task", "no_such_task"] + common, 2, "no_such_task")
check(["run", "--task", "banking_reserve", "--run-id", "../escape"] + common, 2, "run id")
check(["run", "--help"], 0, "Exit status: 0 pass, 1 graded but not passed")
check(["run", "--help"], 0, "SANDBOX_MCP_URL")
check(["mcp"], 2, "--task NAME is required")
check(["mcp", "--agent", "x"], 2, "mcp: unknown or ambiguous option '--agent'")
check(["mcp", "--help"], 0, "claude_desktop_config.json")
# The options mcp shares with run are listed from the same rows: all of them.
check(["mcp", "--help"], 0, "  --seccomp sandbox|default --image REF --grace S")
check(["run", "--help"], 0, "    --max-turns N (50), --max-output-tokens N, --max-total-tokens N,\n"
      "    --temperature T, --model-seed N, --system-prompt FILE\n                       each")
check(["run", "--help"], 0, "  --seccomp sandbox|default   sandbox (default): our profile\n")
check(["run", "--agent", "llm", "--model", "a b", "--task", "x"], 2,
      "--model: 'a b' must be one word")
check(["run", "--agent", "demo", "--model", "x", "--task", "x"], 2, "go with --agent llm")
if os.listdir(runs):
    cli_check.failed += 1
    print("FAIL refused runs left run directories: %s" % os.listdir(runs))
os.rmdir(runs)
sys.exit(1 if cli_check.failed else 0)
