#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Episodes of the bundled tasks on the machine's real Docker engine.

Usage: test_episodes.py SANDBOXCTL CASE
  oracle        every non-GUI task: the oracle PASSes with score 1, an agent
                that does nothing but complete_task scores 0; prints a table of
                the scores and the oracle episode times
  gui           the GUI tasks' oracle episodes (full image), and gui_sort_table
                solved through the desktop alone (tests/task/gui_sort_agent.py)
  seed          run --seed: a fresh instance in the run directory, the same
                bytes for the same seed, the seed in result.json, graded
                against the instance (a real agent solves it)
  python-agent  examples/python_agent.py (official MCP Python SDK) solves
                its tasks, a seeded instance included
  new-formats   `tasks new --format csv|ods|xlsx`: each scaffold's oracle and a
                solver through the REST tools pass on a seeded instance
Skips (77) when the engine or the sandbox image is missing.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SANDBOXCTL = os.path.abspath(sys.argv[1])
CASE = sys.argv[2]
SRC = os.environ.get("SBX_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
TASKS = os.path.join(SRC, "tasks")
AGENT = "python3 " + os.path.join(SRC, "examples", "python_agent.py")
NULL_AGENT = "curl -sf -X POST \"$SANDBOX_REST_URL/task/complete\" -d '{}' >/dev/null"
IMAGE = os.environ.get("SBX_RUN_TEST_IMAGE", "")
sys.path.insert(0, os.path.join(SRC, "tests", "lib"))
from itest import DEFAULT_SLIM_IMAGE, FULL_IMAGE, SLIM_IMAGE  # noqa: E402
# An image pinned by $SBX_TEST_{SLIM,FULL}_IMAGE is passed as --image; without
# a pin the runs take sandboxctl's own default (what case_formulas checks).
PINNED = {False: os.environ.get("SBX_TEST_SLIM_IMAGE"), True: os.environ.get("SBX_TEST_FULL_IMAGE")}


def image_for(gui):
    if IMAGE and IMAGE != "real":
        return ["--image", IMAGE]
    if PINNED[gui]:
        return ["--image", PINNED[gui]]
    return []


def skip_unless_ready(gui=False):
    ref = FULL_IMAGE if gui else SLIM_IMAGE
    if IMAGE and IMAGE != "real":
        ref = IMAGE
    if not os.path.exists("/var/run/docker.sock"):
        print("SKIP: no engine")
        sys.exit(77)
    # The engine's API on its socket (no docker CLI needed): is the image there?
    q = subprocess.run(["curl", "-sf", "--unix-socket", "/var/run/docker.sock",
                        "http://engine/images/%s/json" % ref.replace("/", "%2F")],
                       capture_output=True)
    if q.returncode != 0:
        print("SKIP: image %s missing (sandboxctl build)" % ref)
        sys.exit(77)


class Env:
    def __init__(self):
        self.runs = tempfile.mkdtemp(prefix="sbx-episodes-")

    def run(self, task, agent, *extra, gui=False):
        t0 = time.monotonic()
        p = subprocess.run([SANDBOXCTL, "run", "--task", task, "--agent", agent, "--tasks-dir",
                            TASKS, "--runs-dir", self.runs, "--quiet", "--json",
                            "--test-label", *image_for(gui), *extra],
                           capture_output=True, text=True, timeout=900)
        dt = time.monotonic() - t0
        try:
            res = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise AssertionError("%s: no result (exit %d): %s" % (task, p.returncode, p.stderr))
        return p.returncode, res, os.path.join(self.runs, res["run_id"]), dt


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def bundled(gui):
    out = []
    for name in sorted(os.listdir(TASKS)):
        y = os.path.join(TASKS, name, "task.yaml")
        if os.path.isfile(y):
            is_gui = "\ngui: true" in open(y).read()
            if is_gui == gui:
                out.append(name)
    return out


STATUS_AGENT = ("curl -sf -X POST \"$SANDBOX_REST_URL/tools/call\" "
                "-d '{\"tool_name\":\"get_task_status\",\"arguments\":{}}' && echo && " +
                NULL_AGENT)


def check_status_deadline(env):
    """In a real run the server knows the deadline: get_task_status gives timeout_seconds
    within (0, the task's deadline] (sales_revenue: 300 s), not null."""
    code, res, rdir, _ = env.run("sales_revenue", STATUS_AGENT)
    log = open(os.path.join(rdir, "agent.log")).read()
    status = json.loads([l for l in log.splitlines() if l.startswith("{")][0])["result"]
    t = status["timeout_seconds"]
    check(code == 1 and isinstance(t, (int, float)) and 0 < t <= 300 and
          0 < status["remaining"] <= t, "get_task_status in a run: %s" % status)
    print("%-18s get_task_status: timeout_seconds %.1f, remaining %.1f (deadline 300 s)" %
          ("sales_revenue", t, status["remaining"]))


def case_oracle(env, gui=False):
    """Every task's oracle PASSes with score 1 and its null agent (complete_task at once)
    scores 0; ends with a table of the figures (tasks/README.md quotes it)."""
    rows = []
    for task in bundled(gui):
        code, res, _, dt = env.run(task, "oracle", gui=gui)
        check(code == 0 and res["status"] == "pass" and res["score"] == 1,
              "%s: oracle: exit %d %s" % (task, code, res))
        print("%-18s oracle PASS score 1 in %.2f s" % (task, dt))
        if gui:
            # The oracle writes the file behind Calc's back: the final shot
            # must show the saved file, so Calc was started again on it.
            check(res["files"].get("screenshot") == "screenshot.png" and
                  res["files"].get("screenshot_reloaded") is True,
                  "%s: the final screenshot does not show the saved file: %s" %
                  (task, res["files"]))
        oracle_score, image = res["score"], res["sandbox"]["image"].split(":")[0]
        code, res, _, _ = env.run(task, NULL_AGENT, gui=gui)
        check(code == 1 and res["score"] == 0 and res["grade"]["status"] == "FAIL",
              "%s: doing nothing: exit %d %s" % (task, code, res))
        print("%-18s null agent FAIL score 0" % task)
        rows.append((task, res["score"], oracle_score, dt, image))
    if not gui:
        check_status_deadline(env)
    print("\n| task | null agent | oracle | oracle episode | image |\n|---|---|---|---|---|")
    for task, null, oracle, dt, image in rows:
        print("| `%s` | %g | %g | %.2f s | %s |" % (task, null, oracle, dt, image))


def case_gui(env):
    """The GUI tasks' oracles, then gui_sort_table solved through the desktop alone: its
    tool set (tools: gui) refuses write_range and execute_python as unknown tools, and
    get_task_status knows the run's deadline (tests/task/gui_sort_agent.py checks both)."""
    case_oracle(env, gui=True)
    agent = "python3 " + os.path.join(SRC, "tests", "task", "gui_sort_agent.py")
    code, res, rdir, dt = env.run("gui_sort_table", agent, gui=True)
    log = open(os.path.join(rdir, "agent.log")).read()
    check(code == 0 and res["status"] == "pass" and res["score"] == 1 and
          res["ended_by"] == "complete_task",
          "gui_sort_table by keyboard: exit %d %s\n%s" % (code, res, log[-2000:]))
    for line in ("write_range: HTTP 404 Unknown tool: write_range",
                 "execute_python: HTTP 404 Unknown tool: execute_python",
                 "sorted and saved through the keyboard"):
        check(line in log, "agent log lacks %r:\n%s" % (line, log[-2000:]))
    status = [l for l in log.splitlines() if l.startswith("timeout_seconds ")]
    print("%-18s keyboard agent PASS score 1 in %.2f s (write_range refused; %s)" %
          ("gui_sort_table", dt, status[0] if status else "?"))


def files_of(rdir):
    out = {}
    for sub in ("task/files", "task/oracle", "inputs"):
        d = os.path.join(rdir, sub)
        for f in sorted(os.listdir(d)):
            out[sub + "/" + f] = open(os.path.join(d, f), "rb").read()
    return out


def case_seed(env):
    runs = {}
    for name, extra in (("a", ["--seed", "7"]), ("b", ["--seed", "7"]), ("c", [])):
        code, res, rdir, _ = env.run("banking_reserve", "oracle", *extra)
        check(code == 0 and res["status"] == "pass", "seed %s: %s" % (extra, res))
        runs[name] = (res, files_of(rdir))
    check(runs["a"][0]["seed"] == 7 and runs["c"][0]["seed"] is None,
          "result.json seeds: %s, %s" % (runs["a"][0]["seed"], runs["c"][0]["seed"]))
    check(runs["a"][1] == runs["b"][1], "seed 7 twice gave different files")
    committed = open(os.path.join(TASKS, "banking_reserve", "files", "cash_flows.ods"), "rb").read()
    check(runs["c"][1]["inputs/cash_flows.ods"] == committed, "no seed: not the committed file")
    check(runs["a"][1]["inputs/cash_flows.ods"] != committed, "seed 7: the committed file")
    check(runs["a"][1]["inputs/cash_flows.ods"] == runs["a"][1]["task/files/cash_flows.ods"],
          "inputs/ is not the instance")
    # A real agent on the instance: it got the instance's file, the grade used its oracle.
    code, res, _, _ = env.run("banking_reserve", AGENT, "--seed", "11")
    check(code == 0 and res["status"] == "pass" and res["seed"] == 11,
          "python agent on seed 11: %s" % res)
    # A task that is not seedable refuses --seed before starting anything.
    d = tempfile.mkdtemp(dir=env.runs)
    for f in ("task.yaml", "files", "oracle"):
        src = os.path.join(TASKS, "sales_revenue", f)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, os.path.join(d, f))
    y = os.path.join(d, "task.yaml")
    text = open(y).read().replace("generator: builtin\n", "")
    with open(y, "w") as f:
        f.write(text)
    p = subprocess.run([SANDBOXCTL, "run", "--task", d, "--agent", "oracle", "--seed", "1",
                        "--runs-dir", env.runs, "--test-label"], capture_output=True, text=True)
    check(p.returncode == 2 and "not seedable" in p.stderr, "unseedable: %d %s" % (
        p.returncode, p.stderr))
    print("seeds: same seed same bytes, recorded, graded against the instance")


FORMULA_AGENT = r"""
v='[["=B2*(1+$G$1)"],["=B3*(1+$G$1)"],["=B4*(1+$G$1)"],["=B5*(1+$G$1)"],["=B6*(1+$G$1)"],["=B7*(1+$G$1)"],["=B8*(1+$G$1)"],["=B9*(1+$G$1)"]]'
call() { curl -sf -X POST -H 'Content-Type: application/json' "$SANDBOX_REST_URL/tools/call" -d "$1"; }
call "{\"tool_name\":\"write_range\",\"arguments\":{\"file_path\":\"budget.ods\",\"sheet_name\":\"Budget\",\"start_cell\":\"C2\",\"values\":$v}}" &&
call '{"tool_name":"write_range","arguments":{"file_path":"budget.ods","sheet_name":"Budget","start_cell":"B10","values":[["=SUM(B2:B9)","=SUM(C2:C9)"]]}}' &&
curl -sf -X POST "$SANDBOX_REST_URL/task/complete" -d '{}'
"""


def case_formulas(env):
    """fix_formulas repaired with formulas only (no values) on the default (slim) image:
    the formulas are computed natively (in the sandbox, or by the grader when the
    sandbox left them without values), so the repair PASSes without LibreOffice."""
    if IMAGE and IMAGE != "real":
        raise SystemExit(77)
    agent = os.path.join(env.runs, "formula_agent.sh")
    with open(agent, "w") as f:
        f.write("#!/bin/sh\n" + FORMULA_AGENT)
    os.chmod(agent, 0o755)
    code, res, _, dt = env.run("fix_formulas", agent)
    check(code == 0 and res["status"] == "pass" and res["sandbox"]["image"].startswith(SLIM_IMAGE.rsplit(":", 1)[0] + ":")
          and res["grade"]["recalc"]["method"] in ("native", "sandbox"),
          "fix_formulas by formulas: exit %d %s" % (code, res))
    print("fix_formulas       formulas only: PASS on %s in %.2f s" % (res["sandbox"]["image"], dt))
    # A task that declares libreoffice: true refuses an explicit slim image up front.
    d = tempfile.mkdtemp(dir=env.runs)
    for f in ("task.yaml", "files", "oracle"):
        src = os.path.join(TASKS, "fix_formulas", f)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, os.path.join(d, f))
    with open(os.path.join(d, "task.yaml"), "a") as f:
        f.write("libreoffice: true\n")
    # (sandboxctl knows the slim image by its name: the refusal comes before any sandbox)
    p = subprocess.run([SANDBOXCTL, "run", "--task", d, "--agent", "oracle", "--image",
                        DEFAULT_SLIM_IMAGE, "--runs-dir", env.runs, "--test-label"],
                       capture_output=True, text=True)
    check(p.returncode == 2 and "needs LibreOffice" in p.stderr and p.stderr.count("\n") == 1,
          "libreoffice task on slim: %d %s" % (p.returncode, p.stderr))


# tasks new's task solved through the REST tools, whatever the format: Total = Quantity x
# Price, rounded half up to cents, written as numbers into D1:D11 of Sheet1.
TOTALS_AGENT = r"""
import json, os, urllib.request
from decimal import ROUND_HALF_UP, Decimal
base, f = os.environ["SANDBOX_REST_URL"], os.environ["SANDBOX_OUTPUTS"]
def call(name, **args):
    req = urllib.request.Request(base + "/tools/call", method="POST", headers={
        "Content-Type": "application/json"}, data=json.dumps({"tool_name": name,
        "arguments": dict(file_path=f, sheet_name="Sheet1", **args)}).encode())
    body = json.load(urllib.request.urlopen(req, timeout=60))
    assert body["success"], body
    return body["result"]
rows = call("read_range", start_cell="A2", end_cell="C11")["values"]
totals = [[float((Decimal(str(q)) * Decimal(str(p))).quantize(Decimal("0.01"), ROUND_HALF_UP))]
          for _, q, p in rows]
call("write_range", start_cell="D1", values=[["Total"]] + totals)
urllib.request.urlopen(urllib.request.Request(base + "/task/complete", data=b"{}"), timeout=60)
print("wrote", len(totals), "totals into", f)
"""


def case_new_formats(env):
    """`tasks new --format csv|ods|xlsx` makes a task that works in a real episode: on a
    seeded instance its oracle passes, an agent that computes the totals through the
    tools passes, one that only completes fails."""
    agent = os.path.join(env.runs, "totals_agent.py")
    with open(agent, "w") as f:
        f.write(TOTALS_AGENT)
    for fmt in ("csv", "ods", "xlsx"):
        t = os.path.join(env.runs, "new_" + fmt)
        p = subprocess.run([SANDBOXCTL, "tasks", "new", t, "--format", fmt],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, "tasks new --format %s: %s" % (fmt, p.stderr))
        for name, who, want in (("oracle", "oracle", 0), ("solver", "python3 " + agent, 0),
                                ("null", NULL_AGENT, 1)):
            code, res, rdir, dt = env.run(t, who, "--seed", "9")
            log = open(os.path.join(rdir, "agent.log")).read() if name == "solver" else ""
            check(code == want and res["status"] == ("pass" if want == 0 else "fail") and
                  res["seed"] == 9, "%s task, %s: exit %d %s\n%s" % (fmt, name, code, res,
                                                                      log[-1500:]))
            print("tasks new --format %-4s %-6s %s in %.2f s" % (fmt, name, res["status"], dt))


def case_python_agent(env):
    for task, extra in (("sales_revenue", []), ("banking_reserve", []), ("price_lookup", []),
                        ("price_lookup", ["--seed", "3"])):
        code, res, rdir, dt = env.run(task, AGENT, *extra)
        log = open(os.path.join(rdir, "agent.log")).read()
        check(code == 0 and res["status"] == "pass" and res["ended_by"] == "complete_task",
              "%s %s: exit %d %s\n%s" % (task, extra, code, res, log[-2000:]))
        check("tools: " in log and "complete_task:" in log, "agent log: " + log[-1000:])
        print("%-18s python agent PASS %s in %.2f s" % (task, " ".join(extra), dt))


def main():
    skip_unless_ready(gui=CASE == "gui")
    env = Env()
    try:
        {"oracle": case_oracle, "gui": case_gui, "seed": case_seed,
         "python-agent": case_python_agent, "formulas": case_formulas,
         "new-formats": case_new_formats}[CASE](env)
    finally:
        shutil.rmtree(env.runs, ignore_errors=True)


if __name__ == "__main__":
    main()
