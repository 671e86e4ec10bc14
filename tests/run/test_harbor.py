#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Harbor task directories on the real engine (tests/data/harbor/): the
oracle gets reward 1, an agent that does nothing 0; `tasks validate` names
what is wrong with the broken ones (tests/data/harbor-invalid/); and the
reward cannot be forged from the agent's sandbox, since the verifier runs in
a fresh one that gets only the workdir.

Usage: test_harbor.py CASE  (see CASES at the bottom). The tasks' Dockerfiles
are FROM sandboxctl/sandbox-slim:latest (built offline here): skipped without it.
"""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_integration import (Env, SANDBOXCTL, SRC, Skip, check_gone, fail, image_exists,  # noqa: E402
                              read, run_case)
from itest import DEFAULT_SLIM_IMAGE  # noqa: E402

HARBOR = os.path.join(SRC, "tests", "data", "harbor")
INVALID = os.path.join(SRC, "tests", "data", "harbor-invalid")
HOSTILE = os.path.join(SRC, "tests", "data", "harbor-hostile")
# What the tasks' Dockerfiles are FROM (fixed in tests/data, so not
# $SBX_TEST_SLIM_IMAGE: the base of a task image is the Dockerfile's).
BASE = DEFAULT_SLIM_IMAGE


def need_base():
    if not image_exists(BASE):
        raise Skip("%s missing: run 'sandboxctl build --slim' first" % BASE)


def harbor_run(env, task, tag, agent, *extra, timeout=240, root=HARBOR):
    need_base()
    rid = env.new_id(tag)
    p = subprocess.run([SANDBOXCTL, "run", "--task-dir", os.path.join(root, task),
                        "--agent", agent, "--runs-dir", env.runs, "--run-id", rid,
                        "--test-label", "--json"] + list(extra),
                       capture_output=True, text=True, timeout=timeout)
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    if len(lines) != 1:
        fail("%s: expected one JSON line, got %r\nstderr: %s" % (tag, p.stdout, p.stderr))
    with open(os.path.join(env.runs, rid, "result.json")) as f:
        res = json.load(f)
    check_gone(rid)
    return p.returncode, res, os.path.join(env.runs, rid), p.stderr


def check_verifier(res, reward, tag):
    v = res.get("verifier")
    if not v or v["reward"] != reward:
        fail("%s: reward %r, wanted %r: %s" % (tag, v and v["reward"], reward, res))
    if len(v["workdir_sha256"] or "") != 64 or v["workdir_bytes"] <= 0:
        fail("%s: no workdir archive recorded: %s" % (tag, v))
    if v["exit_code"] is None or v["timed_out"]:
        fail("%s: test.sh's exit code not recorded: %s" % (tag, v))
    return v


def case_oracle(env):
    """Both tasks: the oracle (solution/solve.sh in the sandbox) gets reward 1, and the
    result records the verifier's run; reward.json's other keys come along."""
    for task, source in (("pybugfix", "reward.txt"), ("texttransform", "reward.json")):
        code, res, rdir, err = harbor_run(env, task, "oracle-" + task, "oracle")
        if code != 0 or res["status"] != "pass":
            fail("%s: oracle did not pass: exit %d %s\n%s" % (task, code, res, err))
        v = check_verifier(res, 1, task)
        if v["workdir"] != "/workspace":
            fail("%s: verifier.workdir %r" % (task, v["workdir"]))
        if v["reward_file"] != source:
            fail("%s: reward read from %r, wanted %s" % (task, v["reward_file"], source))
        if task == "texttransform" and v["rewards"] != {"reward": 1, "lines": 3}:
            fail("reward.json's keys not recorded: %s" % v["rewards"])
        if task == "pybugfix" and "OK" not in (v["output_tail"] or ""):
            fail("test.sh's output tail missing: %r" % v["output_tail"])
        # What the verifier saw is kept: the solved file.
        if task == "pybugfix" and "len(values)\n" not in read(os.path.join(rdir, "workdir",
                                                                            "stats.py")):
            fail("workdir/stats.py is not the solved one")
        print("  %s: reward 1, verifier %.0f ms (test.sh %.0f ms)" % (
            task, v["timings_ms"]["total"], v["timings_ms"]["test_sh"]))


def case_null(env):
    """An agent that does nothing gets reward 0 on both."""
    for task in ("pybugfix", "texttransform"):
        code, res, _, err = harbor_run(env, task, "null-" + task, "true")
        if res["status"] != "fail":
            fail("%s: a null agent did not fail: %s\n%s" % (task, res, err))
        check_verifier(res, 0, task)


# The start of each forger: sh(cmd) runs cmd through the sandbox's execute_shell tool.
SHELL_TOOL = r"""
import json, os, sys, threading, urllib.request
base = os.environ["SANDBOX_REST_URL"]
def sh(cmd, shown=300):
    req = urllib.request.Request(base + "/tools/call", method="POST",
        data=json.dumps({"tool_name": "execute_shell", "arguments": {"command": cmd}}).encode(),
        headers={"Content-Type": "application/json"})
    print(cmd.splitlines()[0], "->", urllib.request.urlopen(req, timeout=60).read()[:shown])
"""

# A host agent that forges through the sandbox's execute_shell tool, one way per run
# (argv[1]): a reward file where Harbor's verifier reads it (and in the workdir); its own
# copy of the tests; a double-forked process rewriting the workdir with the solution during
# the verification; PATH shims for python3 and pytest in writable directories; symlinks
# from the workdir to /tests and /logs. In Harbor's one container each could make it 1.
FORGER = SHELL_TOOL + r"""
good = "def mean(values):\n    if not values:\n        raise ValueError()\n    return sum(values) / len(values)\n"
mode = sys.argv[1]
if mode == "reward-files":
    sh("mkdir -p /logs/verifier; echo '{\"reward\": 1}' > /logs/verifier/reward.json; "
       "echo 1 > /logs/verifier/reward.txt; mkdir -p /workspace/logs/verifier; "
       "echo 1 > /workspace/logs/verifier/reward.txt; "
       "echo '{\"reward\": 1}' > /workspace/logs/verifier/reward.json")
elif mode == "tests":
    sh("mkdir -p /tests /workspace/tests; for d in /tests /workspace/tests; do "
       "printf '#!/bin/sh\\necho 1 > /logs/verifier/reward.txt\\n' > $d/test.sh; "
       "printf 'import sys\\nsys.exit(0)\\n' > $d/test_stats.py; done")
elif mode == "daemon":
    sh("cat > /tmp/good.py <<'EOF'\n" + good + "EOF\n")
    # The tool's own cleanup ends what a finished call left behind, so the rewriter is a
    # call still running (double-forked inside it) when the agent completes the task.
    daemon = ("setsid sh -c 'echo 1 > /tmp/alive; while [ ! -e /workspace/.task_complete ]; do "
              "sleep 0.05; done; sleep 1.5; while :; do cp /tmp/good.py /workspace/stats.py; "
              "echo 1 > /workspace/reward.txt; sleep 0.05; done' </dev/null >/dev/null 2>&1 & "
              "sleep 600")
    threading.Thread(target=sh, args=(daemon,), daemon=True).start()
    sh("sleep 1; echo daemon-$(cat /tmp/alive)")
elif mode == "shim":
    sh("for d in /tmp/bin /workspace/bin /workspace /usr/local/bin /usr/bin; do mkdir -p $d; "
       "for p in python3 pytest; do "
       "printf '#!/bin/sh\\necho 1 > /logs/verifier/reward.txt\\nexit 0\\n' > $d/$p; "
       "chmod +x $d/$p; done; done; echo PATH=$PATH")
elif mode == "symlinks":
    sh("ln -s /logs/verifier/reward.txt /workspace/reward-link; ln -s /tests /workspace/tests-link; "
       "ln -s ../../logs /workspace/logs-up; ls -la /workspace")
req = urllib.request.Request(base + "/task/complete", method="POST", data=b"{}")
urllib.request.urlopen(req, timeout=60).read()
"""


def case_forgery(env):
    """Each forgery of FORGER fails, in a run of its own: reward 0 (the oracle gets 1 on
    the same task); the daemon's rewrite and the symlinks never reach the verifier."""
    path = os.path.join(env.dir, "forger.py")
    with open(path, "w") as f:
        f.write(FORGER)
    for mode in ("reward-files", "tests", "daemon", "shim", "symlinks"):
        code, res, rdir, err = harbor_run(env, "pybugfix", "forgery-" + mode,
                                          "python3 %s %s" % (path, mode))
        log = read(os.path.join(rdir, "agent.log"))
        if "->" not in log or (mode == "daemon" and "daemon-1" not in log):
            fail("%s: the forging agent did not run its tools: %s" % (mode, log[-2000:]))
        v = check_verifier(res, 0, "forgery-" + mode)
        if res["status"] != "fail":
            fail("%s: status %s: %s" % (mode, res["status"], res))
        wd = os.path.join(rdir, "workdir")
        if mode == "symlinks":
            if v["workdir_entries_refused"] != 3:
                fail("symlinks to /tests and /logs not refused: %s" % v)
            for name in ("reward-link", "tests-link", "logs-up"):
                if os.path.lexists(os.path.join(wd, name)):
                    fail("symlinks: %s reached the verifier's workdir" % name)
        # The rewriter starts 1.5 s after complete_task, during the verification in Harbor's
        # one container; here it was killed, and the verifier had its own copy anyway.
        if mode == "daemon" and ("len(values) - 1" not in read(os.path.join(wd, "stats.py")) or
                                 os.path.exists(os.path.join(wd, "reward.txt"))):
            fail("daemon: the background process rewrote the workdir the verifier saw")
        print("  %s: reward 0 (%d workdir entries refused)" % (mode, v["workdir_entries_refused"]))


# On a task whose workdir is /app: where the tools run and what is mounted (one tmpfs at
# /app, none at /workspace, the root read-only), then reward files in the verifier's and
# in the workdir's paths, an edited copy of the tests, a symlink to /logs.
APP_FORGER = SHELL_TOOL.replace("shown=300", "shown=2000") + r"""
sh("echo PWD=$(pwd); touch /app-x 2>/dev/null || echo ro-root; "
   "awk '$3 == \"tmpfs\" { print \"M=\" $2 }' /proc/mounts")
sh("echo 1 > /logs/verifier/reward.txt; mkdir -p /app/logs/verifier /app/tests; "
   "echo 1 > /app/logs/verifier/reward.txt; echo 1 > /app/reward.txt; "
   "printf '#!/bin/sh\\necho 1 > /logs/verifier/reward.txt\\n' > /app/tests/test.sh; "
   "ln -s /logs/verifier/reward.txt /app/reward-link; echo 1 > output.txt; ls -la /app")
req = urllib.request.Request(base + "/task/complete", method="POST", data=b"{}")
urllib.request.urlopen(req, timeout=60).read()
"""


def case_app(env):
    """A task in /app (the Dockerfile's WORKDIR, as Terminal-Bench's): the oracle gets 1
    (solve.sh and test.sh run in /app, the image's input.txt seeded there), a null agent
    0; the tools' workspace is a tmpfs at /app on a read-only root, and forgeries give 0."""
    code, res, rdir, err = harbor_run(env, "apptransform", "app-oracle", "oracle")
    if code != 0 or res["status"] != "pass":
        fail("oracle did not pass: exit %d %s\n%s" % (code, res, err))
    if check_verifier(res, 1, "app-oracle")["workdir"] != "/app":
        fail("app: result.json's verifier.workdir is not /app: %s" % res["verifier"])
    if sorted(os.listdir(os.path.join(rdir, "workdir"))) != [".task_complete", "input.txt",
                                                              "output.txt"]:
        fail("the verifier's workdir: %s" % os.listdir(os.path.join(rdir, "workdir")))
    if not res["sandbox"]["hardening"]["readonly_rootfs"] or \
            not res["sandbox"]["hardening"].get("bundle"):
        fail("app: not the hardened foreign sandbox: %s" % res["sandbox"])
    # A ready image (--image) whose WORKDIR is /app, for a task that declares none: /app.
    code, res, _, err = harbor_run(env, "pybugfix", "app-image", "true", "--image",
                                   res["sandbox"]["image_id"])
    if check_verifier(res, 0, "app-image")["workdir"] != "/app":
        fail("app-image: the image's WORKDIR was not the workspace: %s\n%s" % (res, err))
    code, res, _, err = harbor_run(env, "apptransform", "app-null", "true")
    if res["status"] != "fail":
        fail("a null agent did not fail: %s\n%s" % (res, err))
    check_verifier(res, 0, "app-null")
    path = os.path.join(env.dir, "app_forger.py")
    with open(path, "w") as f:
        f.write(APP_FORGER)
    code, res, rdir, err = harbor_run(env, "apptransform", "app-forgery", "python3 " + path)
    log = read(os.path.join(rdir, "agent.log"))
    for want in ("PWD=/app", "ro-root", "M=/app", "reward-link"):
        if want not in log:
            fail("app forgery: %r not in the agent's log: %s" % (want, log[-3000:]))
    if "M=/workspace" in log:
        fail("app: a tmpfs at /workspace too: %s" % log[-3000:])
    v = check_verifier(res, 0, "app-forgery")
    if res["status"] != "fail" or v["workdir_entries_refused"] != 1:
        fail("app forgery: %s" % res)
    # /app a symlink to /etc in the image: the tmpfs would cover /etc; refused in one line.
    code, res, _, err = harbor_run(env, "workdir-link", "app-link", "true", root=HOSTILE)
    msg = (res.get("error") or {}).get("message", "")
    if res["status"] != "infra_error" or "has '/app' as a symlink" not in msg or "\n" in msg:
        fail("workdir-link: %s\n%s" % (res, err))
    print("  apptransform: oracle 1, null 0, forgery 0 (workspace /app); a symlink refused")


def case_cap(env):
    """A workdir past the archive cap: sandbox_failed, in one line."""
    code, res, _, err = harbor_run(env, "texttransform", "cap",
                                   "curl -s -X POST -H 'Content-Type: application/json' "
                                   "--data '{\"tool_name\": \"execute_shell\", \"arguments\": "
                                   "{\"command\": \"head -c 70000000 /dev/zero > /workspace/big\"}}' "
                                   "$SANDBOX_REST_URL/tools/call >/dev/null && "
                                   "curl -s -X POST $SANDBOX_REST_URL/task/complete")
    e = res.get("error") or {}
    if res["status"] != "sandbox_failed" or e.get("kind") != "workdir_too_large":
        fail("cap: %s\n%s" % (res, err))
    if "\n" in e.get("message", "") or "cap" not in e.get("message", ""):
        fail("cap: not one line naming the cap: %r" % e.get("message"))


def case_hostile(env):
    """A hostile verifier: 30 MB of output, a FIFO reward.json, a 10 MB reward.txt give
    no reward and one line why, the output's tail only; its output file replaced by a
    FIFO hangs nothing (reward 0.5: partial); past its timeout, no reward."""
    code, res, _, err = harbor_run(env, "flood", "flood", "true", root=HOSTILE)
    v = res["verifier"]
    if res["status"] != "fail" or v["reward"] is not None or \
            v["error"] != "reward.txt is over 64 bytes" or \
            (res.get("error") or {}).get("kind") != "grade_error":
        fail("flood: %s\n%s" % (res, err))
    if len(v["output_tail"]) > 2048 or not v["output_tail"].endswith("END-OF-FLOOD\n"):
        fail("flood: output tail %r" % v["output_tail"][-100:])
    code, res, _, err = harbor_run(env, "fifo", "fifo", "true", root=HOSTILE)
    v = res["verifier"]
    if res["status"] != "partial" or v["reward"] != 0.5 or v["output_tail"] is not None or \
            v["timed_out"] or res["score"] != 0.5:
        fail("fifo: %s\n%s" % (res, err))
    # A task image labelled as ours, with its own ENTRYPOINT and USER root: it runs as any
    # foreign image, our PID 1 from the bundle (test.sh gives 1 only when it finds that).
    code, res, _, err = harbor_run(env, "entrypoint", "entrypoint", "true", root=HOSTILE)
    if res["verifier"]["reward"] != 1 or not res["sandbox"]["hardening"].get("bundle"):
        fail("entrypoint: the task image's own PID 1 ran: %s\n%s" % (res, err))
    code, res, _, err = harbor_run(env, "slow", "slow", "true", root=HOSTILE)
    v = res["verifier"]
    if res["status"] != "fail" or not v["timed_out"] or v["reward"] is not None or \
            v["error"] != "test.sh ran past the verifier's 2 s timeout":
        fail("slow: %s\n%s" % (res, err))


def validate(path):
    p = subprocess.run([SANDBOXCTL, "tasks", "validate", path], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, (p.stdout + p.stderr).strip()


def case_validate(env):
    """`tasks validate` passes the good tasks and names each broken one's fault in one line."""
    need_base()
    for verb in ("validate", "list"):
        p = subprocess.run([SANDBOXCTL, "tasks", verb, "--tasks-dir", HARBOR],
                           capture_output=True, text=True, timeout=60)
        names = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
        if p.returncode != 0 or len(names) != 3 or "invalid" in p.stdout or \
                not all(("pybugfix" in n or "transform" in n) for n in names):
            fail("tasks %s --tasks-dir: %d %r %s" % (verb, p.returncode, p.stdout, p.stderr))
    for task in ("pybugfix", "texttransform", "apptransform"):
        code, out = validate(os.path.join(HARBOR, task))
        if code != 0 or not out.endswith("OK"):
            fail("%s: validate: %d %s" % (task, code, out))
    want = {
        "bad-toml": "bad-toml/task.toml:5:15: expected a value",
        "no-test": "no-test: tests/test.sh is missing",
        "missing-base": "missing-base/environment/Dockerfile:2: FROM image "
                        "'sandboxctl-test/no-such-base:1' is not on the engine",
        "network": "network/task.toml:2:16: environment.network_mode 'public' asks for network",
        "steps": "multi-step tasks ([[steps]]) are not supported",
        "workdir": "workdir/environment/Dockerfile:2: WORKDIR '/tmp/work': the sandbox's own "
                   "mount or a system directory, cannot be the task's workdir",
    }
    for task, text in want.items():
        code, out = validate(os.path.join(INVALID, task))
        if code == 0 or text not in out or len(out.splitlines()) != 1:
            fail("%s: validate: exit %d, %r (wanted one line with %r)" % (task, code, out, text))
    # A run of the task whose base is missing fails in one line naming the image.
    rid = env.new_id("missing-base")
    p = subprocess.run([SANDBOXCTL, "run", "--task-dir", os.path.join(INVALID, "missing-base"),
                        "--agent", "oracle", "--runs-dir", env.runs, "--run-id", rid,
                        "--test-label"], capture_output=True, text=True, timeout=120)
    if p.returncode == 0 or "'sandboxctl-test/no-such-base:1' is not on the engine" not in p.stderr:
        fail("run of missing-base: %d %s" % (p.returncode, p.stderr))


def case_sweep(env):
    """sweep --task-dir over the directory of Harbor tasks: all pass with the oracle."""
    need_base()
    out = os.path.join(env.dir, "sweep")
    p = subprocess.run([SANDBOXCTL, "sweep", "--task-dir", HARBOR, "--agent", "oracle",
                        "--out", out, "--test-label", "--jobs", "2"],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail("sweep: %d\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
    results = []
    for root, _, files in os.walk(out):
        if "result.json" in files:
            with open(os.path.join(root, "result.json")) as f:
                results.append(json.load(f))
            env.run_ids.append(results[-1]["run_id"])
    if sorted(r["task"] for r in results) != ["apptransform", "pybugfix", "texttransform"] or \
            any(r["verifier"]["reward"] != 1 for r in results):
        fail("sweep: %s" % [(r["task"], r["status"]) for r in results])


def case_serve(env):
    """A Harbor task claimed from `serve`: its verifier's sandbox is made while the
    client works (made_ahead), as under `run`; the client that does nothing gets 0,
    and nothing is left once the service ends."""
    need_base()
    runs = os.path.join(env.dir, "serve-runs")
    p = subprocess.Popen([SANDBOXCTL, "serve", "--tasks-dir", HARBOR, "--runs-dir", runs,
                          "--listen", "127.0.0.1:0", "--test-label"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = p.stdout.readline().strip().rstrip("/")
        if not url:
            fail("serve did not start")

        def post(path, body=None):
            req = urllib.request.Request(url + path, data=json.dumps(body or {}).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.load(r)
        claim = post("/v1/episodes", {"task": "pybugfix"})
        env.run_ids.append(claim["id"])
        time.sleep(1.5)  # the client's turn: the verifier's sandbox is made meanwhile
        done = post("/v1/episodes/%s/finish" % claim["id"])
        with open(os.path.join(runs, claim["id"], "result.json")) as f:
            v = json.load(f)["verifier"]
        if done["reward"] != 0 or v["reward"] != 0 or not v["made_ahead"]:
            fail("serve: reward %r, verifier %s" % (done["reward"], v))
        if "cells_graded" in done["grade"]:  # a spreadsheet grader's counts: not Harbor's
            fail("serve: finish answer's grade %s" % done["grade"])
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=120)
    check_gone(claim["id"])
    print("  serve: reward 0, verifier made ahead (create %.0f ms off the path)" %
          v["timings_ms"]["create_start"])


CASES = {"oracle": case_oracle, "null": case_null, "forgery": case_forgery, "cap": case_cap,
         "app": case_app,
         "hostile": case_hostile,
         "validate": case_validate, "sweep": case_sweep, "serve": case_serve}

if __name__ == "__main__":
    run_case(CASES, alarm_s=400)
