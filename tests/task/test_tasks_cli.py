#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sandboxctl tasks new` and `tasks generate` as a newcomer uses them (issue 27):
the scaffold in each format validates and its oracle passes; Ctrl-C in
`tasks generate` ends the task's generator too, exit 130.

Usage: test_tasks_cli.py SANDBOXCTL
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SANDBOXCTL = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else "sandboxctl"

# A generator that says who it is, then takes its time: a real one converting
# a large workbook. ignore_term: it traps SIGTERM, so only SIGKILL ends it.
SLOW_GEN = """#!/bin/sh
%s
sleep 60 &
echo $$ $! > "%s"
wait
"""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose: it no longer runs.
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(cond, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def sbx(*args):
    return subprocess.run([SANDBOXCTL, *args], capture_output=True, text=True, timeout=60)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class NewFormats(unittest.TestCase):
    """tasks new --format csv|ods|xlsx: each scaffold validates, its oracle grades PASS
    and its untouched file FAIL, and its gen.py needs Python's standard library only."""

    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="sbx-tasks-new-")
        self.addCleanup(shutil.rmtree, self.d, True)

    def check_format(self, fmt, args):
        t = os.path.join(self.d, "t_" + fmt)
        p = sbx("tasks", "new", t, *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("files/data.%s" % fmt, p.stdout)
        data, oracle = (os.path.join(t, "files", "data." + fmt),
                        os.path.join(t, "oracle", "expected." + fmt))
        for f in (data, oracle, os.path.join(t, "task.yaml"), os.path.join(t, "gen.py")):
            self.assertTrue(os.path.isfile(f), f)
        if fmt != "csv":
            self.assertEqual(read(data)[:2], b"PK")  # a workbook, not CSV under another name
        p = sbx("tasks", "validate", t)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, t + "/task.yaml: OK"), p.stderr)
        p = sbx("grade", "--task", t, oracle)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("case 'totals': PASS 11/11", p.stdout)
        p = sbx("grade", "--task", t, data)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("Sheet1!D2: expected=", p.stdout)
        # Seedable: one seed, one set of bytes; another seed, another.
        for n, seed in (("a", "3"), ("b", "3"), ("c", "4")):
            p = sbx("tasks", "generate", t, os.path.join(self.d, fmt + n), "--seed", seed)
            self.assertEqual(p.returncode, 0, p.stderr)
        inst = lambda n: read(os.path.join(self.d, fmt + n, "files", "data." + fmt))
        self.assertEqual(inst("a"), inst("b"))
        self.assertNotEqual(inst("a"), inst("c"))
        # The standard library alone: no site-packages (-S), no user paths (-I).
        out = os.path.join(self.d, fmt + "-stdlib")
        p = subprocess.run([sys.executable, "-I", "-S", os.path.join(t, "gen.py"), out, "3"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(read(os.path.join(out, "files", "data." + fmt)), inst("a"))

    def test_csv_by_default(self):
        self.check_format("csv", [])

    def test_ods(self):
        self.check_format("ods", ["--format", "ods"])

    def test_xlsx(self):
        self.check_format("xlsx", ["--format", "xlsx"])

    def test_bad_format(self):
        t = os.path.join(self.d, "bad")
        p = sbx("tasks", "new", t, "--format", "odss")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, "sandboxctl: tasks: new: --format 'odss' is not csv, ods "
                         "or xlsx (did you mean 'ods'?)\n")
        self.assertFalse(os.path.exists(t), "a refused format made the folder")
        p = sbx("tasks", "list", "--format", "ods")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--format is for 'tasks new'", p.stderr)


class Generate(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="sbx-tasks-cli-")
        self.addCleanup(shutil.rmtree, self.d, True)
        self.task = os.path.join(self.d, "slow")
        p = sbx("tasks", "new", self.task)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.pidfile = os.path.join(self.d, "gen.pid")

    def slow_generator(self, ignore_term=False):
        with open(os.path.join(self.task, "gen.py"), "w") as f:
            f.write(SLOW_GEN % ("trap '' TERM" if ignore_term else "", self.pidfile))

    def interrupt(self, to_group, ignore_term=False):
        """tasks generate, started as a terminal's foreground job (a process group of
        its own); SIGINT to that group (Ctrl-C) or to sandboxctl alone."""
        self.slow_generator(ignore_term)
        p = subprocess.Popen([SANDBOXCTL, "tasks", "generate", self.task,
                              os.path.join(self.d, "out"), "--seed", "3"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        self.assertTrue(wait_for(lambda: os.path.exists(self.pidfile) and
                                 read(self.pidfile).endswith(b"\n"), 20),
                        "the generator did not start")
        with open(self.pidfile) as f:
            gen, child = (int(x) for x in f.read().split())
        self.addCleanup(lambda: alive(gen) and os.killpg(gen, signal.SIGKILL))
        t = time.monotonic()
        if to_group:
            os.killpg(p.pid, signal.SIGINT)
        else:
            p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.fail("tasks generate still runs 20 s after SIGINT")
        took = time.monotonic() - t
        self.assertEqual(p.returncode, 130, err)
        self.assertEqual(err.strip().count("\n"), 0, err)  # one line
        self.assertIn("tasks: generate: interrupted; the generator was stopped", err)
        self.assertFalse(alive(gen), "the generator %d outlived sandboxctl" % gen)
        self.assertTrue(wait_for(lambda: not alive(child), 1), "the generator's child outlived it")
        return took

    def test_ctrl_c_to_the_group(self):
        self.assertLess(self.interrupt(to_group=True), 1.5)

    def test_sigint_to_sandboxctl_alone(self):
        self.assertLess(self.interrupt(to_group=False), 1.5)

    def test_generator_that_ignores_sigterm(self):
        # SIGTERM, then SIGKILL after 2 s.
        took = self.interrupt(to_group=True, ignore_term=True)
        self.assertGreater(took, 1.8)
        self.assertLess(took, 5)


if __name__ == "__main__":
    unittest.main(verbosity=2)
