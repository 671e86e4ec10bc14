#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl serve`'s usage errors and --help, without an engine: every
option --help names is accepted by the parser, and a bad value is exit 2."""
import os
import re
import subprocess
import sys
import time

BUILD = os.environ.get("SBX_BUILD_ROOT", os.path.dirname(os.path.abspath(__file__)) + "/../../build")
SBX = os.path.join(BUILD, "cmd", "sandboxctl")


def run(*args, env=None, timeout=30):
    p = subprocess.run([SBX, "serve"] + list(args), capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def main():
    rc, out, _ = run("--help")
    assert rc == 0, rc
    documented = set(re.findall(r"^  (--[a-z-]+)", out, re.M))
    for opt in ("--listen", "--pool", "--pool-image", "--idle-ttl", "--max-episodes",
                "--max-timeout", "--stop-grace", "--engine", "--token", "--fill-jobs"):
        assert opt in documented, "--help lacks %s" % opt
    for path in ("POST   /v1/episodes", "/finish", "DELETE", "/metrics", "/v1/health"):
        assert path in out, "--help lacks %s" % path
    bad = [
        ["--pool", "x"], ["--pool", "-1"], ["--pool", "1000"], ["--pool-image", "full"],
        ["--pool-image", "=2"], ["--pool-image", "full=x"], ["--idle-ttl", "0"],
        ["--max-episodes", "0"], ["--listen", "0.0.0.0:8080"], ["--listen", "10.0.0.1:1"],
        ["--listen", "127.0.0.1:99999"], ["--listen", "nothing"], ["--token", "short"],
        ["--token", "a/b/c/d/e/f/g/h/i/j"], ["--bogus"], ["--pool"], ["extra-argument"],
        ["--engine", "unix:///a#jobs=2"], ["--engine", ""], ["--engine", "#x"],
    ]
    for args in bad:
        rc, out, err = run(*args)
        assert rc == 2, "%s: exit %d (%s)" % (args, rc, err)
        assert out == "", "%s printed on stdout: %r" % (args, out)
        assert err.startswith("sandboxctl: serve: "), "%s: %r" % (args, err)
    # No engine: refused at start like sweep, exit 3 with the engine's error, at once
    # (not a URL and a service whose every claim fails).
    for env, args in (({"DOCKER_HOST": "unix:///nonexistent"}, []),
                      ({}, ["--engine", "unix:///nonexistent/docker.sock"])):
        t = time.time()
        try:
            rc, out, err = run(*args, env=env, timeout=5)
        except subprocess.TimeoutExpired:
            raise AssertionError("%s %s: serve started without an engine" % (env, args))
        took = time.time() - t
        assert rc == 3 and out == "", "%s %s: exit %d, stdout %r" % (env, args, rc, out)
        assert len(err.splitlines()) == 1 and "no Docker engine at 'unix:///nonexistent" in err, err
        assert took < 1, "%s %s: refused after %.2f s" % (env, args, took)
    rc, _, err = run("--pool", "2", "--listen", "unix:/nonexistent-dir/x.sock")
    assert rc != 0 and "nonexistent" in err, (rc, err)
    print("ok")


if __name__ == "__main__":
    main()
    sys.exit(0)
