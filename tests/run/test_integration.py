#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration tests of `sandboxctl run` / `sandboxctl mcp` on the machine's
real Docker engine: every task solved by the oracle, the demo agents, a wrong
agent, the deadline, signals, the official MCP Python SDK through the relay
and stdio, and the hardening probed from inside a running sandbox.

Usage: test_integration.py CASE  (see CASES at the bottom)

The image: $SBX_RUN_TEST_IMAGE when set ("real" means the images
`sandboxctl build` makes, or those $SBX_TEST_SLIM_IMAGE and
$SBX_TEST_FULL_IMAGE pin: tests/lib/itest.py), else sandboxctl-test/run-dev:latest, built here
from this build's binaries (tests/run/dev-image.sh), so the tests work on an
engine that has no images. Every container is labelled sandboxctl.test=1 and
the test checks none of its runs leaves one behind.
"""
import asyncio
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import second_engine  # noqa: E402
from itest import (BUILD, DEFAULT_SLIM_IMAGE, FULL_IMAGE, SANDBOXCTL, SKIP, SLIM_IMAGE, SRC,  # noqa: E402,F401
                   TASKS, Skip, fail, run_cases, run_main, stop_process)
from unix_http import UnixHTTP  # noqa: E402,F401  (the suites that import this file use it)
import atif_check  # noqa: E402
DEV_IMAGE = "sandboxctl-test/run-dev:latest"

# ---- the engine -------------------------------------------------------------

engine = second_engine.engine


def containers(run_id):
    f = urllib.parse.quote(json.dumps({"label": ["sandboxctl.run-id=" + run_id]}))
    st, body = engine("GET", "/containers/json?all=1&filters=" + f)
    if st != 200:
        fail("engine: list containers: %s %s" % (st, body))
    return body


def remove_container(cid):
    engine("DELETE", "/containers/%s?force=1&v=1" % cid)


def image_exists(ref):
    st, _ = engine("GET", "/images/%s/json" % urllib.parse.quote(ref, safe=""))
    return st == 200


REAL_SLIM = SLIM_IMAGE
_real_needed = None  # why the calling test cannot run on the dev image, or None


def need_real_image(why):
    """The calling test needs what only the real image has (python3 for
    execute_python or an impostor server, the real server's limits): the dev
    image (busybox) would fail it for the harness's reason. Without
    SBX_RUN_TEST_IMAGE, pick_image then gives the real slim image when it
    exists (the image-build test, first in `meson test`, makes it current),
    else the test skips now, saying why. With SBX_RUN_TEST_IMAGE set (as
    scripts/test.sh does) nothing changes."""
    global _real_needed
    _real_needed = why
    pick_image()


def pick_image(gui=False):
    want = os.environ.get("SBX_RUN_TEST_IMAGE", "")
    if want == "real":
        ref = FULL_IMAGE if gui else REAL_SLIM
        if not image_exists(ref):
            raise Skip("%s missing: run 'sandboxctl build' first" % ref)
        return ref
    if want:
        return want
    if gui:
        raise Skip("GUI tasks need the full image (SBX_RUN_TEST_IMAGE=real)")
    if _real_needed:
        if image_exists(REAL_SLIM):
            return REAL_SLIM
        raise Skip("%s: the dev image (busybox, no python3) cannot run it and %s is missing "
                   "(run 'sandboxctl build' or the image-build test, or set SBX_RUN_TEST_IMAGE)"
                   % (_real_needed, REAL_SLIM))
    return DEV_IMAGE


def ensure_dev_image():
    if os.environ.get("SBX_RUN_TEST_IMAGE") or _real_needed:
        return
    subprocess.run(["sh", os.path.join(SRC, "tests/run/dev-image.sh"), SRC, BUILD, DEV_IMAGE],
                   check=True, stdout=subprocess.DEVNULL)


# ---- running sandboxctl -----------------------------------------------------

class Env:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sbx-run-it-")
        self.runs = os.path.join(self.dir, "runs")
        self.run_ids = []
        self.procs = []

    def new_id(self, tag):
        rid = "it-%s-%d-%d" % (tag, os.getpid(), len(self.run_ids))
        self.run_ids.append(rid)
        return rid

    def args(self, rid, task, image, *extra):
        return [SANDBOXCTL, "run", "--task", task, "--tasks-dir", TASKS, "--image", image,
                "--runs-dir", self.runs, "--run-id", rid, "--test-label"] + list(extra)

    def run(self, task, tag, *extra, image=None, timeout=300, wrap=()):
        """wrap: a command line run before sandboxctl's (a measuring wrapper)."""
        rid = self.new_id(tag)
        p = subprocess.run(list(wrap) + self.args(rid, task, image or pick_image(), "--json", *extra),
                           capture_output=True, text=True, timeout=timeout)
        lines = [l for l in p.stdout.splitlines() if l.strip()]
        if len(lines) != 1:
            fail("%s: expected one JSON line on stdout, got %r\nstderr: %s" %
                 (tag, p.stdout, p.stderr))
        res = json.loads(lines[0])
        return p.returncode, res, os.path.join(self.runs, rid), p.stderr

    def cleanup(self):
        for p in self.procs:
            stop_process(p, signal.SIGINT)
        left = []
        for rid in self.run_ids:
            for c in containers(rid):
                left.append(rid)
                remove_container(c["Id"])
        shutil.rmtree(self.dir, ignore_errors=True)
        if left:
            fail("containers left behind by runs %s" % left)


def run_case(cases, alarm_s=280):
    """A file with cases: runs the one argv[1] names in a fresh Env, bounded by alarm_s."""
    if len(sys.argv) != 2 or sys.argv[1] not in cases:
        sys.exit("usage: %s %s" % (os.path.basename(sys.argv[0]), "|".join(cases)))
    signal.alarm(alarm_s)  # every case is bounded, whatever hangs
    ensure_dev_image()
    env = Env()
    try:
        cases[sys.argv[1]](env)
    finally:
        env.cleanup()


def check_gone(rid):
    if containers(rid):
        fail("run %s left its container behind" % rid)


def read(path):
    with open(path) as f:
        return f.read()


def tasks():
    out = []
    for name in sorted(os.listdir(TASKS)):
        y = os.path.join(TASKS, name, "task.yaml")
        if os.path.isfile(y):
            out.append((name, "\ngui: true" in read(y)))
    return out


# ---- cases ------------------------------------------------------------------

def case_oracle(env):
    """--agent oracle passes every task at 100%, and leaves nothing behind."""
    ran = 0
    for name, gui in tasks():
        try:
            image = pick_image(gui)
        except Skip as e:
            print("  skip %s: %s" % (name, e))
            continue
        code, res, rdir, err = env.run(name, "oracle-" + name, "--agent", "oracle",
                                       image=image)
        if code != 0 or res["status"] != "pass" or res["score"] != 1:
            fail("%s: oracle did not pass: exit %d, %s\n%s" % (name, code, res, err))
        for f in ("result.json", "grade.txt", "grade.json", "container.log",
                  "transcript.jsonl"):
            if not os.path.exists(os.path.join(rdir, f)):
                fail("%s: %s missing from the run directory" % (name, f))
        t = res["timings_ms"]
        for ph in ("create", "start", "copy_in", "ready", "agent", "copy_out", "grade",
                   "remove"):
            if t[ph] is None:
                fail("%s: phase %s not timed: %s" % (name, ph, t))
        hd = res["sandbox"]["hardening"]
        if (hd.get("network_mode") != "none" or hd.get("cap_drop") != ["ALL"] or
                hd.get("caps_added_at_start") != ["SETPCAP", "SETUID", "SETGID"] or
                not hd.get("all_caps_dropped_by_pid1") or hd.get("tool_code_uid") != 1001 or
                not hd.get("readonly_rootfs") or
                not hd.get("no_new_privileges") or hd.get("user") != "0:0" or
                hd.get("privileged") or hd.get("host_mounts") != 0 or
                # runsc: the engine counts the Sentry's host tasks, 16 times --pids.
                hd.get("pids") != 256 * (16 if hd.get("runtime") == "runsc" else 1) or
                hd.get("memory_bytes") != 2 << 30 or
                not res["sandbox"]["image_id"]):
            fail("%s: the engine did not apply the hardening: %s" % (name, res["sandbox"]))
        if not res["provenance"]["in_git"] or len(res["provenance"]["commit"] or "") != 40:
            fail("%s: provenance missing: %s" % (name, res["provenance"]))
        check_gone(res["run_id"])
        ran += 1
        print("  %s: pass in %.0f ms" % (name, t["total"]))
    if not ran:
        raise Skip("no task could run with this image")


def transcript(rdir):
    return [json.loads(l) for l in read(os.path.join(rdir, "transcript.jsonl")).splitlines()]


DEMO_TASKS = ("banking_reserve", "sales_revenue", "quarterly_totals")


def case_demo(env):
    """The C demo agent solves every task through MCP; the transcript has every call it made."""
    code, res, rdir, err = env.run("banking_reserve", "demo", "--agent", "demo")
    if code != 0 or res["status"] != "pass" or res["score"] != 1:
        fail("demo agent did not pass: exit %d %s\n%s\n%s" %
             (code, res, err, read(os.path.join(rdir, "agent.log"))))
    lines = transcript(rdir)
    sent = [l["message"] for l in lines if l["dir"] == "agent->server" and "message" in l]
    methods = [m.get("method") for m in sent]
    tools = [m["params"]["name"] for m in sent if m.get("method") == "tools/call"]
    # MCP 2026-07-28: server/discover, no initialize; each message keeps its revision.
    if methods[:2] != ["server/discover", "tools/list"] or "initialize" in methods:
        fail("transcript: not a 2026-07-28 exchange: %s" % methods)
    if any(l.get("mcp_version") != "2026-07-28" for l in lines if l["path"] == "/mcp" and "message" in l):
        fail("transcript: an /mcp message without mcp_version 2026-07-28")
    if tools != ["list_files", "get_sheet_info", "read_range", "write_range", "complete_task"]:
        fail("transcript tool calls: %s" % tools)
    answered = {l["message"].get("id") for l in lines
                if l["dir"] == "server->agent" and isinstance(l.get("message"), dict)}
    for m in sent:
        if "id" in m and m["id"] not in answered:
            fail("request %s has no recorded response" % m)
    if res["ended_by"] != "complete_task" or res["agent"]["kind"] != "demo":
        fail("unexpected end: %s" % res)
    check_gone(res["run_id"])

    # The other tasks; formulas need LibreOffice's recalculation: the full image.
    for name, gui in tasks():
        # The demo agent knows the first three tasks; the rest of the suite is for real agents.
        if name == "banking_reserve" or name not in DEMO_TASKS:
            continue
        formulas = "formulas:" in read(os.path.join(TASKS, name, "task.yaml"))
        try:
            image = pick_image(gui or formulas) if not formulas else (
                FULL_IMAGE if image_exists(FULL_IMAGE)
                else pick_image(True))
        except Skip as e:
            print("  skip %s: %s" % (name, e))
            continue
        code, res, rdir, err = env.run(name, "demo-" + name, "--agent", "demo", image=image)
        if code != 0 or res["status"] != "pass":
            fail("demo agent on %s: exit %d %s\n%s" %
                 (name, code, res, read(os.path.join(rdir, "agent.log"))))
        check_gone(res["run_id"])
        print("  %s: pass" % name)


def case_rest(env):
    """examples/rest_agent.sh (curl + jq, REST API) passes too."""
    if not shutil.which("jq"):
        raise Skip("jq missing (scripts/deps.sh installs it)")
    code, res, rdir, err = env.run("banking_reserve", "rest", "--agent",
                                   os.path.join(SRC, "examples/rest_agent.sh"))
    if code != 0 or res["status"] != "pass":
        fail("REST agent did not pass: %s\n%s" % (res, read(os.path.join(rdir, "agent.log"))))
    check_gone(res["run_id"])


HUGE_AGENT = r"""
import json, os, time, urllib.request
base = os.environ["SANDBOX_REST_URL"]
def call(name, args):
    req = urllib.request.Request(base + "/tools/call", method="POST",
                                 data=json.dumps({"tool_name": name, "arguments": args}).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        return urllib.request.urlopen(req, timeout=60).read()
    except Exception as e:
        return str(e)
big = "<script>" + "\u00e9x" * 60000
for i in range(24):
    call("write_cell", {"file_path": "sales_data.ods", "sheet_name": "Sheet1",
                        "cell_reference": "H%d" % (i + 1), "value": big})
    call("read_range", {"file_path": "sales_data.ods", "sheet_name": "Sheet1",
                        "start_cell": "A1", "end_cell": "H%d" % (i + 1)})
# A reply over the transcript's 1 MiB per message, then a request.
call("read_range", {"file_path": "sales_data.ods", "sheet_name": "Sheet1",
                    "start_cell": "H1", "end_cell": "H24"})
call("write_cell", {"file_path": "sales_data.ods", "sheet_name": "Sheet1",
                    "cell_reference": "J1", "value": "\u00e9" * 300000})
# The run directory is the agent's too: a model log no provider wrote.
with open(os.path.join(os.environ["SANDBOX_RUN_DIR"], "model.jsonl"), "ab") as f:
    f.write(b"x" * (9 << 20) + b"\n")
    f.write(b'{"t": 1, "turn": 0, "reply": {"choices": [{"message": {"content": "\xff"}}]}}\n')
    f.write(b'{"t": 1, "turn": 0, "reply": {"choices": [{"message": {"content": "\xc3"}}]}}\n')
    reply = {"choices": [{"message": {"content": "y" * (1 << 20),
             "tool_calls": [{"id": "c%d" % i, "function": {"name": "read_range",
                             "arguments": json.dumps({"pad": "z" * 4000})}} for i in range(400)]}}],
             "usage": {"prompt_tokens": 7, "completion_tokens": 3}}
    f.write(json.dumps({"t": time.time(), "turn": 1, "reply": reply}).encode() + b"\n")
req = urllib.request.Request(base + "/task/complete", method="POST", data=b"{}")
urllib.request.urlopen(req, timeout=60).read()
"""


def case_trajectory(env):
    """trajectory.json (ATIF v1.4): the demo agent's run checked field by field (the prompt
    first, each tool call with its result, complete_task last); a hostile agent's huge tool
    arguments and results, and a model log it forged, leave a bounded, valid file that says
    what it cut."""
    code, res, rdir, err = env.run("banking_reserve", "traj", "--agent", "demo")
    if code != 0 or res["status"] != "pass":
        fail("demo agent did not pass: exit %d %s\n%s" % (code, res, err))
    path = os.path.join(rdir, "trajectory.json")
    if res["files"].get("trajectory") != "trajectory.json" or not os.path.exists(path):
        fail("no trajectory.json: %s" % res["files"])
    doc = atif_check.check(path, res["run_id"])
    first = doc["steps"][0]
    if first["source"] != "user" or "Required_Reserve" not in first["message"]:
        fail("step 1 is not the task's prompt: %s" % first)
    if doc["agent"]["name"] != "sandbox-demo-agent" or doc["agent"]["extra"]["sandboxctl_agent"] != "demo":
        fail("agent: %s" % doc["agent"])
    calls = atif_check.tool_calls(doc)
    if [c[0] for c in calls] != ["list_files", "get_sheet_info", "read_range", "write_range",
                                 "complete_task"]:
        fail("tool calls: %s" % [c[0] for c in calls])
    if calls[0][2] != '{"files":["cash_flows.ods"]}' or '"status":"completed"' not in calls[-1][2]:
        fail("results not paired with their calls: %s" % [c[2][:80] for c in calls])
    if calls[3][1]["start_cell"] != "D1" or "extra" in doc and "truncated" in doc["extra"]:
        fail("arguments or truncation: %s %s" % (calls[3][1], doc.get("extra")))
    if doc["final_metrics"]["total_steps"] != 6 or "total_prompt_tokens" in doc["final_metrics"]:
        fail("final_metrics: %s" % doc["final_metrics"])

    code, res, rdir, err = env.run("sales_revenue", "traj-huge", "--agent",
                                   "%s -c '%s'" % (sys.executable, HUGE_AGENT.replace("'", "'\\''")))
    path = os.path.join(rdir, "trajectory.json")
    size = os.path.getsize(path) if os.path.exists(path) else -1
    if res["ended_by"] != "complete_task" or not 0 < size < (5 << 20):
        fail("hostile agent: %s, trajectory.json %d bytes\n%s" % (res["ended_by"], size, err))
    doc = atif_check.check(path, res["run_id"])
    tr = doc["extra"].get("truncated", {})
    if tr.get("contents_clipped", 0) < 48 or tr.get("lines_over_cap_skipped") != 1 \
            or tr.get("calls_or_turns_omitted", 0) != 144:
        fail("extra.truncated does not say what was cut: %s" % tr)
    calls = atif_check.tool_calls(doc)
    writes = [c for c in calls if c[0] == "write_cell"]
    cut = [c for c in calls if c[0] == "unknown"]
    if len(writes) != 24 or "sandboxctl_truncated" not in writes[0][1]:
        fail("write_cell arguments not clipped: %d %s" % (len(writes), str(writes[:1])[:300]))
    if not all(c[2].startswith('{"success":true') for c in writes):
        fail("write_cell results not paired: %s" % [c[2][:60] for c in writes])
    if len(cut) != 1 or "over the transcript's cap" not in cut[0][1]["json_head"] \
            or '"write_cell"' not in cut[0][1]["json_head"] or "no answer" in cut[0][2]:
        fail("the request over the transcript's cap: %s" % str(cut)[:300])
    if not any("a reply too large for the transcript" in (c[2] or "") for c in calls if c[0] == "read_range"):
        fail("no read_range result says it was over the transcript's cap")
    turns = [s for s in doc["steps"] if "metrics" in s]
    # The forged turns with an impossible time ("t": 1) come last, without a timestamp.
    if [(s["message"], "timestamp" in s) for s in turns[1:]] != [("\ufffd", False)] * 2 \
            or len(turns[0]["tool_calls"]) != 256 or len(turns[0]["message"]) > 17000 \
            or doc["final_metrics"]["total_prompt_tokens"] != 7:
        fail("the forged model turns: %s" % str(turns)[:400])
    check_gone(res["run_id"])


WRONG_AGENT = r"""
set -e
v='[["Required_Reserve"]'
i=0; while [ $i -lt 100 ]; do v="$v,[1]"; i=$((i+1)); done; v="$v]"
curl -sf -X POST -H 'Content-Type: application/json' "$SANDBOX_REST_URL/tools/call" \
  -d "{\"tool_name\":\"write_range\",\"arguments\":{\"file_path\":\"cash_flows.ods\",\"sheet_name\":\"Sheet1\",\"start_cell\":\"D1\",\"values\":$v}}"
curl -sf -X POST "$SANDBOX_REST_URL/task/complete" -d '{}'
"""


def case_wrong(env):
    """An agent that writes wrong values is graded PARTIAL/FAIL and the report names the cells."""
    code, res, rdir, err = env.run("banking_reserve", "wrong", "--agent", WRONG_AGENT)
    if code != 1 or res["status"] not in ("partial", "fail"):
        fail("wrong agent: exit %d, %s\n%s" % (code, res, err))
    report = read(os.path.join(rdir, "grade.txt"))
    if "Sheet1!D2" not in report or "expected=" not in report:
        fail("the report does not name the wrong cells:\n" + report)
    check_gone(res["run_id"])


def case_agent_error(env):
    """An agent that cannot start, or crashes, before complete_task: agent_error (exit 5),
    still graded, one stderr line naming the exit status and the end of agent.log; a clean
    agent that completes is recorded with exit code 0, not as killed."""
    # A command that is not there (not found by the shell, past the check of its first word).
    code, res, rdir, err = env.run("sales_revenue", "noagent", "--agent", "exec nosuch-agent-xyz")
    if code != 5 or res["status"] != "agent_error" or res["agent"]["exit_code"] != 127:
        fail("missing agent: exit %d, %s\n%s" % (code, res, err))
    line = [l for l in err.splitlines() if l.startswith("sandboxctl: agent error:")]
    if len(line) != 1 or "status 127" not in line[0] or "nosuch-agent-xyz" not in line[0]:
        fail("want one stderr line naming 127 and the log's end:\n" + err)
    if not res["grade"]["graded"]:
        fail("an agent_error run is still graded: %s" % res["grade"])
    py = os.path.join(env.dir, "broken.py")
    with open(py, "w") as f:
        f.write("def broken(:\n")
    code, res, rdir, err = env.run("sales_revenue", "syntax", "--agent", "python3 " + py)
    if code != 5 or res["status"] != "agent_error" or "SyntaxError" not in res["agent"].get("log_tail", ""):
        fail("SyntaxError agent: exit %d, %s\n%s" % (code, res["agent"], err))
    code, res, rdir, err = env.run("sales_revenue", "clean", "--agent", "demo")
    if code != 0 or res["agent"]["exit_code"] != 0 or res["agent"]["stopped_by_host"]:
        fail("a clean agent must be recorded as exiting 0 by itself: %s" % res["agent"])
    for rid in env.run_ids:
        check_gone(rid)


def case_agent_mistakes(env):
    """A mistake in --agent is refused before any sandbox exists: exit 2, one line saying
    what is wrong, no run folder, and no container made for the run (counted on the
    engine by the run's label). In a sweep too: no episode, no sweep folder."""
    fake_llm = ["--agent", "llm", "--base-url", "http://127.0.0.1:9/v1"]
    cases = [
        (["--agent", "orcale"], "did you mean 'oracle'?"),
        (["--agent", "nosuch-agent-xyz --flag"], "'nosuch-agent-xyz' is neither a built-in"),
        (["--agent", os.path.join(env.dir, "missing.py") + " x"], "is not an executable file"),
        (["--agent", "llm"], "--model is required"),
        (fake_llm + ["--model", "m", "--api", "openia"], "did you mean 'openai'?"),
        (["--agent", "llm", "--model", "m", "--base-url", "http//127.0.0.1:8000/v1"],
         "--base-url 'http//127.0.0.1:8000/v1': not a URL"),
        (["--agent", "llm", "--model", "m", "--base-url", "ftp://127.0.0.1/v1"],
         "not an http or https URL"),
    ]
    image = pick_image()
    for i, (extra, want) in enumerate(cases):
        rid = env.new_id("mistake%d" % i)
        t0 = time.time()
        p = subprocess.run(env.args(rid, "banking_reserve", image, *extra), capture_output=True,
                           text=True, timeout=60)
        took = time.time() - t0
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or want not in lines[0]:
            fail("%s: exit %d (want 2 and one line with %r)\n%s" % (extra, p.returncode, want,
                                                                    p.stderr))
        if containers(rid) or os.path.exists(os.path.join(env.runs, rid)):
            fail("%s: refused, yet a container or run folder was made" % extra)
        if took > 5:
            fail("%s: refused after %.1f s" % (extra, took))
    # A sweep checks every agent before its first episode: nothing is made.
    out = os.path.join(env.dir, "sweep")
    p = subprocess.run([SANDBOXCTL, "sweep", "--tasks-dir", TASKS, "--image", image, "--out", out,
                        "--test-label", "--task", "banking_reserve", "--agent", "oracle",
                        "--agent", "orcale"], capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or "did you mean 'oracle'?" not in p.stderr or os.path.exists(out):
        fail("sweep --agent orcale: exit %d, %s exists: %s\n%s" % (
            p.returncode, out, os.path.exists(out), p.stderr))
    print("agent-mistakes: %d refused by run, 1 by sweep, no container" % len(cases))


def case_image_missing(env):
    """A missing image's advice fits it: `sandboxctl build` for the images it makes, loading
    it into the engine for any other (it used to tell everyone to run sandboxctl build)."""
    for image, want in (("sandboxctl-test/nosuchimage:latest",
                         "not an image 'sandboxctl build' makes: load it into the engine"),
                        ("sandboxctl/sandbox-slim:no-such-tag",
                         "build it with 'sandboxctl build --slim'")):
        rid = env.new_id("noimage")
        p = subprocess.run(env.args(rid, "banking_reserve", image, "--agent", "oracle"),
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 3 or want not in p.stderr:
            fail("%s: exit %d, want 3 and %r\n%s" % (image, p.returncode, want, p.stderr))
        check_gone(rid)
    print("image-missing: the advice fits the image")


def case_seed_own_generator(env):
    """A seeded run of a task with its own generator (gen.py, as `tasks new` makes):
    the oracle passes. The run's task/ snapshot carries the generator, so the grading
    child can load it (without it every such run was an infra_error)."""
    tdir = os.path.join(env.dir, "owngen")
    p = subprocess.run([SANDBOXCTL, "tasks", "new", tdir], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        fail("tasks new: %s" % p.stderr)
    rid = env.new_id("owngen")
    p = subprocess.run([SANDBOXCTL, "run", "--task-dir", tdir, "--image", pick_image(),
                        "--runs-dir", env.runs, "--run-id", rid, "--test-label", "--seed", "5",
                        "--agent", "oracle", "--quiet"], capture_output=True, text=True,
                       timeout=300)
    res = json.load(open(os.path.join(env.runs, rid, "result.json")))
    if p.returncode != 0 or res["status"] != "pass" or res["seed"] != 5:
        fail("seeded run of a gen.py task: exit %d, %s: %s\n%s" % (
            p.returncode, res["status"], res.get("reason"), p.stderr[-1500:]))
    if not os.access(os.path.join(env.runs, rid, "task", "gen.py"), os.X_OK):
        fail("the run's task/ has no executable gen.py")
    check_gone(rid)
    print("seed-own-generator: PASS with seed 5")


def case_timeout(env):
    """An agent that never finishes: timeout at the deadline, graded anyway, container gone."""
    t0 = time.time()
    code, res, rdir, err = env.run("banking_reserve", "timeout", "--agent", "sleep 600",
                                   "--timeout", "3")
    took = time.time() - t0
    if code != 4 or res["status"] != "timeout" or res["ended_by"] != "deadline":
        fail("timeout: exit %d, %s\n%s" % (code, res, err))
    if not res["grade"]["graded"]:
        fail("a timed-out run must still be graded: %s" % res["grade"])
    if took > 20:
        fail("the deadline was 3 s but the run took %.1f s" % took)
    check_gone(res["run_id"])


def start_background(env, tag, *extra, image=None):
    rid = env.new_id(tag)
    p = subprocess.Popen(env.args(rid, "banking_reserve", image or pick_image(), *extra),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    url = None
    deadline = time.time() + 60
    while time.time() < deadline:
        line = p.stdout.readline() if "--agent" not in extra else ""
        if line.startswith("REST endpoint: "):
            url = line.split()[2]
            break
        if "--agent" in extra and containers(rid) and \
                os.path.exists(os.path.join(env.runs, rid, "agent.log")):
            break
        if p.poll() is not None:
            fail("%s: sandboxctl exited early: %s" % (tag, p.stderr.read()))
        time.sleep(0.05)
    else:
        p.kill()
        fail("%s: the run did not come up" % tag)
    return p, rid, url


def case_sigint(env):
    """SIGINT mid-run: the container is removed and the result says interrupted."""
    p, rid, _ = start_background(env, "sigint", "--agent", "sleep 600")
    p.send_signal(signal.SIGINT)
    code = p.wait(timeout=60)
    res = json.loads(read(os.path.join(env.runs, rid, "result.json")))
    if code != 130 or res["status"] != "interrupted":
        fail("SIGINT: exit %d, status %s" % (code, res["status"]))
    check_gone(rid)


def agent_alive(marker):
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if marker.encode() in f.read():
                        return True
            except OSError:
                pass
    return False


def case_sigkill(env):
    """SIGKILL: the agent's process group goes too; `sandboxctl gc` finds the container by labels."""
    marker = str(600 + os.getpid() % 300)
    p, rid, _ = start_background(env, "sigkill", "--agent", "sleep %s; true" % marker)
    for _ in range(100):
        if agent_alive("sleep\0" + marker):
            break
        time.sleep(0.05)
    else:
        fail("the agent did not start")
    p.kill()
    p.wait()
    for _ in range(50):
        if not agent_alive("sleep\0" + marker):
            break
        time.sleep(0.1)
    else:
        fail("the agent outlived a SIGKILLed sandboxctl")
    if not containers(rid):
        fail("after SIGKILL the container should still be there for gc to find")
    # Stopped, as PID 1's own deadline would stop it: gc removes stopped orphans too.
    for c in containers(rid):
        engine_json("POST", "/containers/%s/stop?t=1" % c["Id"])
        st, info = engine("GET", "/containers/%s/json" % c["Id"])
        if info["State"]["Running"]:
            fail("the orphan did not stop")
    g = subprocess.run([SANDBOXCTL, "gc"], capture_output=True, text=True, timeout=120)
    if "not available" in g.stderr:
        for c in containers(rid):
            remove_container(c["Id"])
        raise Skip("'sandboxctl gc' is not in this build yet (orphan removed by the test)")
    if g.returncode != 0:
        fail("gc failed: %s" % g.stderr)
    check_gone(rid)


async def sdk_session(url, body):
    from mcp import ClientSession
    from mcp.client import streamable_http as sh
    connect = getattr(sh, "streamable_http_client", None) or getattr(sh, "streamablehttp_client")
    async with connect(url) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            return await body(s)


def tool_json(res):
    if getattr(res, "structuredContent", None):
        return res.structuredContent
    text = res.content[0].text if res.content else ""
    try:
        return json.loads(text)
    except ValueError:
        return {"stdout": "", "text": text}


def case_sdk(env):
    """The official Python SDK connects to the relay (/mcp and legacy /mcp/sse) and lists the tools."""
    p, rid, url = start_background(env, "sdk")

    async def body(s):
        names = [t.name for t in (await s.list_tools()).tools]
        for n in ("complete_task", "execute_shell", "list_files"):
            if n not in names:
                fail("tools/list lacks %s: %s" % (n, names))
        files = tool_json(await s.call_tool("list_files", {}))
        await s.call_tool("complete_task", {"summary": "sdk test"})
        return names, files

    async def legacy_sse():
        from mcp import ClientSession
        from mcp.client.sse import sse_client
        async with sse_client(url + "/mcp/sse") as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                return [t.name for t in (await s.list_tools()).tools]

    # The legacy HTTP+SSE transport passes the relay too (a long-lived stream).
    if "list_files" not in asyncio.run(legacy_sse()):
        fail("legacy SSE through the relay did not list the tools")
    names, files = asyncio.run(sdk_session(url + "/mcp", body))
    if "cash_flows.ods" not in json.dumps(files):
        fail("the starting file is not in the workspace: %s" % files)
    code = p.wait(timeout=60)
    res = json.loads(read(os.path.join(env.runs, rid, "result.json")))
    if res["ended_by"] != "complete_task" or code != 1:
        fail("complete_task through the SDK did not end the run: exit %d %s" % (code, res))
    check_gone(rid)


def case_hardening(env):
    """Probes from inside a running sandbox through execute_shell."""
    p, rid, url = start_background(env, "hardening", "--pids", "64", "--memory", "128m")

    async def body(s):
        async def sh(cmd):
            r = tool_json(await s.call_tool("execute_shell", {"command": cmd}))
            return r
        out = {}
        out["status"] = (await sh("grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status; id -u"))["stdout"]
        out["rofs"] = await sh("touch /probe 2>&1; echo rc=$?")
        out["net"] = (await sh("cat /proc/net/dev; echo ---; cat /proc/net/route"))["stdout"]
        # cgroup v2, else v1.
        out["limits"] = (await sh(
            "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max; "
            "cat /sys/fs/cgroup/memory.max 2>/dev/null || "
            "cat /sys/fs/cgroup/memory/memory.limit_in_bytes"))["stdout"]
        # A fork bomb in a subshell (a failed fork ends it), counting what started.
        # Only builtins once the bomb has gone off: with the pids limit
        # reached, a $(cat) or a pkill cannot fork (seen in CI under ASan,
        # where the sleeps outlived the subshell). `trap '' TERM; kill 0`
        # ends the sleeps of this tool call's process group, not the shell.
        out["fork"] = (await sh("(i=0; while [ $i -lt 150 ]; do sleep 20 & i=$((i+1)); "
                                "echo $i > /tmp/forks; done) 2>/dev/null; "
                                "read n < /tmp/forks; echo started=$n; "
                                "trap '' TERM; kill 0 2>/dev/null; true"))
        out["mem"] = await sh("x=$(head -c 400000000 /dev/zero | tr '\\0' a); echo survived ${#x}")
        out["alive"] = (await sh("echo still-here"))["stdout"]
        await s.call_tool("complete_task", {})
        return out

    o = asyncio.run(sdk_session(url + "/mcp", body))
    if os.environ.get("SBX_TEST_VERBOSE"):
        print(json.dumps(o, indent=1))
    st = o["status"]
    for want in ("CapEff:\t0000000000000000", "CapPrm:\t0000000000000000",
                 "CapBnd:\t0000000000000000", "NoNewPrivs:\t1"):
        if want not in st:
            fail("hardening: %r not in %r" % (want, st))
    if st.strip().splitlines()[-1] == "0":
        fail("the sandbox runs as root")
    if "Read-only file system" not in json.dumps(o["rofs"]):
        fail("the root filesystem is writable: %s" % o["rofs"])
    dev, route = o["net"].split("---")
    ifaces = [l.split(":")[0].strip() for l in dev.splitlines()[2:] if ":" in l]
    if ifaces != ["lo"] or len(route.strip().splitlines()) > 1:
        fail("network: interfaces %s, routes %r" % (ifaces, route))
    lim = o["limits"].split()
    if lim != ["64", str(128 * 1024 * 1024)]:
        fail("cgroup limits: %s" % lim)
    m = re.search(r"started=(\d+)", o["fork"].get("stdout", ""))
    if not m:
        fail("the fork probe printed no count: %r" % o["fork"])
    started = int(m.group(1))
    if started >= 64:
        fail("the pids limit did not hold: %d processes started" % started)
    if "survived 400000000" in json.dumps(o["mem"]):
        fail("the memory limit did not hold: %s" % o["mem"])
    if "still-here" not in o["alive"]:
        fail("the sandbox did not survive the probes")
    p.wait(timeout=60)
    check_gone(rid)
    print("  caps 0, no_new_privs, uid %s, ro rootfs, only lo, pids held at %d, 400 MB refused"
          % (st.strip().splitlines()[-1], started))


def case_mcp_stdio(env):
    """`sandboxctl mcp` as a stdio server for the official SDK's stdio client."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    rid = env.new_id("mcp")
    params = StdioServerParameters(command=SANDBOXCTL, args=[
        "mcp", "--task", "banking_reserve", "--tasks-dir", TASKS, "--image", pick_image(),
        "--runs-dir", env.runs, "--run-id", rid, "--test-label"])

    async def main():
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                names = [t.name for t in (await s.list_tools()).tools]
                await s.call_tool("complete_task", {})
                return names

    names = asyncio.run(main())
    if "read_range" not in names and "list_files" not in names:
        fail("stdio tools/list: %s" % names)
    for _ in range(100):
        if os.path.exists(os.path.join(env.runs, rid, "result.json")):
            break
        time.sleep(0.1)
    res = json.loads(read(os.path.join(env.runs, rid, "result.json")))
    if res["ended_by"] != "complete_task" or res["outcome"] != "task":
        fail("mcp stdio result: %s" % res)
    if not any(l["dir"] == "agent->server" for l in transcript(os.path.join(env.runs, rid))):
        fail("mcp stdio: the transcript is empty")
    check_gone(rid)


def case_gui(env):
    """A GUI task on the full image: Calc shows the file before the agent starts; a final screenshot is kept."""
    if not image_exists(FULL_IMAGE):
        raise Skip("the full image is missing: run 'sandboxctl build' first")
    tdir = os.path.join(env.dir, "tasks")
    shutil.copytree(os.path.join(TASKS, "banking_reserve"), os.path.join(tdir, "banking_gui"))
    y = os.path.join(tdir, "banking_gui", "task.yaml")
    # A copy under another id has no built-in generator: it runs the committed files.
    text = read(y).replace("id: banking_reserve", "id: banking_gui").replace("gui: false", "gui: true")
    text = "\n".join(l for l in text.splitlines() if not l.startswith("generator:")) + "\n"
    with open(y, "w") as f:
        f.write(text)
    rid = env.new_id("gui")
    p = subprocess.run([SANDBOXCTL, "run", "--task", os.path.join(tdir, "banking_gui"),
                        "--image", FULL_IMAGE, "--runs-dir", env.runs,
                        "--run-id", rid, "--test-label", "--agent", "oracle", "--json"],
                       capture_output=True, text=True, timeout=600)
    res = json.loads(p.stdout)
    if p.returncode != 0 or res["status"] != "pass":
        fail("GUI oracle run: exit %d %s\n%s" % (p.returncode, res, p.stderr))
    shot = os.path.join(env.runs, rid, "screenshot.png")
    with open(shot, "rb") as f:
        head = f.read(8)
    if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(shot) < 30000:
        fail("no drawn final screenshot: %d bytes" % os.path.getsize(shot))
    if not res["timings_ms"].get("gui_ready_after_start"):
        fail("GUI readiness not recorded: %s" % res["timings_ms"])
    check_gone(rid)
    print("  Calc showed the file %.0f ms after start" % res["timings_ms"]["gui_ready_after_start"])


# ---- --network published -----------------------------------------------------

def engine_json(method, url, body=None):
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    c = UnixHTTP(host[len("unix://"):])
    data = json.dumps(body).encode() if body is not None else None
    c.request(method, url, body=data,
              headers={"Content-Type": "application/json"} if data is not None else {})
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, (json.loads(raw) if raw and raw[:1] in (b"[", b"{") else raw)


def engine_exec(cid, cmd, user="1000:1000"):
    """Runs cmd in cid through the Engine API; returns (exit code, output)."""
    st, ex = engine_json("POST", "/containers/%s/exec" % cid, {
        "Cmd": cmd, "AttachStdout": True, "AttachStderr": True, "User": user})
    if st != 201:
        fail("exec create in %s: %s %s" % (cid[:12], st, ex))
    st, out = engine_json("POST", "/exec/%s/start" % ex["Id"], {"Detach": False, "Tty": True})
    st2, info = engine_json("GET", "/exec/%s/json" % ex["Id"])
    text = out.decode(errors="replace") if isinstance(out, bytes) else json.dumps(out)
    return info.get("ExitCode"), text


def test_container(name, net, image, cmd):
    """A labelled helper container on the test network, running cmd (no sandbox-init)."""
    st, c = engine_json("POST", "/containers/create?name=" + name, {
        "Image": image, "Entrypoint": [cmd[0]], "Cmd": cmd[1:], "User": "1000:1000",
        "Labels": {"sandboxctl.test": "1"},
        "HostConfig": {"NetworkMode": net, "CapDrop": ["ALL"], "ReadonlyRootfs": True,
                       "SecurityOpt": ["no-new-privileges:true"]}})
    if st != 201:
        fail("create %s: %s %s" % (name, st, c))
    st, b = engine_json("POST", "/containers/%s/start" % c["Id"])
    if st not in (204, 304):
        fail("start %s: %s %s" % (name, st, b))
    return c["Id"]


def rest(url, path, body=None, timeout=60):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    c.request("POST" if body is not None else "GET", u.path.rstrip("/") + path,
              body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    if r.status != 200:
        fail("%s %s: HTTP %d %s" % (url, path, r.status, data[:300]))
    return json.loads(data)


PROBE = ("import socket,sys\n"
         "try:\n"
         "    socket.create_connection((sys.argv[1], 8080), timeout=4).close(); print('CONNECTED')\n"
         "except OSError as e:\n"
         "    print('BLOCKED', type(e).__name__, e); sys.exit(3)\n")


def case_published(env):
    """--network published: an agent reaches the server straight on a 127.0.0.1 port and
    passes; inside, no capability is left and nothing gets out (IPv4, IPv6, DNS)."""
    image = pick_image()
    if image == DEV_IMAGE:
        image = SLIM_IMAGE
        if not image_exists(image):
            raise Skip("--network published needs iptables: the real image "
                       "(sandboxctl build --slim)")
    # 1. A PASS through the published port, with the agent's URL checked against the engine's.
    if not shutil.which("jq"):
        raise Skip("jq missing (scripts/deps.sh installs it)")
    agent = ('echo "url=$SANDBOX_REST_URL"; curl -sf "$SANDBOX_REST_URL/health"; echo; '
             'sh %s' % os.path.join(SRC, "examples/rest_agent.sh"))
    code, res, rdir, err = env.run("banking_reserve", "pub", "--network", "published",
                                   "--agent", agent, image=image)
    log = read(os.path.join(rdir, "agent.log"))
    if code != 0 or res["status"] != "pass":
        fail("published run did not pass: exit %d %s\n%s\n%s" % (code, res, err, log))
    sb = res["sandbox"]
    pub = sb.get("published") or {}
    hd = sb["hardening"]
    if sb["network"] != "published" or hd["network_mode"] != "bridge":
        fail("result.json network: %s" % sb)
    if not pub.get("host_endpoint", "").startswith("127.0.0.1:") or \
            "url=http://%s" % pub["host_endpoint"] not in log or \
            res["agent"]["endpoint"] != "http://" + pub["host_endpoint"]:
        fail("the agent did not get the published port: %s\n%s" % (pub, log))
    if sorted(hd.get("caps_added_at_start", [])) != ["NET_ADMIN", "SETGID", "SETPCAP",
                                                      "SETUID"] or \
            not hd.get("all_caps_dropped_by_pid1") or not pub.get("dns_off") or \
            not hd["no_new_privileges"] or hd["cap_drop"] != ["ALL"]:
        fail("result.json privileges: %s %s" % (pub, hd))
    check_gone(res["run_id"])
    print("  PASS through %s; relaxed at start %s, all dropped by PID 1"
          % (pub["host_endpoint"], ",".join(hd["caps_added_at_start"])))

    # 2. Egress: a listener this test starts on its own network, reachable from a third
    #    container, and not from the sandbox connected to the same network.
    tag = "sbx-it-pub-%d" % os.getpid()
    made = []
    net_id = None
    try:
        # IPv6 too when the engine allows it (a random ULA subnet), so both families
        # are shown blocked by behaviour, not only by the rules' presence.
        ula = "fd%02x:%04x:%04x::/64" % (os.getpid() % 256, os.getpid() % 65536,
                                         int(time.time()) % 65536)
        spec = {"Name": tag, "Driver": "bridge", "Internal": True, "CheckDuplicate": True,
                "Labels": {"sandboxctl.test": "1"}, "EnableIPv6": True,
                "IPAM": {"Config": [{"Subnet": ula}]}}
        st, n = engine_json("POST", "/networks/create", spec)
        if st != 201:
            for k in ("EnableIPv6", "IPAM"):
                del spec[k]
            st, n = engine_json("POST", "/networks/create", spec)
        if st != 201:
            fail("network create: %s %s" % (st, n))
        net_id = n["Id"]
        made.append(test_container(tag + "-listener", tag, image,
                                   ["python3", "-m", "http.server", "8080", "--bind",
                                    "::", "--directory", "/"]))
        st, info = engine_json("GET", "/containers/%s/json" % made[0])
        addrs = [a for a in (info["NetworkSettings"]["Networks"][tag]["IPAddress"],
                             info["NetworkSettings"]["Networks"][tag]["GlobalIPv6Address"]) if a]
        if not addrs:
            fail("the listener has no address: %s" % info["NetworkSettings"])
        ip = addrs[0]
        for a in addrs:
            reach = None
            for _ in range(50):  # the listener needs a moment to bind
                made.append(test_container(tag + "-probe%d" % len(made), tag, image,
                                           ["python3", "-c", PROBE, a]))
                st, w = engine_json("POST", "/containers/%s/wait" % made[-1])
                reach = w.get("StatusCode")
                if reach == 0:
                    break
                time.sleep(0.2)
            if reach != 0:
                fail("control: the listener [%s]:8080 is not reachable from a third "
                     "container" % a)

        p, rid, url = start_background(env, "pubprobe", "--network", "published",
                                       image=image)
        sid = containers(rid)[0]["Id"]
        st, info = engine_json("GET", "/containers/%s/json" % sid)
        bind = info["HostConfig"]["PortBindings"]["8080/tcp"][0]
        live = info["NetworkSettings"]["Ports"]["8080/tcp"][0]
        # The URL carries the run's token, which the published port requires.
        if bind["HostIp"] != "127.0.0.1" or bind["HostPort"] not in ("", "0") or \
                live["HostIp"] != "127.0.0.1" or \
                not re.fullmatch(r"http://127\.0\.0\.1:%s/[0-9a-f]{32}" % live["HostPort"], url):
            fail("port binding %s / %s, endpoint %s" % (bind, live, url))
        if info["HostConfig"]["Dns"] != ["0.0.0.0"]:
            fail("DNS: %s" % info["HostConfig"]["Dns"])
        def sh(cmd):
            r = rest(url, "/tools/call", {"tool_name": "execute_shell",
                                          "arguments": {"command": cmd}})
            return (r.get("result") or {}).get("stdout", "")

        # Before the test network: joining a user-defined one swaps in Docker's resolver.
        dns = sh("cat /etc/resolv.conf; python3 -c \"import socket; "
                 "socket.getaddrinfo('example.invalid', 80)\" 2>&1 | tail -1")
        st, b = engine_json("POST", "/networks/%s/connect" % net_id, {"Container": sid})
        if st != 200:
            fail("connect the sandbox to %s: %s %s" % (tag, st, b))

        status = sh("grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' "
                    "/proc/self/status /proc/1/status; id -u; id -G")
        route = sh("cat /proc/net/route")
        inet6 = sh("cat /proc/net/if_inet6")
        probes = [sh("python3 -c \"%s\" %s; echo rc=$?" % (PROBE.replace('"', '\\"'), a))
                  for a in addrs]
        probe = probes[0]
        # The rules as the kernel holds them: an exec as root gets the container's
        # capabilities (NET_ADMIN), which PID 1 and its children no longer have.
        v4 = engine_exec(sid, ["iptables", "-S"], user="0")
        v6 = engine_exec(sid, ["ip6tables", "-S"], user="0")
        # The lifecycle's own execs (copy in, tar fallback) run as uid 1000: nothing effective.
        ex = engine_exec(sid, ["grep", "-E", "^(CapEff|CapPrm):", "/proc/self/status"])
        rest(url, "/task/complete", {})
        p.wait(timeout=60)
        if os.environ.get("SBX_TEST_VERBOSE"):
            print(status, route, inet6, probes, dns, v4, v6, sep="\n")
        for want in ("CapInh:\t0000000000000000", "CapPrm:\t0000000000000000",
                     "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000",
                     "CapAmb:\t0000000000000000", "NoNewPrivs:\t1"):
            for who in ("/proc/self/status", "/proc/1/status"):
                if "%s:%s" % (who, want) not in status:
                    fail("%s: %r missing in\n%s" % (who, want, status))
        # Tool code: the agent's uid, in the server's group only for the workspace.
        if status.strip().splitlines()[-2:] != ["1001", "1001 1000"]:
            fail("tool code is not uid 1001 in groups 1001 1000: %s" % status)
        if not any(l.split()[0] != "Iface" and l.split()[0] != "eth0" for l in
                   route.strip().splitlines()[1:]):
            fail("the sandbox was not connected to the test network: %s" % route)
        if len(addrs) > 1 and not any(
                l.split()[-1] not in ("lo",) and not l.startswith(("fe80", "0000"))
                for l in inet6.strip().splitlines()):
            fail("the sandbox got no IPv6 address on the test network: %s" % inet6)
        for a, pr in zip(addrs, probes):
            # Dropped (a timeout, or EPERM from the local firewall), not merely unroutable.
            if "CONNECTED" in pr or "BLOCKED" not in pr or "rc=3" not in pr or \
                    not ("timed out" in pr or "not permitted" in pr):
                fail("egress to [%s]:8080 from the sandbox was not blocked: %s" % (a, pr))
        if "nameserver 0.0.0.0" not in dns or "gaierror" not in dns or \
                "nameserver" in dns.replace("nameserver 0.0.0.0", ""):
            fail("DNS is not off: %s" % dns)
        for name, (rc, out) in (("iptables", v4), ("ip6tables", v6)):
            for want in ("-P OUTPUT DROP", "-A OUTPUT -o lo -j ACCEPT",
                         "-A OUTPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT"):
                if rc != 0 or want not in out:
                    fail("%s -S (rc %s) lacks %r:\n%s" % (name, rc, want, out))
        check_gone(rid)
        print("  listener %s :8080 reachable from a third container, blocked from the "
              "sandbox (%s); caps 0 in every set, uid 1000; v4+v6 OUTPUT DROP" %
              (" and ".join(addrs), probe.split("BLOCKED", 1)[1].split("\n")[0].strip()))
        if ex[0] != 0 or ex[1].count("0000000000000000") != 2:
            fail("an exec as uid 1000 holds capabilities: %s" % (ex,))
        if "-A OUTPUT -d 127.0.0.11/32 -j DROP" not in v4[1]:
            fail("Docker's embedded resolver is not blocked:\n%s" % v4[1])
    finally:
        for cid in made:
            remove_container(cid)
        if net_id:
            for _ in range(3):
                st, _b = engine_json("DELETE", "/networks/%s" % net_id)
                if st in (204, 404):
                    break
                # The sandbox may still be attached when a check failed early.
                engine_json("POST", "/networks/%s/disconnect" % net_id,
                            {"Container": tag, "Force": True})
                for r in env.run_ids:
                    for c in containers(r):
                        engine_json("POST", "/networks/%s/disconnect" % net_id,
                                    {"Container": c["Id"], "Force": True})


def case_runtime(env):
    """--runtime NAME the engine lacks: refused before anything is created, one stderr
    line naming the engine's runtimes, exit 3, no run directory or container, and never
    the default runtime in its place (run and sweep alike); the engine's own default
    runtime named explicitly is run and recorded."""
    _, info = engine("GET", "/info")
    missing = "nosuch-runtime-%d" % os.getpid()
    rid = env.new_id("noruntime")
    p = subprocess.run(env.args(rid, "sales_revenue", pick_image(), "--runtime", missing,
                                "--agent", "oracle"), capture_output=True, text=True, timeout=60)
    lines = p.stderr.splitlines()
    if p.returncode != 3 or len(lines) != 1 or missing not in lines[0] or \
            info["DefaultRuntime"] not in lines[0] or p.stdout:
        fail("run --runtime %s: exit %d, want 3 and one line naming the engine's runtimes:"
             "\n%s%s" % (missing, p.returncode, p.stdout, p.stderr))
    if os.path.exists(os.path.join(env.runs, rid)) or containers(rid):
        fail("a refused --runtime left a run directory or a container")
    out = os.path.join(env.dir, "sweep")
    p = subprocess.run([SANDBOXCTL, "sweep", "--task", "sales_revenue", "--tasks-dir", TASKS,
                        "--agent", "oracle", "--image", pick_image(), "--runtime", missing,
                        "--out", out], capture_output=True, text=True, timeout=60)
    if p.returncode != 3 or len(p.stderr.splitlines()) != 1 or missing not in p.stderr or \
            os.path.exists(os.path.join(out, "runs")):
        fail("sweep --runtime %s: exit %d\n%s" % (missing, p.returncode, p.stderr))
    code, res, _, err = env.run("sales_revenue", "runtime", "--runtime", info["DefaultRuntime"],
                                "--agent", "oracle")
    if code != 0 or res["limits"]["runtime"] != info["DefaultRuntime"]:
        fail("run --runtime %s (the engine's default): exit %d %s\n%s" %
             (info["DefaultRuntime"], code, res["limits"], err))
    check_gone(res["run_id"])


def case_prompt(env):
    """An outside-agent run prints the task's prompt for the person at the terminal: a
    foreign task.json's ESC sequences (title, clear, colour), C1 CSI and bidi overrides
    arrive escaped, its lines and tabs kept; the run then ends on SIGINT, nothing left."""
    d = os.path.join(env.dir, "tasks")
    ref = os.path.join(d, "hostile")
    os.makedirs(os.path.join(ref, "starting_files"))
    shutil.copy(os.path.join(TASKS, "banking_reserve", "files", "cash_flows.ods"),
                os.path.join(ref, "starting_files"))
    shutil.copy(os.path.join(TASKS, "banking_reserve", "oracle", "expected_reserves.ods"),
                os.path.join(ref, "expected.ods"))
    with open(os.path.join(ref, "task.json"), "w") as f:
        json.dump({"id": "hostile", "prompt": "Fill\x1b]0;pwned\x07 D\x1b[2J\u009b32m "
                   "PASS\u202e\n\tline two", "files": ["cash_flows.ods"],
                   "oracle": "expected.ods", "output": "cash_flows.ods"}, f)
    rid = env.new_id("prompt")
    args = env.args(rid, "hostile", pick_image(), "--json", "--timeout", "60")
    args[args.index(TASKS)] = d
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    json.loads(p.stdout.readline())  # the connection: the sandbox is ready
    err = ""
    while "Waiting for an agent" not in err:
        line = p.stderr.readline()
        if not line:
            fail("the run ended before it waited for an agent:\n" + err)
        err += line
    stop_process(p, signal.SIGINT)
    want = ("Task prompt: Fill\\x1b]0;pwned\\x07 D\\x1b[2J\\u009b32m PASS\\u202e\n"
            "\tline two\n")
    if want not in err or any(c in err for c in ("\x1b", "\x07", "\u009b", "\u202e")):
        fail("the prompt reached the terminal unescaped:\n%r" % err)
    check_gone(rid)



def case_gc_images(env):
    """gc's images and volumes: a task's superseded image and an old bundle volume (with
    its marker) are shown by --dry-run and removed by gc; the task's newest image, the
    current bundle, and an image or a volume that a container (not running) uses stay."""
    js = {"Content-Type": "application/json"}
    tag = "gc%d" % os.getpid()
    repo = "sandboxctl-task/" + tag
    old_vol, used_vol = "sandboxctl-bundle-%sold" % tag, "sandboxctl-bundle-%suse" % tag
    made = []

    def create(image, **host):
        st, c = engine("POST", "/containers/create",
                       json.dumps({"Image": image, "Labels": {"sandboxctl.test": "1"},
                                   "Cmd": ["true"], "HostConfig": host}), headers=js)
        if st != 201:
            fail("create on %s: %s %s" % (image, st, c))
        made.append(c["Id"])
        return c["Id"]

    def exists(kind, name):
        return engine("GET", "/%s/%s" % (kind, urllib.parse.quote(name, safe="")) +
                      ("/json" if kind == "images" else ""))[0] == 200

    def gc(*extra):
        p = subprocess.run([SANDBOXCTL, "gc", "--json"] + list(extra), capture_output=True,
                           text=True, timeout=120)
        if p.returncode != 0:
            fail("gc %s: exit %d: %s" % (extra, p.returncode, p.stderr))
        return {o["name"]: o for o in json.loads(p.stdout) if o.get("kind")}

    base = pick_image()  # any image will do: the test's images are commits of it
    src = create(base)
    try:
        changes = urllib.parse.quote("LABEL sandboxctl.task-image=" + repo)
        for t in ("old", "older", "new"):
            if t != "old":
                time.sleep(1.1)  # Created is in seconds: the newest must be told apart
            st, b = engine("POST", "/commit?container=%s&repo=%s&tag=%s&changes=%s" %
                           (src, repo, t, changes))
            if st != 201:
                fail("commit %s: %s %s" % (t, st, b))
        create(repo + ":old")  # in use (created, never started)
        for v in (old_vol, old_vol + ".ready", used_vol, used_vol + ".ready"):
            st, b = engine("POST", "/volumes/create", json.dumps({"Name": v}), headers=js)
            if st != 201:
                fail("volume %s: %s %s" % (v, st, b))
        create(base, Binds=[used_vol + ":/mnt:ro"])
        bundles = exists("images", DEFAULT_SLIM_IMAGE)  # the current bundle is told by it

        dry = gc("--dry-run")
        want = {repo + ":older": "superseded"}
        if bundles:
            want.update({old_vol: "old bundle"})
        for name, why in want.items():
            if name not in dry or dry[name]["reason"] != why or dry[name]["removed"]:
                fail("--dry-run: %s not shown as %s: %s" % (name, why, dry.get(name)))
        for name in (repo + ":old", repo + ":new", used_vol, old_vol + ".ready",
                     used_vol + ".ready"):
            if name in dry:
                fail("--dry-run would remove %s: %s" % (name, dry[name]))
        if not exists("images", repo + ":older") or not exists("volumes", old_vol):
            fail("--dry-run removed something")

        done = gc()
        for name in want:
            if not done.get(name, {}).get("removed"):
                fail("gc did not remove %s: %s" % (name, done.get(name)))
        gone = [repo + ":older"] + ([old_vol, old_vol + ".ready"] if bundles else [])
        kept = [repo + ":old", repo + ":new", used_vol, used_vol + ".ready"]
        for name in gone + kept:
            there = exists("images" if name.startswith(repo) else "volumes", name)
            if there != (name in kept):
                fail("after gc, %s is %s" % (name, "there" if there else "gone"))
        print("gc: removed %s; kept %s" % (", ".join(gone), ", ".join(kept)))
    finally:
        for c in made:
            engine("DELETE", "/containers/%s?force=1" % c)
        for t in ("old", "older", "new"):
            engine("DELETE", "/images/%s?force=1" % urllib.parse.quote("%s:%s" % (repo, t), safe=""))
        for v in (old_vol, old_vol + ".ready", used_vol, used_vol + ".ready"):
            engine("DELETE", "/volumes/%s?force=1" % v)


CASES = {
    "oracle": case_oracle, "demo": case_demo, "rest": case_rest, "wrong": case_wrong,
    "agent-error": case_agent_error, "agent-mistakes": case_agent_mistakes,
    "image-missing": case_image_missing, "seed-own-generator": case_seed_own_generator,
    "timeout": case_timeout, "sigint": case_sigint, "sigkill": case_sigkill,
    "sdk": case_sdk, "hardening": case_hardening, "mcp-stdio": case_mcp_stdio, "gui": case_gui,
    "published": case_published, "runtime": case_runtime, "prompt": case_prompt,
    "trajectory": case_trajectory, "gc-images": case_gc_images,
}


def main():
    names = sys.argv[1:] or list(CASES)
    try:
        ensure_dev_image()
    except subprocess.CalledProcessError as e:
        print("cannot build the dev image: %s" % e)
        return 1
    return run_cases(names, CASES, Env)


if __name__ == "__main__":
    sys.exit(main())
