#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Any image (issue 30): what a foreign image costs, and the bundle's two ways in.

1. Episode time (demo agent, banking_reserve, N runs each, median): our slim
   image vs foreign images (busybox-static, glibc without Python) that get
   the bundle volume.
2. The bundle as a read-only volume (what sandboxctl does): first episode
   (the volume made: a helper container copies the programs) vs cached.
3. The bundle as a thin layer on the task's image (docker build FROM the
   image + COPY of the same bundle, cached by the engine): first build, a
   cached build, the layer's size, and an episode on the layered image.

Usage: bench/anyimage.py BUILD_DIR [N]   (needs the slim image and the docker CLI)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests", "lib"))
import foreign_images  # noqa: E402
from itest import SLIM_IMAGE  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build")
N = int(sys.argv[2]) if len(sys.argv) > 2 else 5
SBX = os.path.join(BUILD, "cmd", "sandboxctl")
TMP = tempfile.mkdtemp(prefix="sbx-bench-anyimage-")


def sh(*args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def episode(image):
    """(wall ms, result.json timings) of one demo episode."""
    t = time.monotonic()
    p = subprocess.run([SBX, "run", "--task", "banking_reserve", "--tasks-dir",
                        os.path.join(SRC, "tasks"), "--image", image, "--agent", "demo",
                        "--runs-dir", os.path.join(TMP, "runs"), "--test-label", "--json"],
                       capture_output=True, text=True)
    wall = (time.monotonic() - t) * 1000
    res = json.loads(p.stdout.strip().splitlines()[-1])
    if res["status"] != "pass":
        sys.exit("episode on %s: %s\n%s" % (image, res["status"], p.stderr))
    return wall, res["timings_ms"]


def median_episode(image, n=N):
    runs = [episode(image) for _ in range(n)]
    return (statistics.median(w for w, _ in runs),
            statistics.median(t["create"] for _, t in runs),
            statistics.median(t["total"] for _, t in runs))


def bundle_volumes():
    return [v for v in sh("docker", "volume", "ls", "-q").split()
            if v.startswith("sandboxctl-bundle-")]


def main():
    busybox = foreign_images.ensure("busybox")
    glibc = foreign_images.ensure("glibc")
    print("any image: %d demo episodes each (banking_reserve), medians; wall = the whole "
          "'sandboxctl run' process" % N)

    # 2. volume, first episode: the bundle made (volumes not in use only).
    for v in bundle_volumes():
        subprocess.run(["docker", "volume", "rm", v], capture_output=True)
    kept = [v for v in bundle_volumes() if not v.endswith(".ready")]
    first_wall, first_t = episode(busybox)
    print("volume, first episode (%s): wall %.0f ms, create phase %.0f ms" %
          ("bundle made" if not kept else "NOT a first make: %s in use" % kept[0],
           first_wall, first_t["create"]))

    # 1. episodes, cached bundle.
    rows = [("%s (ours)" % SLIM_IMAGE, SLIM_IMAGE),
            ("busybox-static + bundle volume", busybox),
            ("glibc, no python + bundle volume", glibc)]
    base = None
    for label, image in rows:
        w, c, tot = median_episode(image)
        base = base or w
        print("  %-40s wall %6.0f ms (%+5.0f ms vs slim), create %4.0f ms, total %5.0f ms" %
              (label, w, w - base, c, tot))

    # 3. layer: the same bundle COPYed onto the image with docker build.
    vol = [v for v in bundle_volumes() if not v.endswith(".ready")][0]
    ctx = os.path.join(TMP, "ctx")
    os.makedirs(ctx)
    tar = subprocess.run(["docker", "run", "--rm", "--network", "none", "-v", vol + ":/b:ro",
                          busybox, "tar", "-C", "/b", "-cf", "-", "v1"],
                         check=True, capture_output=True).stdout
    subprocess.run(["tar", "-C", ctx, "-xf", "-"], input=tar, check=True)
    b = "/opt/sandboxctl/v1"
    with open(os.path.join(ctx, "Dockerfile"), "w") as f:
        f.write("FROM %s\nCOPY v1 %s\nLABEL sandboxctl.image=slim sandboxctl.test=1\n"
                "ENV PATH=%s/bin:/bin SANDBOX_RUN_DIR=/run/sandbox\n"
                "ENTRYPOINT [\"%s/bin/sandbox-init\", \"--\", \"%s/lib/ld.so\", "
                "\"--inhibit-cache\", \"--library-path\", \"%s/lib\", \"%s/libexec/sandbox-mcp\", "
                "\"--workspace\", \"/workspace\", \"--unix\", \"/run/sandbox/mcp.sock\", "
                "\"--ready-file\", \"/run/sandbox/ready\"]\n" % (busybox, b, b, b, b, b, b))
    tag = "sandboxctl-bench/anyimage-layer:latest"
    subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)
    env = dict(os.environ, DOCKER_BUILDKIT="0")
    t = time.monotonic()
    sh("docker", "build", "-q", "--no-cache", "-t", tag, ctx, env=env)
    first_build = (time.monotonic() - t) * 1000
    t = time.monotonic()
    sh("docker", "build", "-q", "-t", tag, ctx, env=env)
    cached_build = (time.monotonic() - t) * 1000
    t = time.monotonic()
    sh("docker", "image", "inspect", tag)
    lookup = (time.monotonic() - t) * 1000
    size = int(sh("docker", "image", "inspect", "-f", "{{.Size}}", tag)) - \
        int(sh("docker", "image", "inspect", "-f", "{{.Size}}", busybox))
    w, c, tot = median_episode(tag)
    print("layer: first build %.0f ms, cached build %.0f ms (a tag lookup instead: %.0f ms), "
          "+%.1f MB per image" % (first_build, cached_build, lookup, size / 1e6))
    print("  %-40s wall %6.0f ms (%+5.0f ms vs slim), create %4.0f ms, total %5.0f ms" %
          ("busybox-static + bundle layer", w, w - base, c, tot))
    subprocess.run(["docker", "rmi", "-f", tag], capture_output=True)
    shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
