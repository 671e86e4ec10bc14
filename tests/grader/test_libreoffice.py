#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration: files saved by a real LibreOffice grade like the originals.

Each task's oracle is re-saved by `soffice --headless` as ODS and as XLSX
(LibreOffice writes repeated rows/columns, its own styles, shared strings and
recalculated formulas) and graded with the task's configuration: every graded
cell must match. The task's starting files must open in LibreOffice too.

Usage: test_libreoffice.py SANDBOXCTL
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SANDBOXCTL = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else "sandboxctl"
SRC = os.environ.get("SBX_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
TASKS = os.path.join(SRC, "tasks")
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")


def first_of(key):
    """Every bundled task's first file under key (oracle:, files:), from its task.yaml."""
    out = {}
    for task in sorted(os.listdir(TASKS)):
        y = os.path.join(TASKS, task, "task.yaml")
        if not os.path.isfile(y):
            continue
        with open(y) as f:
            lines = f.read().splitlines()
        i = lines.index(key + ":")
        out[task] = lines[i + 1].strip()[2:]
    return out


@unittest.skipUnless(SOFFICE, "LibreOffice (soffice) is not installed")
class LibreOffice(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sbx-grade-lo-")
        # A private profile: never touch (or wait on) another soffice's.
        cls.profile = "file://" + os.path.join(cls.tmp, "profile")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def convert(self, src, fmt, outdir):
        os.makedirs(outdir, exist_ok=True)
        subprocess.run([SOFFICE, "-env:UserInstallation=" + self.profile, "--headless",
                        "--convert-to", fmt, "--outdir", outdir, src],
                       check=True, capture_output=True, timeout=180)
        out = os.path.join(outdir, os.path.splitext(os.path.basename(src))[0] + "." + fmt)
        self.assertTrue(os.path.exists(out), "LibreOffice wrote nothing for " + src)
        return out

    def grade(self, task, path):
        p = subprocess.run([SANDBOXCTL, "grade", "--tasks-dir", TASKS, "--task", task, path],
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout + p.stderr

    def test_resaved_oracles_pass(self):
        # Every task's oracle, re-saved by LibreOffice as ODS and XLSX, grades as
        # a full pass with the same cell count as the oracle itself.
        for task, oracle in first_of("oracle").items():
            src = os.path.join(TASKS, task, oracle)
            rc, text = self.grade(task, src)
            self.assertEqual(rc, 0, text)
            first = text.splitlines()[0]
            for fmt in ("ods", "xlsx"):
                with self.subTest(task=task, fmt=fmt):
                    out = self.convert(src, fmt, os.path.join(self.tmp, task, fmt))
                    rc, text = self.grade(task, out)
                    self.assertEqual(rc, 0, text)
                    self.assertEqual(text.splitlines()[0], first)

    def test_formula_text_survives_libreoffice(self):
        src = os.path.join(TASKS, "quarterly_totals", "oracle", "expected_totals.ods")
        cfg = os.path.join(self.tmp, "match.yaml")
        with open(cfg, "w") as f:
            f.write("formulas: match\n")
        for fmt in ("ods", "xlsx"):
            with self.subTest(fmt=fmt):
                out = self.convert(src, fmt, os.path.join(self.tmp, "match", fmt))
                p = subprocess.run([SANDBOXCTL, "grade", "--oracle", src, "--config", cfg, out],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertTrue(p.stdout.startswith("PASS 60/60"), p.stdout)

    def test_starting_files_open(self):
        # Every task's starting file opens in LibreOffice (CSV ones are CSV already).
        for task, start in first_of("files").items():
            if start.endswith(".csv"):
                continue
            with self.subTest(task=task):
                out = self.convert(os.path.join(TASKS, task, start), "csv",
                                   os.path.join(self.tmp, task, "csv"))
                with open(out, newline="") as f:
                    rows = list(csv.reader(f))
                self.assertGreater(len(rows), 3)
                self.assertTrue(rows[0][0] and rows[1][0], rows[:2])


if __name__ == "__main__":
    unittest.main(verbosity=2)
