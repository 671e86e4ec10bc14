#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A reference-style task folder (task.json, starting_files/, oracle/) runs as
it is on the real engine: `sandboxctl run --task-dir` with the oracle agent
PASSes, and the reference's scripted agent (ref_agent.py, through the REST
relay) scores 315/315 against the reference's own oracle.

The image: $SBX_RUN_TEST_IMAGE when set ("real": $SBX_TEST_SLIM_IMAGE, default sandboxctl/sandbox-slim, what
`sandboxctl build` makes), else sandboxctl-test/compat-dev:latest, made here
from this build's sandbox-mcp by tests/run/dev-image.sh, so the test checks
this tree's server. Skips (77) without an engine.

Usage: test_reference_task.py SANDBOXCTL
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SANDBOXCTL = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
TASK = os.path.join(HERE, "data", "banking_reserve")
SRC = os.environ.get("SBX_SOURCE_ROOT", os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("SBX_BUILD_ROOT", os.path.join(SRC, "build"))
DEV_IMAGE = "sandboxctl-test/compat-dev:latest"
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from itest import SLIM_IMAGE  # noqa: E402


def image():
    if not os.path.exists("/var/run/docker.sock"):
        print("SKIP: no engine")
        sys.exit(77)
    want = os.environ.get("SBX_RUN_TEST_IMAGE", "")
    if want == "real":
        return SLIM_IMAGE
    if want:
        return want
    subprocess.run(["sh", os.path.join(SRC, "tests", "run", "dev-image.sh"), SRC, BUILD, DEV_IMAGE],
                   check=True, stdout=subprocess.DEVNULL)
    return DEV_IMAGE


def run(runs, agent, ref):
    p = subprocess.run([SANDBOXCTL, "run", "--task-dir", TASK, "--agent", agent, "--image", ref,
                        "--runs-dir", runs, "--quiet", "--json", "--test-label"],
                       capture_output=True, text=True, timeout=600)
    try:
        res = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise AssertionError("no result (exit %d): %s" % (p.returncode, p.stderr))
    return p, res


def main():
    ref = image()
    runs = tempfile.mkdtemp(prefix="sbx-compat-runs-")
    try:
        p, res = run(runs, "oracle", ref)
        assert "read as a reference task" in p.stderr, p.stderr
        assert p.returncode == 0 and res["status"] == "pass", (p.returncode, res, p.stderr)
        print("oracle on the reference task.json (%s): PASS" % ref)
        p, res = run(runs, "python3 " + os.path.join(HERE, "ref_agent.py"), ref)
        g = res.get("grade") or {}
        assert p.returncode == 0 and res["status"] == "pass", (p.returncode, res, p.stderr)
        assert (g.get("cells_matched"), g.get("cells_graded")) == (315, 315), g
        print("the reference's scripted agent through the relay: PASS 315/315")
        # The server learns the run's deadline from SANDBOX_TASK_DEADLINE in the container.
        probe = ('curl -sf "$SANDBOX_REST_URL/v1/task/status" > "$SANDBOX_RUN_DIR/probe.json"; '
                 'curl -sf -X POST "$SANDBOX_REST_URL/task/complete" -d "{}" >/dev/null')
        p, res = run(runs, probe, ref)
        with open(os.path.join(runs, res["run_id"], "probe.json")) as f:
            st = json.load(f)
        assert 200 < (st.get("timeout_seconds") or 0) <= 300, st
        print("get_task_status reports the run's deadline: timeout_seconds %.0f" % st["timeout_seconds"])
    finally:
        shutil.rmtree(runs, ignore_errors=True)


if __name__ == "__main__":
    main()
