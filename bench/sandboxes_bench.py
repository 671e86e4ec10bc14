#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sandboxes without a task, measured (see sandboxes.sh):

    bench/sandboxes.sh [BUILD_DIR] [EXECS] [CREATES] [IMAGE]

exec: POST /v1/sandboxes/{id}/exec of ["true"] on one keep-alive connection;
baseline: `docker exec CONTAINER true` (the docker CLI, what a provider that
execs per call pays). create+delete: POST then DELETE, warm (a pool sandbox
ready before each, waited for outside the timing) and cold (limits the pool
does not have).
"""
import http.client
import json
import os
import subprocess
import sys
import time
import urllib.parse

from openenv_bench import pct

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from itest import SLIM_IMAGE  # noqa: E402
IMAGE_DEFAULT = SLIM_IMAGE


class Serve:
    def __init__(self, build, image):
        self.p = subprocess.Popen([os.path.join(build, "cmd", "sandboxctl"), "serve",
                                   "--pool", "0", "--pool-image", image + "=1", "--test-label"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        u = urllib.parse.urlsplit(self.p.stdout.readline().strip())
        self.prefix = u.path
        self.c = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
        self.image = image

    def call(self, method, path, body=None):
        self.c.request(method, self.prefix + path,
                       json.dumps(body) if isinstance(body, dict) else body)
        r = self.c.getresponse()
        data = r.read()
        return r.status, data

    def json(self, method, path, body=None):
        st, data = self.call(method, path, body)
        return st, json.loads(data) if data else None

    def pool_ready(self):
        _, text = self.call("GET", "/metrics")
        want = 'sandboxctl_serve_pool_size{image="%s"} ' % self.image
        return any(line.startswith(want) and float(line.split()[-1]) >= 1
                   for line in text.decode().splitlines())

    def stop(self):
        self.p.terminate()
        self.p.wait(120)


def timed(fn, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def show(name, xs):
    print("%-44s p50 %8.2f ms   p99 %8.2f ms   (n=%d)" % (name, pct(xs, 0.5), pct(xs, 0.99),
                                                          len(xs)))


def create_delete(s, n, warm):
    """(create ms, delete ms, create+delete ms) lists."""
    cr, de, both = [], [], []
    for _ in range(n):
        if warm:
            while not s.pool_ready():
                time.sleep(0.05)
        body = {"image": s.image} if warm else {"image": s.image, "pids": 129}
        t = time.perf_counter()
        st, d = s.json("POST", "/v1/sandboxes", body)
        t1 = time.perf_counter()
        if st != 201 or d["warm"] != warm:
            sys.exit("create: %d %s" % (st, d))
        st, _ = s.call("DELETE", "/v1/sandboxes/" + d["id"])
        t2 = time.perf_counter()
        if st not in (200, 202):  # removed (200), or reset in place (202, --reuse)
            sys.exit("delete: %d" % st)
        cr.append((t1 - t) * 1000)
        de.append((t2 - t1) * 1000)
        both.append((t2 - t) * 1000)
    return cr, de, both


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    n_exec = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    n_create = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    image = sys.argv[4] if len(sys.argv) > 4 else IMAGE_DEFAULT
    s = Serve(build, image)
    try:
        while not s.pool_ready():
            time.sleep(0.1)
        st, d = s.json("POST", "/v1/sandboxes", {"image": image})
        if st != 201:
            sys.exit("create: %d %s" % (st, d))
        sid = d["id"]
        path = "/v1/sandboxes/%s/exec" % sid
        timed(lambda: s.call("POST", path, {"cmd": ["true"]}), 20)  # streams opened, caches warm
        show("exec round trip (true)", timed(lambda: s.call("POST", path, {"cmd": ["true"]}),
                                             n_exec))
        cid = d["container"]
        base = timed(lambda: subprocess.run(["docker", "exec", cid, "true"], check=True),
                     max(10, n_exec // 10))
        show("baseline: docker exec (CLI) on the same one", base)
        mib = os.urandom(1 << 20)
        fpath = "/v1/sandboxes/%s/files?path=bench.bin" % sid
        show("file 1 MiB put+get",
             timed(lambda: (s.call("PUT", fpath, mib), s.call("GET", fpath)), 20))
        s.call("DELETE", "/v1/sandboxes/" + sid)
        for warm in (True, False):
            kind = "warm (from the pool)" if warm else "cold"
            cr, de, both = create_delete(s, n_create, warm)
            show("create, " + kind, cr)
            show("delete (answered once removed; serve without --reuse), " + kind, de)
            show("create+delete, " + kind, both)
    finally:
        s.stop()
    with open("/proc/loadavg") as f:
        print("load average: %s" % " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
