#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/tool_exec.py SANDBOXCTL IMAGE [N]: the latency of execute_shell and
execute_python through the relay (what every tool-code call of an agent
pays), p50 and p95 over N calls (default 200), on the real engine. Run it
from the source tree (it uses tasks/). Figures, not pass/fail."""
import json
import statistics
import subprocess
import sys
import time
import urllib.request


def main():
    sbx, image = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    p = subprocess.Popen([sbx, "run", "--task", "sales_revenue", "--image", image, "--json",
                          "--timeout", "600", "--runs-dir", "/tmp/sbx-bench-runs"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    conn = json.loads(p.stdout.readline())
    rest = conn["rest_url"]

    def call(tool, args):
        req = urllib.request.Request(rest + "/tools/call", method="POST",
                                     data=json.dumps({"tool_name": tool,
                                                      "arguments": args}).encode(),
                                     headers={"Content-Type": "application/json"})
        t = time.perf_counter()
        with urllib.request.urlopen(req, timeout=60) as r:
            body = json.loads(r.read())
        if not body.get("success"):
            raise SystemExit("%s failed: %s" % (tool, body))
        return (time.perf_counter() - t) * 1000

    try:
        for tool, args in (("execute_shell", {"command": "true"}),
                           ("execute_python", {"code": "pass"})):
            for _ in range(5):
                call(tool, args)
            ms = sorted(call(tool, args) for _ in range(n))
            print("%-15s p50 %6.2f ms  p95 %6.2f ms  (n=%d, %s)" %
                  (tool, statistics.median(ms), ms[int(0.95 * (n - 1))], n, image))
    finally:
        req = urllib.request.Request(rest + "/task/complete", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=30).read()
        p.wait(timeout=60)


if __name__ == "__main__":
    main()
