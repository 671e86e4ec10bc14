# SPDX-License-Identifier: MIT
"""`inspect eval examples/inspect_task.py --sandbox sandboxctl` end to end on
the real engine, offline (mockllm's scripted bash calls write answer.txt, the
scorer reads it back through the provider):

  test_eval_scores     the log's scores are C, I, C (sample beta is scored
                       against another word) and the service the provider
                       started left no container behind
  test_eval_killed     an eval killed with SIGKILL: its service gets SIGTERM
                       (it dies with its parent) and removes every sandbox
  test_eval_and_service_killed
                       the eval and its service both killed with SIGKILL:
                       sandboxes are left, `inspect sandbox cleanup
                       sandboxctl` (our cli_cleanup: sandboxctl gc) removes
                       them all
"""
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import engine_state

SRC = os.path.realpath(os.environ.get("SBX_SOURCE_ROOT",
                                      os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
BUILD = os.path.realpath(os.environ.get("SBX_BUILD_ROOT", os.path.join(SRC, "build")))
TASK = "examples/inspect_task.py"  # as the README says it, from the tree's root
INSPECT = [sys.executable, "-m", "inspect_ai"]


def env():
    e = dict(os.environ)
    e["SANDBOXCTL_BIN"] = os.path.join(BUILD, "cmd", "sandboxctl")
    e.pop("SANDBOXCTL_SERVE_URL", None)
    return e


@pytest.fixture
def config(tmp_path):
    p = tmp_path / "sandboxctl.yaml"
    image = os.environ.get("SBX_PY_TEST_IMAGE") or os.environ.get("SBX_TEST_SLIM_IMAGE")  # as in test_self_check.py
    p.write_text("pool: 1\nserve_args: [--test-label]\n" + ("image: %s\n" % image if image else ""))
    return str(p)


class Children:
    """The sandboxctl processes a process starts (its service), seen by polling /proc."""

    def __init__(self, pid):
        self.pid, self.seen, self._stop = pid, set(), False
        self._t = threading.Thread(target=self._poll, daemon=True)
        self._t.start()

    def _poll(self):
        while not self._stop:
            for f in glob.glob("/proc/%d/task/*/children" % self.pid):
                try:
                    kids = open(f).read().split()
                except OSError:
                    continue
                for k in kids:
                    try:
                        if open("/proc/%s/comm" % k).read().strip() == "sandboxctl":
                            self.seen.add(int(k))
                    except OSError:
                        pass
            time.sleep(0.02)

    def stop(self):
        self._stop = True
        self._t.join()


def eval_cmd(config, log_dir, *extra):
    return INSPECT + ["eval", TASK, "--sandbox", "sandboxctl:" + config, "--display", "none",
                      "--log-dir", str(log_dir), *extra]


def check_none_left(pids):
    left = engine_state.owned_by(pids)
    engine_state.remove(left)
    assert not left, "containers left: %s" % [c["Labels"].get("sandboxctl.run-id") for c in left]


def test_eval_scores(config, tmp_path):
    p = subprocess.Popen(eval_cmd(config, tmp_path / "logs"), env=env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, cwd=SRC)
    kids = Children(p.pid)
    out, _ = p.communicate(timeout=240)
    kids.stop()
    assert p.returncode == 0, out
    assert len(kids.seen) == 1, "one service for the eval, saw %s" % kids.seen
    from inspect_ai.log import list_eval_logs, read_eval_log
    logs = list_eval_logs(str(tmp_path / "logs"))
    assert len(logs) == 1, logs
    log = read_eval_log(logs[0].name)
    assert log.status == "success", log.error
    scores = {s.id: s.scores["answer_file"].value for s in log.samples}
    assert scores == {"alpha": "C", "beta": "I", "delta": "C"}, scores
    answers = {s.id: s.scores["answer_file"].answer for s in log.samples}
    assert answers == {"alpha": "alpha", "beta": "beta", "delta": "delta"}, answers
    check_none_left(kids.seen)


def start_sleeping_eval(config, tmp_path):
    """An eval whose samples sleep in their tool call; returns (process,
    service pid) once its three sample sandboxes exist."""
    p = subprocess.Popen(eval_cmd(config, tmp_path / "logs", "-T", "sleep=120"), env=env(), cwd=SRC,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    kids = Children(p.pid)
    deadline = time.time() + 120
    while time.time() < deadline:
        if kids.seen and len(engine_state.owned_by(kids.seen)) >= 4:  # 3 samples + the pool's 1
            break
        assert p.poll() is None, "the eval exited early: %s" % p.returncode
        time.sleep(0.2)
    kids.stop()
    assert len(kids.seen) == 1, kids.seen
    assert len(engine_state.owned_by(kids.seen)) >= 4, "the samples' sandboxes did not appear"
    time.sleep(1)  # the samples' tool calls are running
    return p, next(iter(kids.seen))


def test_eval_killed(config, tmp_path):
    p, serve = start_sleeping_eval(config, tmp_path)
    p.kill()
    p.wait()
    # the service got SIGTERM when its parent died: it drains and removes all
    deadline = time.time() + 60
    while time.time() < deadline and (os.path.exists("/proc/%d" % serve) or engine_state.owned_by([serve])):
        time.sleep(0.2)
    assert not os.path.exists("/proc/%d/status" % serve) or "zombie" in open("/proc/%d/status" % serve).read()
    check_none_left([serve])


def test_eval_and_service_killed(config, tmp_path):
    p, serve = start_sleeping_eval(config, tmp_path)
    os.kill(serve, signal.SIGKILL)
    p.kill()
    p.wait()
    time.sleep(0.5)
    left = engine_state.owned_by([serve])
    assert left, "the premise: a service killed with SIGKILL leaves its sandboxes"
    r = subprocess.run(INSPECT + ["sandbox", "cleanup", "sandboxctl"], env=env(), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    check_none_left([serve])
    print(json.dumps({"cleanup_output": (r.stdout + r.stderr).strip()[-500:]}))
