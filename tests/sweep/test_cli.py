#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl sweep` as users type it, without an engine: usage errors exit 2
with one clear line and create nothing, --help documents the knobs and exit
codes, and `show` / `compare` read sweep directories written here by hand
(a torn last line included)."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import cli_check  # noqa: E402
from cli_check import SANDBOXCTL, SRC, TASKS, check  # noqa: E402,F401


tmp = tempfile.mkdtemp(prefix="sbx-sweep-cli-")
out = os.path.join(tmp, "s")
common = ["--tasks-dir", TASKS, "--out", out]
# A dead engine: the plan is checked before anyone talks to it.
dead = dict(os.environ, DOCKER_HOST="unix://" + os.path.join(tmp, "no.sock"))
check(["sweep"], 2, "at least one --task")
check(["sweep", "--agent", "oracle"] + common, 2, "at least one --task")
check(["sweep", "--task", "banking_reserve"] + common, 2, "one --agent")
check(["sweep", "--bogus"], 2, "option '--bogus'")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle", "--epochs", "0"] + common, 2,
      "--epochs")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle", "--pass-at", "5"] + common, 2,
      "pass@5: k must be 1..epochs")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle", "--jobs", "x"] + common, 2,
      "--jobs")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle", "--tag", "novalue"] + common,
      2, "KEY=VALUE")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle", "--engine", "x#jobs=0"] +
      common, 2, "URL#jobs=N")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle", "--require-pass", "2"] +
      common, 2, "rate 0..1")
check(["sweep", "--task", "banking_reserve", "--task", "banking_reserve", "--agent", "oracle"] +
      common, 2, "named twice")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle", "--agent", "oracle"] + common,
      2, "agent 'oracle' named twice")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle", "--memory", "12q"] + common, 2,
      "is not a size")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle", "--network", "bridge"] + common,
      2, "expected 'none' or 'published'")
check(["sweep", "--task", "no_such_task", "--agent", "oracle"] + common, 2, "no_such_task")
check(["sweep", "--task", "banking_reserve", "--agent", "oracle"] + common, 3,
      "engine", env=dead)
if os.path.exists(out):
    failed += 1
    print("FAIL refused sweeps left %s behind" % out)
check(["sweep", "--resume", os.path.join(tmp, "nothing")], 2, "not a sweep directory")
check(["sweep", "--resume", os.path.join(tmp, "nothing"), "--epochs", "3"], 2,
      "the plan is in")
check(["sweep", "--help"], 0, "Exit status: 0 every episode has a result")
check(["sweep", "--help"], 0, "--seed-from N")
check(["sweep", "--help"], 0, "URL#jobs=N")
# --help is printed from the option table: defaults filled in, the limits listed together.
check(["sweep", "--help"], 0, "(default 2); other statuses are results")
check(["sweep", "--help"], 0, "(default 10; a second\n")
check(["sweep", "--help"], 0, "--grace S,\n  --network none|published, --seccomp sandbox|default, "
      "--allow-no-seccomp\n                     each episode's limits")
check(["sweep", "show", "--help"], 0, "Usage: sandboxctl sweep show DIR [--json]")
check(["sweep", "compare", "--help"], 0, "sandboxctl sweep compare DIR_A DIR_B [--json]")
check(["sweep", "show", "--bogus"], 2, "sweep show: unknown or ambiguous option '--bogus'")
check(["--help"], 0, "sweep")

# A sweep directory written by hand: 1 task, 2 agents, 2 epochs.
d = os.path.join(tmp, "hand")
os.makedirs(d)
plan = {"schema_version": 1, "tasks": [{"name": "banking_reserve", "seedable": True}],
        "agents": ["a", "b"], "epochs": 2, "seed_from": None, "timeout_s": 0, "retries": 2,
        "pass_at": [1, 2], "tags": {}}
json.dump(plan, open(os.path.join(d, "sweep.json"), "w"))


def line(ep, agent, epoch, status, score):
    return json.dumps({"episode": ep, "attempt": 1, "task": "banking_reserve", "agent": agent,
                       "epoch": epoch, "seed": None, "run_id": "r%d" % ep, "status": status,
                       "score": score, "agent_ms": 10, "total_ms": 50})


with open(os.path.join(d, "results.jsonl"), "w") as f:
    f.write(line(0, "a", 0, "pass", 1) + "\n" + line(1, "b", 0, "fail", 0) + "\n" +
            line(2, "a", 1, "pass", 1) + "\n" + line(3, "b", 1, "pass", 1)[:30])
p = check(["sweep", "show", d, "--json"], 0, "pass_rate")
if p.returncode == 0:
    s = json.loads(p.stdout)
    a, b = s["agents"]
    if a["episodes"] != 2 or a["pass_rate"]["value"] != 1 or b["episodes"] != 1 \
            or b["not_done"] != 1:
        failed += 1
        print("FAIL show: the torn line must not count: %s" % s["agents"])
check(["sweep", "show", d], 0, "1 of 4 episodes have no result yet")
check(["sweep", "show"], 2, "which sweep directory")
check(["sweep", "compare", d], 2, "two sweep directories")
# Two agents in both: every agent is paired, and the header says so (not "A: a").
check(["sweep", "compare", d, d], 0, "A, B: the same 2 agents, paired agent by agent: a, b")
p = check(["sweep", "compare", d, d, "--json"], 0, "p_value")
if p.returncode == 0 and json.loads(p.stdout)["overall"]["pairs"] != 3:
    failed += 1
    print("FAIL compare pairs: %s" % p.stdout)

# Why episodes did not pass, grouped: show's text and JSON, and the sweep page. A gate's
# reasons differ only in the agent's cell values; a reason with markup and an escape
# sequence (the agent's log line) reaches neither the terminal nor the page as such.
d = os.path.join(tmp, "reasons")
os.makedirs(d)
json.dump(dict(plan, agents=["a"], epochs=5, pass_at=[1]), open(os.path.join(d, "sweep.json"), "w"))
why = ["agent exited 1: boom", "agent exited 1: boom",
       "gate 'inputs unchanged' failed: Sheet1!A2 changed (expected \"x\", got \"y1\")",
       "gate 'inputs unchanged' failed: Sheet1!A2 changed (expected \"x\", got \"y2\")",
       "agent exited 2: <b>\x1b[31mred</b>"]
with open(os.path.join(d, "results.jsonl"), "w") as f:
    for i, w in enumerate(why):
        rec = json.loads(line(i, "a", i, "agent_error" if "exited" in w else "fail", 0))
        f.write(json.dumps(dict(rec, reason=w)) + "\n")
p = check(["sweep", "show", d], 0, "not passed, by reason:")
if p.returncode == 0:
    for want in ("      2  agent exited 1: boom\n",
                 "      2  gate 'inputs unchanged' failed: Sheet1!A2 changed\n"):
        if want not in p.stdout:
            cli_check.failed += 1
            print("FAIL show groups by reason: %r not in\n%s" % (want, p.stdout))
    if "\x1b" in p.stdout:
        cli_check.failed += 1
        print("FAIL show printed an escape sequence from a reason")
p = check(["sweep", "show", d, "--json"], 0, "reasons")
if p.returncode == 0 and json.loads(p.stdout)["reasons"][:2] != [
        {"reason": "agent exited 1: boom", "episodes": 2},
        {"reason": "gate 'inputs unchanged' failed: Sheet1!A2 changed", "episodes": 2}]:
    cli_check.failed += 1
    print("FAIL show --json reasons: %s" % json.loads(p.stdout)["reasons"])
page = os.path.join(tmp, "reasons.html")
check(["report", d, "-o", page], 0, "")
text = open(page).read() if os.path.exists(page) else ""
if 'id="reasons"' not in text or "agent exited 1: boom" not in text or "<b>" in text:
    cli_check.failed += 1
    print("FAIL the sweep page's reasons (or the agent's markup unescaped)")
# A tampered results.jsonl: a line over the 64 KiB cap is skipped with a warning
# that names the file and line, and the lines around it still count.
d2 = os.path.join(tmp, "long")
os.makedirs(d2)
json.dump(plan, open(os.path.join(d2, "sweep.json"), "w"))
with open(os.path.join(d2, "results.jsonl"), "w") as f:
    f.write(line(0, "a", 0, "pass", 1) + "\n" + "x" * (70 << 10) + "\n" +
            line(1, "b", 0, "pass", 1) + "\n")
p = check(["sweep", "show", d2, "--json"], 0,
          "long/results.jsonl:2: longer than 64 KiB; 1 line(s) skipped")
if p.returncode == 0 and json.loads(p.stdout)["overall"]["episodes"] != 2:
    cli_check.failed += 1
    print("FAIL show: the lines around the long one must count: %s" % p.stdout)
subprocess.run(["rm", "-rf", tmp])
sys.exit(1 if cli_check.failed else 0)
