#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A grade that fails for any reason ends that episode as a grade error, never the
host process (issue 24). The grader runs in a child process with limits; these
cases attack it through every command that runs episodes.

The hostile output: an agent (on the host) has tool code in the sandbox
(execute_python) write cash_flows.ods with a 50,000-term `=1+1+...+1` formula
and no cached value in D2, the graded column, and exits. On a
host that grades in process, the native evaluator's recursion overflowed the
stack: `run`, `sweep` and `serve` died of SIGSEGV. Once the evaluator is
bounded (lib/sheet) the same output is graded normally; either way every
command must finish the episode with a result and keep going.

  run     `run`: a result.json (status fail, error.kind grade_error when the
          grader died), exit 1, no signal, the container gone.
  faults  the isolation itself, whatever the evaluator does: test-only faults
          in the grading child (SBX_TEST_GRADER_FAULT, honoured only for runs
          labelled --test-label): SIGSEGV, abort, its CPU limit, its memory
          limit, a garbage answer, an answer over the cap; each a grade error
          with its one-line reason, exit 1, the container gone.
  sweep   a sweep of the hostile agent (2 episodes) finishes with every
          result, no grade error retried, the summary counting them
          (grade_errors), and --resume afterwards runs nothing again.
  serve   two clients of one `serve`: one episode's output is hostile, the
          other's is the oracle's answer written through the tools; the
          second is graded normally (reward 1), the service still answers a
          third claim, and SIGTERM leaves no container.
Usage: test_grade_isolation.py run|faults|sweep|serve
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "run"))
sys.path.insert(0, os.path.join(HERE, "..", "serve"))
import test_integration as it  # noqa: E402

# Tool code (stdlib only) that puts the formula into D2 of the workspace's
# cash_flows.ods, keeping everything else.
BOMB = r'''
import re, zipfile
p = "/workspace/cash_flows.ods"
zin = zipfile.ZipFile(p)
parts = {i.filename: zin.read(i.filename) for i in zin.infolist()}
zin.close()
xml = parts["content.xml"].decode()
ends = [m.start() for m in re.finditer(r"</table:table-row>", xml)]
cell = '<table:table-cell table:formula="of:=%s"/>' % "+".join(["1"] * TERMS)
xml = xml[:ends[1]] + cell + xml[ends[1]:]
parts["content.xml"] = xml.encode()
with zipfile.ZipFile(p + ".new", "w") as z:
    z.writestr(zipfile.ZipInfo("mimetype"), parts.pop("mimetype"))
    for name, data in parts.items():
        z.writestr(name, data, zipfile.ZIP_DEFLATED)
import os
os.replace(p + ".new", p)
print("written", len(xml))
'''.replace("TERMS", "50000")

# The host agent: the tool call above through the REST door, then it exits
# (complete_task would have the sandbox's server compute the formula: that is
# the server's bound, lib/sheet's, not the host's).
AGENT = r'''
import json, os, sys, urllib.request
rest = os.environ["SANDBOX_REST_URL"]
def post(path, body):
    req = urllib.request.Request(rest + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read() or b"{}")
out = post("/tools/call", {"tool_name": "execute_python", "arguments": {"code": sys.argv[1]}})
print(json.dumps(out)[:300], file=sys.stderr)
'''


def need_python():
    """The hostile output is written by tool code: the real image has python3, the dev image not."""
    if os.environ.get("SBX_RUN_TEST_IMAGE") != "real":
        raise it.Skip("execute_python needs the real image (SBX_RUN_TEST_IMAGE=real)")


def hostile_agent(dirname):
    path = os.path.join(dirname, "bomb_agent.py")
    code = os.path.join(dirname, "bomb.py")
    with open(path, "w") as f:
        f.write(AGENT)
    with open(code, "w") as f:
        f.write(BOMB)
    return "python3 %s \"$(cat %s)\"" % (path, code)


def check_survived(code, res, rdir, err, what):
    """Finished with a result, as a grade error or an honest fail, nothing left behind."""
    if code < 0 or code not in (0, 1):
        it.fail("%s: exit %d (a signal is the host dying)\n%s" % (what, code, err))
    if not os.path.isfile(os.path.join(rdir, "result.json")):
        it.fail("%s: no result.json" % what)
    if res["status"] != "fail" or res["outcome"] != "task":
        it.fail("%s: want fail: %s" % (what, res))
    e = res.get("error")
    if e and e["kind"] != "grade_error":
        it.fail("%s: an error that is not a grade error: %s" % (what, e))
    if e and res["grade"]["graded"]:
        it.fail("%s: a grade error is not graded: %s" % (what, res["grade"]))
    it.check_gone(res["run_id"])
    return e


def case_run(env):
    need_python()
    code, res, rdir, err = env.run("banking_reserve", "bomb", "--agent", hostile_agent(env.dir))
    e = check_survived(code, res, rdir, err, "run with the 50,000-term formula")
    if e and not any(s in e["message"] for s in ("grader crashed", "grader exited",
                                                 "limit")):
        it.fail("grade error without its reason: %s" % e)
    if e and "sandboxctl: grade_error: grader" not in err:
        it.fail("stderr does not say why: %s" % err)
    print("ok: run survived: %s" % (e["message"] if e else res["grade"]))


def asan_build():
    p = subprocess.run(["ldd", it.SANDBOXCTL], capture_output=True, text=True)
    return "libasan" in p.stdout


FAULTS = [
    ("segv", ("grader crashed: signal 11 (SIGSEGV)", "grader exited with status")),
    ("abort", ("grader crashed: signal 6 (SIGABRT)", "grader exited with status")),
    ("cpu", ("grader exceeded its 120 s CPU limit",)),
    ("memory", ("grader exceeded its 2 GiB memory limit",)),
    ("garbage", ("grader answered garbage (not a JSON object)",)),
    ("flood", ("grader's answer is over 64 MiB",)),
]


def case_faults(env):
    asan = asan_build()
    for fault, want in FAULTS:
        if fault == "memory" and asan:
            want = ("grader exited with status 3",)  # no RLIMIT_AS under ASan
        os.environ["SBX_TEST_GRADER_FAULT"] = fault
        try:
            code, res, rdir, err = env.run("banking_reserve", fault, "--agent", "oracle")
        finally:
            del os.environ["SBX_TEST_GRADER_FAULT"]
        e = check_survived(code, res, rdir, err, "fault " + fault)
        if code != 1 or not e or not any(e["message"].startswith(w) for w in want):
            it.fail("fault %s: want exit 1 and a grade error %s: exit %d %s\n%s" %
                    (fault, want, code, e, err))
        print("ok: %s: %s" % (fault, e["message"]))
    # Only for runs labelled as tests: without --test-label the fault is not made.
    os.environ["SBX_TEST_GRADER_FAULT"] = "segv"
    try:
        rid = env.new_id("unlabelled")
        args = [a for a in env.args(rid, "banking_reserve", it.pick_image(), "--json",
                                    "--agent", "oracle") if a != "--test-label"]
        p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    finally:
        del os.environ["SBX_TEST_GRADER_FAULT"]
    if p.returncode != 0 or json.loads(p.stdout)["status"] != "pass":
        it.fail("an unlabelled run must ignore the test fault: %d %s %s" %
                (p.returncode, p.stdout, p.stderr))
    it.check_gone(rid)


def sweep(*args):
    args = [it.SANDBOXCTL, "sweep"] + list(args)
    return subprocess.run(args, capture_output=True, text=True, timeout=600)


def sweep_results(out):
    with open(os.path.join(out, "results.jsonl")) as f:
        return [json.loads(line) for line in f.read().splitlines()]


def sweep_clean(out):
    runs = os.path.join(out, "runs")
    for rid in os.listdir(runs) if os.path.isdir(runs) else []:
        it.check_gone(rid)


def case_sweep(env):
    need_python()
    out = os.path.join(env.dir, "sweep")
    p = sweep("--tasks-dir", it.TASKS, "--image", it.pick_image(), "--out", out,
              "--test-label", "--quiet", "--task", "banking_reserve",
              "--agent", hostile_agent(env.dir), "--epochs", "2", "--jobs", "2", "--retries", "2")
    if p.returncode not in (0, 1):
        it.fail("sweep: exit %d (want 0 or 1; a signal is the host dying)\n%s" %
                (p.returncode, p.stderr[-3000:]))
    lines = sweep_results(out)
    if sorted(l["episode"] for l in lines) != [0, 1] or \
            any(l["status"] != "fail" or l["attempt"] != 1 for l in lines):
        it.fail("want two fail lines, one attempt each (a grade error is never retried): %s"
                % lines)
    with open(os.path.join(out, "summary.json")) as f:
        o = json.load(f)["overall"]
    if any(l.get("error") for l in lines) and o.get("grade_errors") != 2:
        it.fail("the summary must count the grade errors: %s" % o)
    sweep_clean(out)
    p = sweep("--resume", out)
    if p.returncode not in (0, 1) or len(sweep_results(out)) != 2:
        it.fail("--resume: exit %d, %d lines\n%s" % (p.returncode, len(sweep_results(out)),
                                                     p.stderr[-3000:]))
    sweep_clean(out)
    print("ok: sweep and --resume: %s" % [l.get("error") for l in lines])


def case_serve(env):
    need_python()
    import test_serve_integration as si
    if not si.image_exists(si.SLIM):
        raise it.Skip("needs %s" % si.SLIM)
    s = si.Service("--pool", "2")
    try:
        bad = s.claim()
        good = s.claim()
        out = si.rest_post(bad["rest_url"], "/tools/call",
                           {"tool_name": "execute_python", "arguments": {"code": BOMB}})
        if "written" not in json.dumps(out):
            it.fail("the hostile tool call did not write: %s" % out)
        # The other client writes the oracle's answer in place, through the tools.
        oracle = os.path.join(it.TASKS, "banking_reserve", "oracle", "expected_reserves.ods")
        with open(oracle, "rb") as f:
            data = f.read()
        code = ("import base64; open('/workspace/cash_flows.ods', 'wb').write("
                "base64.b64decode('%s'))" % __import__("base64").b64encode(data).decode())
        si.rest_post(good["rest_url"], "/tools/call",
                     {"tool_name": "execute_python", "arguments": {"code": code}})
        rb = s.finish(bad["id"])
        if rb["status"] != "fail" or (rb.get("error_kind") not in (None, "grade_error")):
            it.fail("the hostile episode: want fail (a grade error or graded): %s" % rb)
        rg = s.finish(good["id"])
        if rg["status"] != "pass" or rg["reward"] != 1:
            it.fail("the other client's episode must be graded normally: %s" % rg)
        third = s.claim()
        st, d = s.call("DELETE", "/v1/episodes/%s" % third["id"])
        if st != 200:
            it.fail("serve stopped serving: DELETE HTTP %d %s" % (st, d))
        s.stop_cleanly()
        print("ok: serve survived: hostile %s / %s; other reward %s" %
              (rb["status"], rb.get("error"), rg["reward"]))
    finally:
        s.cleanup()


CASES = {"run": case_run, "faults": case_faults, "sweep": case_sweep, "serve": case_serve}

if __name__ == "__main__":
    it.run_main(lambda: it.run_case(CASES, alarm_s=290))
