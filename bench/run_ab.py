#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two sandboxctl binaries, interleaved (A B, B A, ...) on the same task and
image, so a loaded host's drift falls on both: the median (range) of each
phase in result.json's timings_ms, and the host's requests through the relay.

  bench/run_ab.py BEFORE_SANDBOXCTL AFTER_SANDBOXCTL IMAGE PAIRS [TASK]

AGENT (default oracle) is the agent; WANT (default pass) the status every
run must end with. Figures, not pass/fail.
"""
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

KEYS = ["create", "start", "copy_in", "ready", "agent", "copy_out", "remove", "total", "requests"]


def run_once(sandboxctl, task, image):
    d = tempfile.mkdtemp(prefix="sbx-ab-")
    try:
        subprocess.run([sandboxctl, "run", "--task", task, "--image", image, "--agent",
                        os.environ.get("AGENT", "oracle"), "--runs-dir", d, "--test-label"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        with open(glob.glob(d + "/*/result.json")[0]) as f:
            r = json.load(f)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    row = dict(r["timings_ms"], requests=r["relay"]["requests"])
    if r["status"] != os.environ.get("WANT", "pass"):
        sys.exit("%s: %s (%s)" % (sandboxctl, r["status"], r.get("error")))
    return row


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    sides = {"before": sys.argv[1], "after": sys.argv[2]}
    image, pairs = sys.argv[3], int(sys.argv[4])
    task = sys.argv[5] if len(sys.argv) > 5 else "sales_revenue"
    rows = {k: [] for k in sides}
    for i in range(pairs):
        order = list(sides) if i % 2 == 0 else list(sides)[::-1]
        for k in order:
            rows[k].append(run_once(sides[k], task, image))
    print("%-7s" % "", " ".join("%15s" % k for k in KEYS))
    for k, got in rows.items():
        cells = []
        for key in KEYS:
            v = sorted(x[key] for x in got if key in x)
            cells.append("%5.1f (%3.0f-%3.0f)" % (statistics.median(v), v[0], v[-1]) if v else "-")
        print("%-7s" % k, " ".join("%15s" % c for c in cells))


if __name__ == "__main__":
    main()
