#!/usr/bin/env python3
"""Benchmark (not a test): container start -> MCP server ready, for the
sandbox images, with the hardening the lifecycle uses. Talks to the Engine
API directly (no docker CLI). Prints one line per image.

  tests/image/bench_start.py [IMAGE...] [-n RUNS]
  default images: $SBX_TEST_SLIM_IMAGE $SBX_TEST_FULL_IMAGE (sandboxctl/sandbox-slim:latest sandboxctl/sandbox:latest)
"""
import json
import os
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from itest import FULL_IMAGE, SLIM_IMAGE  # noqa: E402
from unix_http import read_to_eof  # noqa: E402

SOCK = os.environ.get("DOCKER_SOCK", "/var/run/docker.sock")
API = "/v1.41"


def request(method, path, body=None, sock=None):
    s = sock or socket.socket(socket.AF_UNIX)
    if not sock:
        s.connect(SOCK)
    data = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {API}{path} HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n" \
           f"Content-Length: {len(data)}\r\n"
    if sock:  # the attach stream: keep the connection, upgrade
        head += "Connection: Upgrade\r\nUpgrade: tcp\r\n"
    else:
        head += "Connection: close\r\n"
    s.sendall(head.encode() + b"\r\n" + data)
    if sock:
        return s
    resp = read_to_eof(s)
    s.close()
    status = int(resp.split(b" ", 2)[1])
    body = resp.split(b"\r\n\r\n", 1)[1]
    return status, body


def one_run(image):
    cfg = {
        "Image": image, "User": "1000:1000", "Labels": {"sandboxctl.test": "1"},
        "Env": ["SANDBOX_RUN_DIR=/run/sandbox", "SANDBOX_TIMEOUT=120"],
        "AttachStdout": True, "AttachStderr": True, "NetworkDisabled": True,
        "HostConfig": {
            "CapDrop": ["ALL"], "SecurityOpt": ["no-new-privileges:true"],
            "ReadonlyRootfs": True, "NetworkMode": "none", "PidsLimit": 256,
            "Memory": 2 << 30,
            "Tmpfs": {"/workspace": "rw,nosuid,nodev,size=64m,uid=1000,gid=1000,mode=0755",
                      "/tmp": "rw,nosuid,nodev,size=64m,mode=1777",
                      "/run": "rw,nosuid,nodev,noexec,size=16m,uid=1000,gid=1000,mode=0755"},
        },
    }
    status, body = request("POST", "/containers/create", cfg)
    assert status == 201, body
    cid = json.loads(body)["Id"]
    try:
        att = socket.socket(socket.AF_UNIX)
        att.connect(SOCK)
        request("POST", f"/containers/{cid}/attach?stream=1&stdout=1&stderr=1", sock=att)
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += att.recv(4096)
        buf = buf.split(b"\r\n\r\n", 1)[1]
        t0 = time.monotonic()
        status, body = request("POST", f"/containers/{cid}/start")
        t_started = time.monotonic()
        assert status == 204, body
        att.settimeout(30)
        while b"ready" not in buf:
            chunk = att.recv(65536)
            if not chunk:
                raise RuntimeError("container ended before ready: %r" % buf[-400:])
            buf += chunk
        t_ready = time.monotonic()
        att.close()
        return t_started - t0, t_ready - t0
    finally:
        request("DELETE", f"/containers/{cid}?force=1")


def main():
    args = sys.argv[1:]
    runs = 10
    if "-n" in args:
        i = args.index("-n")
        runs = int(args[i + 1])
        del args[i:i + 2]
    images = args or [SLIM_IMAGE, FULL_IMAGE]
    for image in images:
        one_run(image)  # warm the page cache
        res = [one_run(image) for _ in range(runs)]
        start = [r[0] * 1000 for r in res]
        ready = [r[1] * 1000 for r in res]
        print(f"{image}: start API call {statistics.median(start):.0f} ms (median), "
              f"start->server ready median {statistics.median(ready):.0f} ms, "
              f"min {min(ready):.0f}, max {max(ready):.0f}, "
              f"ready after start returned {statistics.median(ready) - statistics.median(start):.0f} ms "
              f"({runs} runs)")


if __name__ == "__main__":
    main()
