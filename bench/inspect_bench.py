#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The sandboxctl Inspect provider against Inspect's docker provider's way of
working, on this machine and the same image (sandboxctl/sandbox-slim):

  - sample_init + sample_cleanup, p50/p99 over N samples at concurrency 1 and 4;
  - exec round trip (`true`), p50/p99;
  - the self-check suite's wall time (tests/python/test_self_check.py).

Inspect's docker provider needs the `docker compose` v2 plugin (its
validate_prereqs checks `docker compose version`); this machine has only
Debian's docker-compose 1.29 and no way to install the plugin from Debian or
PyPI, so its stand-in is what compose does per sample, with the docker CLI:
sample_init = `docker run -d` (network none) + `docker exec pwd` (the
provider's container_working_dir), sample_cleanup = `docker rm -f`, exec =
`docker exec`. The real provider adds `compose up`'s project bookkeeping and a
`compose ps` check, so the stand-in is, if anything, faster than it.

    bench/inspect.sh [BUILD_DIR] [N] [IMAGE]

IMAGE (default the slim one) for both, e.g. a hash tag while builds move :latest;
$BENCH_POOL the provider's pool (default 4, the provider's default); $BENCH_REUSE
its reuse (default the provider's, 100: a deleted sandbox is reset in place and
goes back to the pool; 1: a new container per sample).
"""
import asyncio
import os
import statistics
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# this tree's package (pip's editable install may be another checkout's)
sys.path.insert(0, os.path.join(SRC, "python", "src"))
sys.path.insert(0, os.path.join(SRC, "tests", "lib"))
from itest import DEFAULT_SLIM_IMAGE, SLIM_IMAGE  # noqa: E402
IMAGE = sys.argv[3] if len(sys.argv) > 3 else SLIM_IMAGE


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def line(name, xs):
    print("  %-34s p50 %8.1f ms  p99 %8.1f ms  (n=%d, mean %.1f)" % (name, pct(xs, 0.5), pct(xs, 0.99), len(xs),
                                                                  statistics.mean(xs)))


async def timed(fn):
    t0 = time.perf_counter()
    r = await fn()
    return (time.perf_counter() - t0) * 1000, r


async def samples(n, conc, init, cleanup, before=None):
    """n samples at conc at once: (init ms list, init+cleanup ms list, inits that
    were warm); before() is awaited ahead of each sample, untimed."""
    sem = asyncio.Semaphore(conc)
    inits, totals, warm = [], [], []

    async def one():
        async with sem:
            if before:
                await before()
            t_init, env = await timed(init)
            t_clean, _ = await timed(lambda: cleanup(env))
            inits.append(t_init)
            totals.append(t_init + t_clean)
            if isinstance(env, dict):
                warm.append(bool(env["default"].sandbox.raw.get("warm")))

    await asyncio.gather(*(one() for _ in range(n)))
    return inits, totals, warm


# ---- sandboxctl ----

async def bench_sandboxctl(n):
    from sandboxctl.inspect_provider import SandboxctlConfig, SandboxctlSandboxEnvironment as P, _Service
    from sandboxctl import Client

    slim = IMAGE == DEFAULT_SLIM_IMAGE
    # the provider's defaults (a pool of 4)
    reuse = {"reuse": int(os.environ["BENCH_REUSE"])} if os.environ.get("BENCH_REUSE") else {}
    cfg = SandboxctlConfig(serve_args=["--test-label"], image=None if slim else IMAGE,
                           pool=int(os.environ.get("BENCH_POOL", "4")), **reuse)
    await P.task_init("bench", cfg)
    client = Client(_Service.proc.url)

    def pool_full():
        m = client.metrics()
        sizes = [float(l.rsplit(" ", 1)[1]) for l in m.splitlines() if l.startswith("sandboxctl_serve_pool_size")]
        return max(sizes, default=0) >= cfg.pool

    out = {}
    try:
        for conc in (1, 4):
            t0 = time.time()
            while not pool_full() and time.time() - t0 < 60:
                await asyncio.sleep(0.2)
            init = lambda: P.sample_init("bench", cfg, {})  # noqa: E731
            cleanup = lambda envs: P.sample_cleanup("bench", cfg, envs, False)  # noqa: E731
            out[conc] = await samples(n, conc, init, cleanup)
            # paced: each sample starts once the pool is full again, as in an eval
            # whose samples outlast a refill (the model's turns take seconds)
            async def pool_refilled():
                while not pool_full():
                    await asyncio.sleep(0.05)
            out[(conc, "paced")] = await samples(n // 2, conc, init, cleanup, before=pool_refilled)
        envs = await P.sample_init("bench", cfg, {})
        env = envs["default"]
        for _ in range(10):
            await env.exec(["true"])
        ex = [(await timed(lambda: env.exec(["true"])))[0] for _ in range(200)]
        await P.sample_cleanup("bench", cfg, envs, False)
    finally:
        client.close()
        await P.task_cleanup("bench", cfg, True)
    return out, ex


# ---- the docker stand-in ----

async def sh(*args):
    p = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE,
                                             stderr=asyncio.subprocess.PIPE)
    out, err = await p.communicate()
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(args[:3]), err.decode()[-300:]))
    return out.decode().strip()


async def docker_init():
    cid = await sh("docker", "run", "-d", "--network", "none", "--label", "sandboxctl.test=1",
                   "--entrypoint", "sleep", IMAGE, "infinity")
    await sh("docker", "exec", cid, "pwd")
    return cid


async def docker_cleanup(cid):
    await sh("docker", "rm", "-f", cid)


async def bench_docker(n):
    out = {}
    for conc in (1, 4):
        out[conc] = await samples(n, conc, docker_init, docker_cleanup)
    cid = await docker_init()
    try:
        for _ in range(3):
            await sh("docker", "exec", cid, "true")
        ex = [(await timed(lambda: sh("docker", "exec", cid, "true")))[0] for _ in range(50)]
    finally:
        await docker_cleanup(cid)
    return out, ex


def self_check_wall(build):
    env = dict(os.environ, SBX_SOURCE_ROOT=SRC, SBX_BUILD_ROOT=os.path.abspath(build),
               PYTHONPATH=os.pathsep.join([os.path.join(SRC, "python", "src")] +
                                          ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    if IMAGE != DEFAULT_SLIM_IMAGE:
        env["SBX_PY_TEST_IMAGE"] = IMAGE
    t0 = time.time()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-c", os.path.join(SRC, "tests/python/pytest.ini"),
                        os.path.join(SRC, "tests/python/test_self_check.py")], env=env, capture_output=True,
                       text=True)
    wall = time.time() - t0
    summary = (r.stdout.strip().splitlines() or [""])[-1]
    return wall, summary


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    os.environ["SANDBOXCTL_BIN"] = os.path.abspath(os.path.join(build, "cmd", "sandboxctl"))
    print("image %s, %d samples, pool %s, reuse %s; load average before: %s" % (
        IMAGE, n, os.environ.get("BENCH_POOL", "4"), os.environ.get("BENCH_REUSE", "the provider's"),
        open("/proc/loadavg").read().split()[:3]))
    ours, ours_exec = asyncio.run(bench_sandboxctl(n))
    theirs, theirs_exec = asyncio.run(bench_docker(n))
    for conc in (1, 4):
        print("concurrency %d, %d samples:" % (conc, n))
        line("sandboxctl sample_init", ours[conc][0])
        w = ours[conc][2]
        if w:
            line("  of which from the warm pool (%d)" % sum(w), [t for t, x in zip(ours[conc][0], w) if x] or [0])
        line("sandboxctl sample_init+cleanup", ours[conc][1])
        line("docker stand-in sample_init", theirs[conc][0])
        line("docker stand-in sample_init+cleanup", theirs[conc][1])
        print("  sample_init p50 ratio docker/sandboxctl: %.1fx (target >= 10x)" %
              (pct(theirs[conc][0], 0.5) / pct(ours[conc][0], 0.5)))
        paced = ours[(conc, "paced")]
        line("sandboxctl paced sample_init", paced[0])
        print("    (%d of %d warm; each started once the pool was full again)" % (sum(paced[2]), len(paced[2])))
        print("  paced sample_init p50 ratio docker/sandboxctl: %.1fx" %
              (pct(theirs[conc][0], 0.5) / pct(paced[0], 0.5)))
    print("exec round trip (`true`):")
    line("sandboxctl exec", ours_exec)
    line("docker exec", theirs_exec)
    print("  target: sandboxctl exec p50 < 10 ms")
    wall, summary = self_check_wall(build)
    print("self-check suite: %.1f s wall (%s)" % (wall, summary))
    print("load average after: %s" % open("/proc/loadavg").read().split()[:3])


if __name__ == "__main__":
    main()
