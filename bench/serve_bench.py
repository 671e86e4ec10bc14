#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/serve.sh's body: figures, never a pass/fail. Needs the real images.

Episodes per minute at concurrency 1, 2 and 4 for cold starts, the warm pool
and --reuse (a sandbox reset in place between episodes), beside the engine's
floor measured in the same run (create, start, wait, remove of a container
that runs `true`, same image, same concurrency), and the reset's p50/p99
(the host's whole round trip, from the episodes' answers). SBX_BENCH_LATENCY=1
adds the claim latency table (warm vs cold)."""
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from each_once import each_once  # noqa: E402
from itest import SLIM_IMAGE  # noqa: E402
from second_engine import engine  # noqa: E402

SLIM = os.environ.get("SBX_BENCH_IMAGE", SLIM_IMAGE)

build = sys.argv[1] if len(sys.argv) > 1 else "build"
claims = int(sys.argv[2]) if len(sys.argv) > 2 else 40
conc = int(sys.argv[3]) if len(sys.argv) > 3 else 4
episodes = int(sys.argv[4]) if len(sys.argv) > 4 else 40
src = os.path.dirname(os.path.abspath(__file__)) + "/.."
sbx = os.path.join(build, "cmd", "sandboxctl")
tmp = tempfile.mkdtemp(prefix="sbx-serve-bench-")


def post(url, path, body=None, method="POST", headers=None):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers or {})
    c.request(method, u.path + path, body=json.dumps(body) if body is not None else None, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}


class Serve:
    def __init__(self, pool, reuse=1):
        args = [sbx, "serve", "--tasks-dir", os.path.join(src, "tasks"), "--runs-dir",
                os.path.join(tmp, "runs"), "--test-label", "--pool", str(pool),
                "--max-episodes", "256", "--stop-grace", "0", "--reuse", str(reuse),
                "--image", SLIM]
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.url = self.p.stdout.readline().strip()

    def pool_size(self):
        _, t = post(self.url, "/metrics", method="GET")
        for line in t.decode().splitlines():
            if line.startswith("sandboxctl_serve_pool_size{"):
                return int(float(line.rsplit(" ", 1)[1]))
        return 0

    def wait_pool(self, n, timeout=300):
        until = time.time() + timeout
        while self.pool_size() < n and time.time() < until:
            time.sleep(0.1)

    def claim(self):
        t0 = time.monotonic()
        st, d = post(self.url, "/v1/episodes", {"task": "banking_reserve"})
        if st != 201:
            raise RuntimeError("claim: %d %s" % (st, d[:200]))
        e = json.loads(d)
        st, _ = post(e["mcp_url"], "", INIT)
        if st != 200:
            raise RuntimeError("initialize: %d" % st)
        return e, (time.monotonic() - t0) * 1000

    def finish(self, e, complete=True):
        if complete:
            post(e["rest_url"], "/task/complete", {})
        st, d = post(self.url, "/v1/episodes/%s/finish" % e["id"])
        return json.loads(d)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=300)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def latency(pool, n, quiet=False):
    """quiet: wait until the pool is full before each claim (no filler competing for the CPU)."""
    s = Serve(pool)
    lat, inside, warm = [], [], 0
    try:
        for _ in range(n):
            if pool:
                s.wait_pool(pool if quiet else 1)
            e, ms = s.claim()
            warm += e["warm"]
            lat.append(ms)
            inside.append(e["claim_ms"])
            s.finish(e)
    finally:
        s.stop()
    return lat, inside, warm


def machine_cpu_s():
    """Busy CPU seconds of the whole machine so far (every core, /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def throughput(pool, n, c, reuse=1):
    s = Serve(pool, reuse)
    errors, resets = [], []
    if pool:
        s.wait_pool(pool)

    def episode(_):
        try:
            e, _ = s.claim()
            r = s.finish(e)
            if "reset" in r.get("timings_ms", {}):
                resets.append(r["timings_ms"]["reset"])
        except Exception as ex:  # noqa: BLE001 - a figure, not a test
            errors.append(str(ex))

    t0, cpu0 = time.monotonic(), machine_cpu_s()
    each_once(n, c, episode)
    el, cpu = time.monotonic() - t0, machine_cpu_s() - cpu0
    s.stop()
    return n / el * 60, errors, cpu / n * 1000, cpu / el / os.cpu_count(), resets


def floor(n, c):
    """The engine's floor in episodes/min: create, start, wait, remove `true`."""
    js = {"Content-Type": "application/json"}
    body = json.dumps({"Image": SLIM, "Entrypoint": ["true"], "Cmd": [],
                       "Labels": {"sandboxctl.test": "1"}, "HostConfig": {"NetworkMode": "none"}})

    def one(_):
        st, d = engine("POST", "/containers/create", body, headers=js)
        if st != 201:
            raise RuntimeError("create: %s %s" % (st, d))
        engine("POST", "/containers/%s/start" % d["Id"])
        engine("POST", "/containers/%s/wait" % d["Id"])
        engine("DELETE", "/containers/%s?force=1" % d["Id"])

    t0 = time.monotonic()
    each_once(n, c, one)
    return n / (time.monotonic() - t0) * 60


try:
    if os.environ.get("SBX_BENCH_LATENCY") == "1":
        print("claim latency, POST /v1/episodes until initialize answers (%d claims each):" %
              claims)
        for name, pool, quiet in (("warm, pool full", 2, True), ("warm, refilling", 4, False),
                                  ("cold", 0, False)):
            lat, inside, warm = latency(pool, claims, quiet)
            print("  %-16s p50 %6.1f ms  p99 %6.1f ms  mean %6.1f  min %6.1f  max %6.1f  "
                  "(service-side claim p50 %5.1f ms; %d warm)" %
                  (name, statistics.median(lat), pct(lat, 99), statistics.mean(lat), min(lat),
                   max(lat), statistics.median(inside), warm))
    all_resets = []
    for c in sorted({1, 2, conc}):
        fl = floor(episodes, c)
        print("episodes per minute at concurrency %d (claim, complete_task, finish; %d episodes):" %
              (c, episodes))
        print("  %-9s %7.1f episodes/min (create, start, wait, remove of `true`)" % ("floor", fl))
        # Reuse: one sandbox per client, serving every episode it gets (reset in between).
        for name, pool, reuse in (("cold", 0, 1), ("pool %d" % (2 * c), 2 * c, 1),
                                  ("reuse", c, 1000000)):
            epm, errs, cpu_ms, busy, resets = throughput(pool, episodes, c, reuse)
            all_resets += resets
            # CPU per episode is the machine's (engine, runc, sandboxes, service, this
            # client): when busy is near 100% the loop is bound by it, pool or not.
            print("  %-9s %7.1f episodes/min = %4.1fx floor, machine CPU %5.0f ms per episode, "
                  "%3.0f%% busy%s" % (name, epm, epm / fl, cpu_ms, busy * 100,
                                      ", %d errors" % len(errs) if errs else ""))
    if all_resets:
        print("reset in place (host round trip, %d resets): p50 %.1f ms, p99 %.1f ms, max %.1f ms" %
              (len(all_resets), statistics.median(all_resets), pct(all_resets, 99),
               max(all_resets)))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
