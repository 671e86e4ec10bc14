#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every command and every subcommand answers --help and -h: exit 0, its usage
on stdout, nothing on stderr, wherever the flag stands on the line (issue 27:
`sweep compare --help` answered "unexpected '--help'"). The commands come from
`sandboxctl --help` and each command's subcommands from its own usage lines,
so a new one is covered without touching this file."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from cli_check import SANDBOXCTL  # noqa: E402

failed = 0


def run(args):
    return subprocess.run([SANDBOXCTL] + args, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def expect_help(args, usage):
    """args must print a help whose first line starts with usage, exit 0, stderr empty."""
    global failed
    p = run(args)
    first = p.stdout.split("\n", 1)[0]
    if p.returncode != 0 or p.stderr or not first.startswith(usage):
        failed += 1
        print("FAIL %s: exit %d, stdout %r, stderr %r" % (args, p.returncode, p.stdout[:200], p.stderr))
    else:
        print("ok   %s" % " ".join(args))


def commands():
    text = run(["--help"]).stdout
    block = text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def subcommands(cmd, help_text):
    """The lowercase words right after 'sandboxctl CMD' on the usage lines."""
    subs = []
    for m in re.finditer(r"^(?:Usage:)?\s+sandboxctl %s ([a-z][a-z-]*)\b" % re.escape(cmd),
                         help_text, re.M):
        if m.group(1) not in subs:
            subs.append(m.group(1))
    return subs


cmds = commands()
if len(cmds) < 10 or "sweep" not in cmds or "tasks" not in cmds:
    print("FAIL the command list from --help: %s" % cmds)
    sys.exit(1)
seen_subs = {}
for cmd in cmds:
    usage = "Usage: sandboxctl" if cmd == "help" else "Usage: sandboxctl " + cmd
    for flag in ("--help", "-h"):
        expect_help([cmd, flag], usage)
        expect_help(["--verbose", cmd, flag], usage)
    if cmd != "help":
        expect_help(["help", cmd], usage)
    subs = subcommands(cmd, run([cmd, "--help"]).stdout)
    seen_subs[cmd] = subs
    for sub in subs:
        for flag in ("--help", "-h"):
            expect_help([cmd, sub, flag], usage)
        # After the subcommand's arguments too, as users add it to a line that failed.
        expect_help([cmd, sub, "a", "b", "--help"], usage)
# The subcommands the usage lines must name (a regression in the parsing above would
# otherwise check nothing).
for cmd, want in (("sweep", {"show", "compare"}),
                  ("tasks", {"list", "show", "validate", "generate", "new", "import"})):
    if not want <= set(seen_subs.get(cmd, [])):
        failed += 1
        print("FAIL %s's subcommands from its usage: %s" % (cmd, seen_subs.get(cmd)))
# '--' ends the options: a '--help' after it is an argument, not a request for help.
p = run(["sweep", "compare", "--", "--help"])
if p.returncode != 2 or p.stdout:
    failed += 1
    print("FAIL sweep compare -- --help: exit %d, %r" % (p.returncode, p.stdout + p.stderr))
sys.exit(1 if failed else 0)
