#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl view` and `report` usage, without an engine: --help, usage
errors (exit 2), a non-loopback --listen refused, a report of a synthetic run
that references nothing outside itself, the server's token on a synthetic dir."""
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

BUILD = os.environ.get("SBX_BUILD_ROOT", os.path.dirname(os.path.abspath(__file__)) + "/../../build")
SANDBOXCTL = os.path.join(BUILD, "cmd", "sandboxctl")


def run(*args, cwd=None):
    return subprocess.run([SANDBOXCTL, *args], capture_output=True, text=True, timeout=30, cwd=cwd)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def main():
    p = run("view", "--help")
    check(p.returncode == 0 and "--listen ADDR" in p.stdout and "401" in p.stdout, "view --help")
    p = run("report", "--help")
    check(p.returncode == 0 and "-o, --output FILE" in p.stdout, "report --help")
    p = run("view", "--prot", "1")
    check(p.returncode == 2 and "did you mean '--port'" in p.stderr, f"typo: {p.stderr}")
    p = run("view", "--port", "70000", "/")
    check(p.returncode == 2 and "not a port" in p.stderr, f"--port: {p.stderr}")
    p = run("view", "--listen", "0.0.0.0", "/tmp")
    check(p.returncode == 2 and "not a loopback address" in p.stderr, f"--listen: {p.stderr}")
    p = run("view", "/no/such/dir")
    check(p.returncode == 2 and "cannot open" in p.stderr, f"missing dir: {p.stderr}")
    p = run("report", "/tmp")
    check(p.returncode == 2 and "-o FILE" in p.stderr, f"report without -o: {p.stderr}")
    with tempfile.TemporaryDirectory() as tmp:
        p = run("view", cwd=tmp)
        check(p.returncode == 2 and "no ./runs or ./sweeps" in p.stderr, f"no dirs: {p.stderr}")
        p = run("report", tmp, "-o", os.path.join(tmp, "r.html"))
        check(p.returncode == 2 and "neither a run" in p.stderr, f"report of nothing: {p.stderr}")
        run_dir = os.path.join(tmp, "runs", "r1")
        os.makedirs(run_dir)
        json.dump({"run_id": "r1", "status": "fail", "task": "<t>", "error": "<script>x</script>",
                   "agent": {"kind": "a"}}, open(os.path.join(run_dir, "result.json"), "w"))
        out = os.path.join(tmp, "r.html")
        p = run("report", run_dir, "-o", out)
        check(p.returncode == 0, f"report: {p.stderr}")
        html = open(out).read()
        check("&lt;script&gt;x&lt;/script&gt;" in html and "<script>x" not in html, "escaped")
        check("http://" not in html and "https://" not in html, "report references the network")
        v = subprocess.Popen([SANDBOXCTL, "view", os.path.join(tmp, "runs")],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = v.stdout.readline().strip()
            body = urllib.request.urlopen(url + "r/0/r1", timeout=10).read().decode()
            check('id="run-id">r1' in body, "run page")
            try:
                urllib.request.urlopen(url.rsplit("/", 2)[0] + "/r/0/r1", timeout=10)
                check(False, "no token: served")
            except urllib.error.HTTPError as e:
                check(e.code == 401, f"no token: {e.code}")
        finally:
            v.terminate()
            v.wait(10)
        check(v.returncode == 0, f"view after SIGTERM: exit {v.returncode}")
    print("view/report CLI: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
