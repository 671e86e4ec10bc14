#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""README.md's "Using it" block, run line by line as a newcomer would in a fresh
clone: in a scratch directory holding this build (build/), copies of tasks/ and
examples/ and tests/compat/data (what the block's lines name), on the machine's
real engine and images. Each line must exit 0 within its time bound.

A line is skipped, and says why, only when it
  1. needs what the block does not make: a model endpoint (--agent llm), a file the
     user writes (my_agent.py, OUTPUT.ods, ORACLE.ods, grading.yaml), sweeps the
     block never ran (sweeps/a, sweeps/b);
  2. waits for someone: an outside agent (run without --agent), an MCP client (mcp),
     a browser (view);
  3. acts on the whole shared engine, not on its own sandboxes: build (remakes the
     images), gc (removes every orphan, other people's too).
A synopsis line (with [optional] parts or `a | b` alternatives) runs its first form
without the optional parts. The --keep line must name the sandbox it kept and how
to remove it; the test removes it through the Engine API. Nothing else may be left.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import second_engine  # noqa: E402
from itest import BUILD, DEFAULT_SLIM_IMAGE, SKIP, SRC, fail  # noqa: E402

LINE_TIMEOUT = 240
SKIPS = [
    (r"--agent llm\b", "1: needs a model endpoint"),
    (r"my_agent\.py|OUTPUT\.|ORACLE\.|grading\.yaml", "1: a file the user writes"),
    (r"sweeps/a\b|sweeps/b\b", "1: sweeps the block does not make"),
    (r"^\$B run (?!.*--agent)", "2: waits for an outside agent"),
    (r"^\$B mcp\b", "2: waits for an MCP client on stdin"),
    (r"^\$B view\b", "2: serves a browser until stopped"),
    (r"^\$B build\b", "3: remakes the shared images"),
    (r"^\$B gc\b", "3: removes every orphan on the shared engine"),
]


def readme_lines():
    """The block's commands: continuations joined, comments and comment-only lines dropped."""
    text = open(os.path.join(SRC, "README.md")).read()
    block = re.search(r"## Using it\s*\n+```sh\n(.*?)```", text, re.S)
    if not block:
        fail("README.md: no ```sh block under '## Using it'")
    out, cur = [], ""
    for raw in block.group(1).splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        cur += raw.strip() if cur else raw
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip() + " "
            continue
        out.append(strip_comment(cur))
        cur = ""
    return out


def strip_comment(line):
    """The line without its trailing '# comment' (a '#' after a blank, outside quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and i > 0 and line[i - 1] in " \t":
            return line[:i].rstrip()
    return line.rstrip()


def first_form(line):
    """A synopsis's first form: before the first ' | ' alternative, [optional] parts dropped."""
    if "[" not in line:
        return line
    line = line.split(" | ")[0]
    return re.sub(r"\s*\[[^\]]*\]", "", line).strip()


def containers(run_id):
    f = urllib.parse.quote(json.dumps({"label": ["sandboxctl.run-id=" + run_id]}))
    st, body = second_engine.engine("GET", "/containers/json?all=1&filters=" + f)
    if st != 200:
        fail("engine: list containers: %s %s" % (st, body))
    return body


def run_ids(root):
    ids = []
    for d, dirs, _ in os.walk(root):
        if os.path.basename(d) == "runs":
            ids += dirs
            dirs[:] = []
    return ids


def main():
    if not os.path.exists("/var/run/docker.sock") and not os.environ.get("DOCKER_HOST"):
        print("skip: no Docker engine")
        return SKIP
    # The README's commands pass no --image: sandboxctl's default.
    st, _ = second_engine.engine("GET", "/images/%s/json" % urllib.parse.quote(DEFAULT_SLIM_IMAGE, safe=""))
    if st != 200:
        print("skip: %s missing (sandboxctl build)" % DEFAULT_SLIM_IMAGE)
        return SKIP
    tmp = tempfile.mkdtemp(prefix="sbx-readme-")
    env = {k: v for k, v in os.environ.items() if k != "SBX_TASKS_DIR"}
    kept = []
    try:
        os.symlink(os.path.abspath(BUILD), os.path.join(tmp, "build"))
        for d in ("tasks", "examples", "tests/compat/data", "tests/data/harbor"):
            shutil.copytree(os.path.join(SRC, d), os.path.join(tmp, d), symlinks=True)
        ran, skipped, t0 = 0, 0, time.time()
        for line in readme_lines():
            m = re.match(r"^(\w+)=(\S+)$", line)
            if m:
                env[m.group(1)] = m.group(2)
                continue
            why = next((w for pat, w in SKIPS if re.search(pat, line)), None)
            if why:
                print("skip (rule %s): %s" % (why, line))
                skipped += 1
                continue
            cmd = first_form(line)
            t = time.time()
            p = subprocess.run(["sh", "-c", cmd], cwd=tmp, env=env, capture_output=True,
                               text=True, timeout=LINE_TIMEOUT, stdin=subprocess.DEVNULL)
            if p.returncode != 0:
                fail("README line %r: exit %d\nstdout: %s\nstderr: %s" % (
                    cmd, p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
            if "--keep" in cmd:
                m = re.search(r"kept sandbox ([0-9a-f]{12}) \(--keep\); remove it with: "
                              r"sandboxctl gc --run-id (\S+)", p.stderr)
                if not m:
                    fail("--keep does not say which sandbox it kept:\n%s" % p.stderr)
                left = containers(m.group(2))
                if len(left) != 1 or not left[0]["Id"].startswith(m.group(1)):
                    fail("--keep: sandbox %s of run %s is not there: %s" % (
                        m.group(1), m.group(2), left))
                kept.append(left[0]["Id"])
            ran += 1
            print("ok %5.1f s: %s" % (time.time() - t, cmd))
        for cid in kept:
            st, _ = second_engine.engine("DELETE", "/containers/%s?force=1&v=1" % cid)
            if st != 204:
                fail("removing the kept sandbox %s: HTTP %s" % (cid, st))
        kept = []
        left = [r for r in run_ids(tmp) if containers(r)]
        if left:
            fail("containers left behind by runs %s" % left)
        if not os.path.isfile(os.path.join(tmp, "tasks", "bank_ref", "task.yaml")):
            fail("tasks import wrote no tasks/bank_ref/task.yaml")
        print("README block: %d lines ran, %d skipped by the rules above, in %.0f s" % (
            ran, skipped, time.time() - t0))
        return 0
    finally:
        for cid in kept:
            second_engine.engine("DELETE", "/containers/%s?force=1&v=1" % cid)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
