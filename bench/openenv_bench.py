#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An OpenEnv step (openenv-core's GenericEnvClient over serve's /ws) against
the same MCP tool call made directly on the episode's mcp_url (keep-alive
HTTP, JSON-RPC), p50/p90 over N calls of get_sheet_info on banking_reserve.

    bench/openenv.sh [BUILD_DIR] [N]
"""
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

from openenv.core.generic_client import GenericEnvClient

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = {"file_path": "cash_flows.ods", "sheet_name": "Sheet1"}


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def post(c, path, body, headers=None):
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    h.update(headers or {})
    c.request("POST", path, json.dumps(body), h)
    r = c.getresponse()
    data = r.read()
    return r, json.loads(data) if data else None


def direct(url, n):
    """The claim's mcp_url, driven by hand: initialize, then n tools/call."""
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port)
    r, _ = post(c, u.path, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
    sid = {"Mcp-Session-Id": r.getheader("Mcp-Session-Id")}
    post(c, u.path, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    out = []
    for i in range(n):
        t = time.perf_counter()
        _, a = post(c, u.path, {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                                "params": {"name": "get_sheet_info", "arguments": ARGS}}, sid)
        out.append((time.perf_counter() - t) * 1000)
        if "result" not in a:
            sys.exit("direct: %s" % a)
    return out


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    d = tempfile.mkdtemp(prefix="sbx-openenv-bench-")
    p = subprocess.Popen([os.path.join(build, "cmd", "sandboxctl"), "serve", "--tasks-dir",
                          os.path.join(SRC, "tasks"), "--runs-dir", d, "--pool", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = p.stdout.readline().strip()
    try:
        with GenericEnvClient(base_url=url + "/openenv/banking_reserve").sync() as env:
            env.reset()
            step = []
            for _ in range(n):
                t = time.perf_counter()
                r = env.step({"type": "call_tool", "tool_name": "get_sheet_info",
                              "arguments": ARGS})
                step.append((time.perf_counter() - t) * 1000)
                if r.observation.get("error"):
                    sys.exit("step: %s" % r.observation)
        u = urllib.parse.urlsplit(url)
        c = http.client.HTTPConnection(u.hostname, u.port)
        _, claim = post(c, u.path + "/v1/episodes", {"task": "banking_reserve"})
        mcp = direct(claim["mcp_url"], n)
        post(c, u.path + "/v1/episodes/%s/finish" % claim["id"], {})
    finally:
        p.terminate()
        p.wait()
    for name, xs in (("openenv step", step), ("direct MCP", mcp)):
        print("%-13s n=%d p50 %.2f ms  p90 %.2f ms  mean %.2f ms" %
              (name, len(xs), statistics.median(xs), pct(xs, 0.9), statistics.mean(xs)))


if __name__ == "__main__":
    main()
