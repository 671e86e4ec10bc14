#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A 300 MB flood of the container's output leaves a capped, non-empty container.log.

A live outside-agent run on the real engine. Tool code (execute_shell, uid
1001) must not be able to reach the container's own output at all (its
stdio pipes belong to PID 1 and the server); the flood then comes from inside
the container the way a process of theirs would write it: 300 MB to PID 1's
stderr (an engine exec as root), then a marker line. The run must end
normally; container.log must hold PID 1's
first lines, a line saying how much was cut, and the marker at the end, and be
at most 8 MiB and a bit; the container must be created with LogConfig set by
sandboxctl (local, max-size, max-file), whatever the daemon's default.
Usage: test_log_flood.py
"""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402
import impostor  # noqa: E402

FLOOD = 300 * 1000 * 1000
CAP = 8 * 1024 * 1024 + 64 * 1024 + 4096
# 99 x's and a newline per line, to PID 1's stderr if tool code may open it, else the server's.
SHELL = """line=%s
y=yes; command -v yes >/dev/null || y="busybox yes"
for t in /proc/1/fd/2 /proc/$PPID/fd/2; do
  if (: >>"$t") 2>/dev/null; then
    $y "$line" | head -c %d >>"$t"
    echo FLOOD-END-MARKER >>"$t"
    echo "flooded $t"
    exit 0
  fi
done
echo no-target
exit 3""" % ("x" * 99, FLOOD)


def post(url, doc, timeout):
    req = urllib.request.Request(url, data=json.dumps(doc).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, json.loads(r.read())


FLOOD_IMAGE = "sandboxctl-test/log-flood:latest"


def build_flood_image(base):
    """base, with an entrypoint that floods stderr as root, then becomes PID 1 as usual."""
    script = ('y=yes; command -v yes >/dev/null || y="busybox yes"\n'
              '$y %s | head -c %d >&2\necho FLOOD-END-MARKER >&2\n'
              'exec /usr/local/bin/sandbox-init' % ("x" * 99, FLOOD))
    impostor.build_image(FLOOD_IMAGE, "FROM %s\nUSER 0:0\nLABEL sandboxctl.test=1\n"
                                      "ENTRYPOINT [\"/bin/sh\", \"-c\", %s]\n" %
                         (base, json.dumps(script)))


def tool_code_cannot_flood(env):
    """Tool code (uid 1001) holds no descriptor of the container's output, nor may open one."""
    rid = env.new_id("flood-tool")
    p = subprocess.Popen(env.args(rid, "sales_revenue", it.pick_image(), "--json", "--timeout",
                                  "60"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    rest = json.loads(p.stdout.readline())["rest_url"]
    st, out = post(rest + "/tools/call", {"tool_name": "execute_shell", "arguments": {
        "command": SHELL, "timeout": 60}}, timeout=90)
    if "no-target" not in json.dumps(out):
        it.fail("tool code reached the container's output: %s" % json.dumps(out)[:2000])
    post(rest + "/task/complete", {}, timeout=30)
    p.wait(timeout=60)
    it.check_gone(rid)


def main():
    signal.alarm(280)
    it.ensure_dev_image()
    env = it.Env()
    try:
        tool_code_cannot_flood(env)
        build_flood_image(it.pick_image())
        rid = env.new_id("flood")
        p = subprocess.Popen(env.args(rid, "sales_revenue", FLOOD_IMAGE, "--json", "--timeout",
                                      "240"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        env.procs.append(p)
        t = time.monotonic()
        conn = json.loads(p.stdout.readline())
        rest = conn["rest_url"]
        print("  flooded %d MB before PID 1, ready after %.1f s" %
              (FLOOD // 1000000, time.monotonic() - t))
        cid = None
        for c in it.containers(rid):
            cid = c["Id"]
        st, info = it.engine("GET", "/containers/%s/json" % cid)
        lc = info["HostConfig"]["LogConfig"]
        if lc.get("Type") != "local" or not lc.get("Config", {}).get("max-size") or \
                not lc.get("Config", {}).get("max-file"):
            it.fail("the container's LogConfig is not sandboxctl's: %s" % lc)
        st, _ = post(rest + "/task/complete", {}, timeout=30)
        p.wait(timeout=120)
        res = json.loads(it.read(os.path.join(env.runs, rid, "result.json")))
        if res["ended_by"] != "complete_task":
            it.fail("the flood changed how the run ended: %s" % res)
        path = os.path.join(env.runs, rid, "container.log")
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            log = f.read()
        if size == 0 or size > CAP:
            it.fail("container.log is %d bytes, want 1..%d" % (size, CAP))
        if b"of the log cut here" not in log:
            it.fail("container.log does not say how much was cut")
        # The end of the flood, then PID 1's own lines after it: the tail is kept.
        if b"FLOOD-END-MARKER" not in log or b"sandbox-init:" not in log[-64 * 1024:]:
            it.fail("container.log lost the end of the log")
        it.check_gone(rid)
        cut = [l for l in log.split(b"\n") if b"cut here" in l][0].decode()
        print("ok: tool code cannot reach the log; container.log %d bytes; %s" % (size, cut))
    finally:
        env.cleanup()
        impostor.remove(FLOOD_IMAGE)


if __name__ == "__main__":
    it.run_main(main)
