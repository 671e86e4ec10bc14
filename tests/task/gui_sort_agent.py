#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An agent for gui_sort_table that uses only the desktop, as its task demands.

Run by `sandboxctl run --agent` (SANDBOX_REST_URL is the relay's REST URL).
It first checks what the task's tool set (tools: gui) promises: write_range
and execute_python are refused as unknown tools, and get_task_status knows the
run's deadline. Then, through the keyboard alone: the cursor to C2 (Points),
Data > Sort Descending (Calc keeps the header row and the rows together),
ctrl+s, and complete_task once the saved file shows the sort. Exit 3 when a
promise does not hold, 4 when Calc does not do what was asked.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

URL = os.environ["SANDBOX_REST_URL"]
FILE = "leaderboard.ods"


def call(tool, **args):
    """POST /tools/call: (HTTP status, body)."""
    req = urllib.request.Request(URL + "/tools/call", method="POST",
                                 data=json.dumps({"tool_name": tool, "arguments": args}).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def ok(tool, **args):
    status, body = call(tool, **args)
    if status != 200 or not body.get("success"):
        print("%s: HTTP %d %s" % (tool, status, body.get("error")), flush=True)
        sys.exit(4)
    return body["result"]


def column_c():
    res = ok("read_range", file_path=FILE, sheet_name="Scores", start_cell="C2", end_cell="C31")
    return [row[0] for row in res["values"]]


def main():
    for tool, args in (("write_range", {"file_path": FILE, "start_cell": "A2", "values": [[1]]}),
                       ("execute_python", {"code": "print(1)"})):
        status, body = call(tool, **args)
        print("%s: HTTP %d %s" % (tool, status, body.get("error")), flush=True)
        if status != 404 or body.get("error") != "Unknown tool: " + tool:
            sys.exit(3)
    st = ok("get_task_status")
    deadline = int(os.environ.get("SANDBOX_DEADLINE", "0")) - time.time()
    print("timeout_seconds %.1f (deadline in %.1f s)" % (st["timeout_seconds"], deadline),
          flush=True)
    if not 0 < st["timeout_seconds"] <= 600:
        sys.exit(3)

    before = column_c()
    # Focus the grid (the first click may only focus the window), then C2 from A1.
    for _ in range(2):
        ok("click", x=640, y=400)
    for key in ("ctrl+Home", "Right", "Right", "Down"):
        ok("key_press", key=key)
    # Data > Sort Descending, the third entry of the Data menu.
    ok("key_press", key="alt+d")
    ok("computer", action="wait", duration=1)
    for key in ("Down", "Down", "Return"):
        ok("key_press", key=key)
    ok("computer", action="wait", duration=1)
    ok("key_press", key="ctrl+s")
    want = sorted(before, reverse=True)
    for _ in range(60):
        if column_c() == want:
            break
        time.sleep(0.5)
    else:
        print("the saved file is not sorted: %s" % column_c(), flush=True)
        sys.exit(4)
    print("sorted and saved through the keyboard", flush=True)
    ok("complete_task")


if __name__ == "__main__":
    main()
