#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sweep throughput against the engine's own parallel floor. Figures, not a test.

For each --jobs J: episodes per minute of `sandboxctl sweep --agent oracle`
(N episodes: 2 tasks x N/2 epochs), sandboxctl's own CPU per episode (user +
sys of the sweep process: relay, grading, JSON, the Docker client), and the
floor: N create + start + wait + remove of a container running `true` from the
same image, J at a time, made straight on the API (what no sandbox runner can
beat on this engine). Then the scheduler's own time between two episodes at
--jobs 1, and the RSS of a sweep holding 1,000 queued episodes.

  bench/sweep_bench.py BUILD_DIR [N] [JOBS...]     (default 24, jobs 1 2 4)
"""
import http.client
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

SRC = os.path.dirname(os.path.abspath(__file__)) + "/.."
sys.path.insert(0, os.path.join(SRC, "tests", "lib"))
from itest import SLIM_IMAGE  # noqa: E402
IMAGE = os.environ.get("SBX_BENCH_IMAGE", SLIM_IMAGE)
SOCK = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")[len("unix://"):]
TASKS = ["banking_reserve", "sales_revenue"]


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self):
        super().__init__("localhost", timeout=120)

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(SOCK)


def call(c, method, url, body=None):
    c.request(method, url, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status >= 300:
        raise RuntimeError("%s %s: %d %s" % (method, url, r.status, data[:200]))
    return json.loads(data) if data else None


def floor(n, jobs):
    """n create+start+wait+remove of `true`, jobs at a time, on kept-alive connections."""
    left = [n]
    lock = threading.Lock()

    def worker():
        c = UnixHTTP()
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            cid = call(c, "POST", "/containers/create", {
                "Image": IMAGE, "Entrypoint": ["true"], "Cmd": [],
                "Labels": {"sandboxctl.test": "1", "sandboxctl.bench": "sweep-floor"},
                "HostConfig": {"NetworkMode": "none"}})["Id"]
            call(c, "POST", "/containers/%s/start" % cid)
            call(c, "POST", "/containers/%s/wait" % cid)
            call(c, "DELETE", "/containers/%s?force=1&v=1" % cid)

    t = time.monotonic()
    ts = [threading.Thread(target=worker) for _ in range(jobs)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    return time.monotonic() - t


def sweep(sandboxctl, out, n, jobs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    args = [sandboxctl, "sweep", "--tasks-dir", os.path.join(SRC, "tasks"), "--image", IMAGE,
            "--agent", "oracle", "--epochs", str(n // len(TASKS)), "--jobs", str(jobs),
            "--out", out, "--quiet", "--json", "--test-label"]
    for task in TASKS:
        args += ["--task", task]
    p = subprocess.run(args, capture_output=True, text=True)
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError("sweep exit %d: %s" % (p.returncode, p.stderr[-1000:]))
    s = json.loads(p.stdout)["overall"]
    if s["episodes"] != n or s["pass_rate"]["value"] != 1:
        raise RuntimeError("sweep: %s" % s)
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def gaps_ms(out):
    """At --jobs 1: from one episode's end to the next one's start (the scheduler's own time)."""
    import datetime
    import glob

    def t(v):
        return datetime.datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp()
    rs = [json.load(open(f)) for f in glob.glob(os.path.join(out, "runs", "*", "result.json"))]
    rs.sort(key=lambda r: t(r["started_at"]))
    g = sorted((t(b["started_at"]) - t(a["finished_at"])) * 1000 for a, b in zip(rs, rs[1:]))
    return g[len(g) // 2] if g else float("nan")


def rss_at_queue(sandboxctl, out, queued):
    """VmRSS of a sweep that holds `queued` episodes, most still in its queue."""
    args = [sandboxctl, "sweep", "--tasks-dir", os.path.join(SRC, "tasks"), "--image", IMAGE,
            "--agent", "oracle", "--epochs", str(queued // len(TASKS)), "--jobs", "1",
            "--out", out, "--quiet", "--test-label", "--stop-grace", "0"]
    for task in TASKS:
        args += ["--task", task]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    t = time.monotonic()
    while time.monotonic() - t < 8:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    return peak / 1024


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    jobs = [int(j) for j in sys.argv[3:]] or [1, 2, 4]
    sandboxctl = os.path.join(build, "cmd", "sandboxctl")
    # The sweep directory's file system counts: on ext4 without a journal,
    # creating the run files' inodes cost 6 ms of kernel time per episode
    # here (recently_deleted), on tmpfs under 1 ms. SBX_BENCH_DIR=/dev/shm.
    tmp = tempfile.mkdtemp(prefix="sbx-sweep-bench-", dir=os.environ.get("SBX_BENCH_DIR"))
    fs = subprocess.run(["stat", "-f", "-c", "%T", tmp], capture_output=True, text=True)
    print("%d oracle episodes (%s), %d CPUs, sweep directory on %s" % (
        n, IMAGE, os.cpu_count(), fs.stdout.strip() or "?"))
    print("%5s %12s %12s %8s %22s" % ("jobs", "sweep ep/min", "floor ep/min", "ratio",
                                       "CPU ms/ep (user+sys)"))
    try:
        for j in jobs:
            fl = floor(n, j)
            wall, user, sys_ = sweep(sandboxctl, os.path.join(tmp, "j%d" % j), n, j)
            print("%5d %12.1f %12.1f %7.0f%% %10.1f (%.1f+%.1f)" % (
                j, n * 60 / wall, n * 60 / fl, 100 * fl / wall, (user + sys_) * 1000 / n,
                user * 1000 / n, sys_ * 1000 / n))
            if j == 1:
                gap = gaps_ms(os.path.join(tmp, "j1"))
        if 1 in jobs:
            print("between episodes at --jobs 1 (median): %.1f ms" % gap)
        print("RSS with 1000 queued episodes: %.1f MB" %
              rss_at_queue(sandboxctl, os.path.join(tmp, "rss"), 1000))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
