#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The model agent's own cost per turn, outside the model.

Usage: bench/llm_loop.py BUILD_DIR [TURNS] [IMAGE]

Runs one `sandboxctl run --agent llm` episode against the fake provider of
tests/agents (it answers at once, always with one list_files call) for TURNS
turns, then reads model.jsonl: the gap between a reply and the next request
is the tool call's round trip through the relay and the sandbox plus the
loop's own work; `ms` on a reply is the HTTP round trip to the provider.
Target: p50 of the gap < 2 ms.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
turns = int(sys.argv[2]) if len(sys.argv) > 2 else 200
src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(src, "tests", "lib"))
from itest import SLIM_IMAGE  # noqa: E402
image = sys.argv[3] if len(sys.argv) > 3 else SLIM_IMAGE
key = "sk-bench"
d = tempfile.mkdtemp(prefix="sbx-bench-llm-")
state = os.path.join(d, "state.json")
prov = subprocess.Popen([sys.executable, os.path.join(src, "tests/agents/fake_provider.py"), state, key])
try:
    while not os.path.exists(state):
        time.sleep(0.02)
    port = json.load(open(state))["port"]
    env = dict(os.environ, OPENAI_API_KEY=key)
    rid = "bench-llm-%d" % os.getpid()
    p = subprocess.run([os.path.join(build, "cmd", "sandboxctl"), "run", "--task", "sales_revenue",
                        "--tasks-dir", os.path.join(src, "tasks"), "--image", image,
                        "--runs-dir", os.path.join(d, "runs"), "--run-id", rid, "--quiet",
                        "--agent", "llm", "--model", "never", "--max-turns", str(turns),
                        "--base-url", "http://127.0.0.1:%d/v1" % port],
                       env=env, capture_output=True, text=True)
    lines = [json.loads(l) for l in open(os.path.join(d, "runs", rid, "model.jsonl"))]
finally:
    prov.terminate()
    prov.wait()

gaps, rtt = [], []
last_reply = None
for l in lines:
    if "request" in l and last_reply is not None:
        gaps.append((l["t"] - last_reply) * 1000)
    if "reply" in l:
        last_reply = l["t"]
        rtt.append(l["ms"])


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


print("turns %d (one list_files call each)" % len(rtt))
print("tool call + loop, reply -> next request: p50 %.3f ms  p99 %.3f ms  (target p50 < 2 ms)" %
      (statistics.median(gaps), pct(gaps, 0.99)))
print("provider round trip (fake, loopback):    p50 %.3f ms  p99 %.3f ms" %
      (statistics.median(rtt), pct(rtt, 0.99)))
