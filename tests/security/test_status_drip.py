#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A server that drips its answers cannot keep an episode alive.

The host enforces the run's deadline itself, whatever the server answers.
The sandbox's server is replaced by an impostor (an image whose main program
is a Python server on the same socket: what tool code could have planted
before tool code had a uid of its own) that answers /health at once and
drips every other answer, one byte every 3 s, forever. A run with a 6 s
deadline and an agent that never completes must end as `timeout` within
the deadline plus 5 s (it took 54.6 s for a 25 s run before the host
bounded its reads), outputs collected without the server.
Usage: test_status_drip.py
"""
import io
import json
import os
import subprocess
import sys
import tarfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402

IMAGE = "sandboxctl-test/status-drip:latest"
TIMEOUT_S = 6
DRIP = r'''
import os, socket, threading, time
path = os.environ.get("SANDBOX_SOCKET", "/run/sandbox/mcp.sock")
os.makedirs(os.path.dirname(path), exist_ok=True)
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(64)
def handle(c):
    f = c.makefile("rb")
    while True:
        line = f.readline()
        if not line:
            return
        n = 0
        while True:
            h = f.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            if h.lower().startswith(b"content-length:"):
                n = int(h.split(b":")[1])
        if n:
            f.read(n)
        parts = line.split()
        if len(parts) > 1 and parts[1].endswith(b"/health"):
            body = b'{"status":"ok"}'
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            continue
        for b in b"HTTP/1.1 200 OK\r\nX-Drip: " + b"a" * 100000:
            c.sendall(bytes([b]))
            time.sleep(3)
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
'''


def build_image(base):
    files = {
        "Dockerfile": ("FROM %s\nLABEL sandboxctl.test=1\nCOPY drip.py /drip.py\n"
                       "ENTRYPOINT [\"/usr/local/bin/sandbox-init\", \"--\", \"python3\", "
                       "\"/drip.py\"]\n" % base).encode(),
        "drip.py": DRIP.encode(),
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    c = it.UnixHTTP(host[len("unix://"):])
    c.request("POST", "/build?t=%s&rm=1&forcerm=1" % urllib.parse.quote(IMAGE),
              body=buf.getvalue(), headers={"Content-Type": "application/x-tar"})
    r = c.getresponse()
    out = r.read().decode(errors="replace")
    c.close()
    if r.status != 200 or '"errorDetail"' in out:
        it.fail("building %s: %d %s" % (IMAGE, r.status, out[-2000:]))


def main():
    it.ensure_dev_image()
    env = it.Env()
    try:
        build_image(it.pick_image())
        t = time.monotonic()
        code, res, rdir, err = env.run("sales_revenue", "drip", "--image", IMAGE, "--timeout",
                                       str(TIMEOUT_S), "--agent", "sleep 300", timeout=120)
        took = time.monotonic() - t
        ready = (res.get("timings_ms") or {}).get("ready") or 0
        if res["status"] != "timeout" or res["ended_by"] != "deadline" or code != 4:
            it.fail("want status timeout by the deadline (exit 4): exit %d %s\n%s" %
                    (code, res, err))
        # The deadline counts from the start; the host may take 5 s past it, no more.
        limit = TIMEOUT_S + 5 + (res["timings_ms"].get("create") or 0) / 1000 + ready / 1000
        if took > limit:
            it.fail("the dripping server kept the run for %.1f s (deadline %d s)" %
                    (took, TIMEOUT_S))
        it.check_gone(res["run_id"])
        print("ok: a dripping server; the run ended by its %d s deadline in %.1f s (exit %d)" %
              (TIMEOUT_S, took, code))
    finally:
        env.cleanup()
        it.engine("DELETE", "/images/%s?force=1" % urllib.parse.quote(IMAGE, safe=""))


if __name__ == "__main__":
    try:
        main()
    except it.Skip as e:
        print("skip:", e)
        sys.exit(it.SKIP)
