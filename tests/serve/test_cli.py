#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl serve`'s usage errors and --help, without an engine: every
option --help names is accepted by the parser, and a bad value is exit 2."""
import os
import re
import subprocess
import sys

BUILD = os.environ.get("SBX_BUILD_ROOT", os.path.dirname(os.path.abspath(__file__)) + "/../../build")
SBX = os.path.join(BUILD, "cmd", "sandboxctl")


def run(*args):
    p = subprocess.run([SBX, "serve"] + list(args), capture_output=True, text=True, timeout=30)
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
    rc, _, err = run("--pool", "2", "--listen", "unix:/nonexistent-dir/x.sock")
    assert rc != 0 and "nonexistent" in err, (rc, err)
    print("ok")


if __name__ == "__main__":
    main()
    sys.exit(0)
