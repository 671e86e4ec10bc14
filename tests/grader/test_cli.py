#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CLI tests for `sandboxctl grade` and `sandboxctl tasks`, run on the built binary.

Usage: test_cli.py SANDBOXCTL   (SBX_SOURCE_ROOT must point at the source tree)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from a1 import col_name  # noqa: E402

SANDBOXCTL = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else "sandboxctl"
SRC = os.environ.get("SBX_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
TASKS = os.path.join(SRC, "tasks")
ORACLE = os.path.join(TASKS, "banking_reserve", "oracle", "expected_reserves.ods")
START = os.path.join(TASKS, "banking_reserve", "files", "cash_flows.ods")
BUNDLED = sorted(n for n in os.listdir(TASKS) if os.path.isfile(os.path.join(TASKS, n, "task.yaml")))

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
}


def run(*args, cwd=None):
    env = dict(os.environ, SBX_TASKS_DIR=TASKS)
    p = subprocess.run([SANDBOXCTL, *args], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


def rewrite_ods(src, dst, old, new):
    """Copies an ODS, replacing text in content.xml; mimetype stays first and stored."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "content.xml":
                assert old.encode() in data, old
                data = data.replace(old.encode(), new.encode(), 1)
            zout.writestr(info, data)


def ods_rows(path):
    """The first sheet of an ODS as rows of (kind, value); kind 'n' number, 's' string."""
    with zipfile.ZipFile(path) as z:
        root = ET.fromstring(z.read("content.xml"))
    table = root.find(".//table:table", NS)
    rows = []
    for tr in table.findall("table:table-row", NS):
        row = []
        for tc in tr.findall("table:table-cell", NS):
            rep = int(tc.get("{%s}number-columns-repeated" % NS["table"], "1"))
            vt = tc.get("{%s}value-type" % NS["office"])
            if vt == "float":
                cell = ("n", tc.get("{%s}value" % NS["office"]))
            elif vt == "string":
                cell = ("s", "".join(tc.itertext()))
            else:
                cell = None
            row.extend([cell] * min(rep, 64))
        rows.append(row)
    return rows


def write_xlsx(rows, dst):
    """A minimal XLSX by hand (inline strings, numbers), as a foreign writer would make."""
    sheet = ['<?xml version="1.0" encoding="UTF-8"?>'
             '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
             '<sheetData>']
    for r, row in enumerate(rows, 1):
        sheet.append('<row r="%d">' % r)
        for c, cell in enumerate(row):
            if not cell:
                continue
            ref = "%s%d" % (col_name(c), r)
            if cell[0] == "n":
                sheet.append('<c r="%s"><v>%s</v></c>' % (ref, cell[1]))
            elif cell[0] == "f":  # a formula without a cached value
                sheet.append('<c r="%s"><f>%s</f></c>' % (ref, cell[1]))
            else:
                sheet.append('<c r="%s" t="inlineStr"><is><t>%s</t></is></c>' % (ref, cell[1]))
        sheet.append("</row>")
    sheet.append("</sheetData></worksheet>")
    files = {
        "[Content_Types].xml":
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/data.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            '</Types>',
        "_rels/.rels":
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
            '</Relationships>',
        "xl/workbook.xml":
            '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
            'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
            '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId7"/></sheets></workbook>',
        # The sheet part is not called sheet1.xml: readers must follow the relationship.
        "xl/_rels/workbook.xml.rels":
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/data.xml"/>'
            '</Relationships>',
        "xl/worksheets/data.xml": "".join(sheet),
    }
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            z.writestr(name, text)


class Grade(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sbx-grade-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_oracle_passes(self):
        rc, out, err = run("grade", "--task", "banking_reserve", ORACLE)
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("PASS 2/2 cases passed (soft 1.00, hard 1); 101/101 cells "
                                       "matched"), out)

    def test_one_changed_reserve(self):
        changed = os.path.join(self.tmp, "cash_flows.ods")
        rows = ods_rows(ORACLE)
        value = rows[1][3][1]  # D2, the first reserve
        rewrite_ods(ORACLE, changed, 'office:value="%s"' % value, 'office:value="1000"')
        diff = "%.10g" % abs(float(value) - 1000)
        line = "Sheet1!D2: expected=%s, got=1000 (numeric mismatch: diff=%s, tolerance=0.01)" % (
            value, diff)
        # Every answer cell counts: one wrong reserve is PARTIAL and exits 1.
        rc, out, err = run("grade", "--task", "banking_reserve", changed)
        self.assertEqual(rc, 1, err)
        self.assertTrue(out.startswith("PARTIAL 1/2 cases passed"), out)
        self.assertIn("100/101 cells matched", out.splitlines()[0])
        self.assertIn("  " + line, out.splitlines())
        # A lower threshold lets it pass.
        rc, out, err = run("grade", "--task", "banking_reserve", "--pass-threshold", "0.95",
                           changed)
        self.assertEqual(rc, 0, err)
        # The JSON report carries the same cell, numbers as numbers.
        rc, out, err = run("grade", "--task", "banking_reserve", "--json", changed)
        self.assertEqual(rc, 1, err)
        report = json.loads(out)
        self.assertEqual(report["status"], "PARTIAL")
        self.assertEqual(report["graded"], 101)
        self.assertEqual(report["matched"], 100)
        m = report["cases"][0]["mismatches"]
        self.assertEqual(len(m), 1)
        self.assertEqual(m[0]["cell"], "Sheet1!D2")
        self.assertEqual(m[0]["reason"], "number")
        self.assertEqual(m[0]["got"], 1000)
        self.assertEqual(m[0]["expected"], float(value))
        self.assertIsInstance(m[0]["expected"], float)
        opts = report["cases"][0]["options"]
        self.assertEqual(opts["tolerance"], 0.01)
        self.assertEqual(opts["pass_threshold"], 1)
        self.assertEqual(opts["formulas"], "ignore")
        self.assertIsNone(opts["round"])
        self.assertFalse(report["cases"][0]["gate"])
        self.assertTrue(report["cases"][1]["gate"])

    def test_changed_input_fails(self):
        # Every reserve right, but a given cash flow edited: the gate FAILs it, score 0.
        changed = os.path.join(self.tmp, "cash_flows.ods")
        cf = ods_rows(ORACLE)[1][1][1]  # B2
        rewrite_ods(ORACLE, changed, 'office:value="%s"' % cf, 'office:value="1.5"')
        rc, out, err = run("grade", "--task", "banking_reserve", changed)
        self.assertEqual(rc, 1, err)
        self.assertTrue(out.startswith("FAIL 1/2 cases passed"), out)
        self.assertIn("a gate failed: score 0", out.splitlines()[0])
        self.assertIn("  Sheet1!B2: expected=%s, got=1.5" % cf, out)
        rc, out, err = run("grade", "--task", "banking_reserve", "--json", changed)
        report = json.loads(out)
        self.assertEqual((report["status"], report["score"], report["gate_failed"]),
                         ("FAIL", 0, True))
        m = report["cases"][1]["mismatches"][0]
        self.assertEqual((m["cell"], m["got"], m["got_type"]), ("Sheet1!B2", 1.5, "number"))
        # Text stays text in JSON.
        hdr = os.path.join(self.tmp, "hdr.ods")
        rewrite_ods(ORACLE, hdr, ">Period<", ">12<")
        rc, out, err = run("grade", "--task", "banking_reserve", "--json", hdr)
        m = json.loads(out)["cases"][1]["mismatches"][0]
        self.assertEqual((m["expected"], m["got"]), ("Period", "12"))

    def test_starting_file_scores_zero(self):
        # Doing nothing earns nothing: the untouched file FAILs with score 0.
        rc, out, _ = run("grade", "--task", "banking_reserve", "--max-lines", "1", START)
        self.assertEqual(rc, 1)
        self.assertEqual(out.splitlines()[0],
                         "FAIL 1/2 cases passed (soft 0.50, hard 0); 0/101 cells matched (0.00%)")
        self.assertEqual(out.splitlines()[2],
                         '  Sheet1!D1: expected="Required_Reserve", got=empty (missing value)')

    def test_output_directory(self):
        d = os.path.join(self.tmp, "outputs")
        os.mkdir(d)
        shutil.copy(ORACLE, os.path.join(d, "cash_flows.ods"))
        rc, out, err = run("grade", "--task", "banking_reserve", d)
        self.assertEqual(rc, 0, err + out)
        # An agent's symlink out of the output directory is not followed.
        os.unlink(os.path.join(d, "cash_flows.ods"))
        os.symlink(ORACLE, os.path.join(d, "cash_flows.ods"))
        rc, out, err = run("grade", "--task", "banking_reserve", d)
        self.assertEqual(rc, 1, err + out)
        self.assertTrue(out.startswith("FAIL 0/2 cases passed"), out)
        self.assertIn("output 'cash_flows.ods'", out)
        # Nothing there: the same rule as a missing OUTPUT file (exit 2, one line).
        os.unlink(os.path.join(d, "cash_flows.ods"))
        rc, out, err = run("grade", "--task", "banking_reserve", d)
        self.assertEqual(rc, 2)
        self.assertEqual(err.strip().splitlines(), [
            "sandboxctl: grade: output 'cash_flows.ods' not found in '%s'" % d])
        rc, out, err = run("grade", "--task", "banking_reserve", os.path.join(d, "x.ods"))
        self.assertEqual(rc, 2)
        self.assertIn("not found", err)

    def test_xlsx_output_against_ods_oracle(self):
        x = os.path.join(self.tmp, "answer.xlsx")
        write_xlsx(ods_rows(ORACLE), x)
        rc, out, err = run("grade", "--task", "banking_reserve", x)
        self.assertEqual(rc, 0, err + out)
        self.assertTrue(out.startswith("PASS 2/2"), out)

    def test_hostile_formula_without_cached_value(self):
        # Issue 24: a 50,000-term chain in an answer cell with no cached value
        # overflowed the evaluator's stack (exit 139). Now it is unsupported:
        # that cell has no value, the rest is graded; a chain within the
        # 8,192-character bound computes.
        rows = ods_rows(ORACLE)
        value = rows[1][3][1]  # D2, the first reserve
        cell = ('<table:table-cell office:value-type="float" office:value="%s" '
                'calcext:value-type="float"><text:p>%s</text:p></table:table-cell>' % (value, value))
        for tail, n, ok in (("+0", 49999, False), ("*1", 49999, False), ("^1", 49999, False),
                            ("+0", 4000, True)):
            formula = value + tail * n
            ods = os.path.join(self.tmp, "cash_flows.ods")
            rewrite_ods(ORACLE, ods, cell, '<table:table-cell table:formula="of:=%s"/>' % formula)
            xlsx = os.path.join(self.tmp, "answer.xlsx")
            xrows = [list(r) for r in rows]
            xrows[1][3] = ("f", formula)
            write_xlsx(xrows, xlsx)
            for path in (ods, xlsx):
                rc, out, err = run("grade", "--task", "banking_reserve", path)
                what = "%s%s x %d in %s" % (value, tail, n, os.path.basename(path))
                if ok:
                    self.assertEqual(rc, 0, what + err + out)
                    self.assertTrue(out.startswith("PASS 2/2"), what + out)
                    continue
                self.assertEqual(rc, 1, what + err + out)
                self.assertTrue(out.startswith("PARTIAL 1/2 cases passed"), what + out)
                self.assertIn("100/101 cells matched", out.splitlines()[0], what)
                self.assertIn("Sheet1!D2", out, what)

    def grade_config(self, text, output=ORACLE):
        """`grade --oracle ORACLE --config grading.yaml output` with text as grading.yaml."""
        cfg = os.path.join(self.tmp, "grading.yaml")
        with open(cfg, "w") as f:
            f.write(text)
        return run("grade", "--oracle", ORACLE, "--config", cfg, output)

    def test_oracle_and_config(self):
        cfg = "tolerance: 0.01\npass_threshold: 1\nranges: ['Sheet1!D2:D101']\n"
        rc, out, err = self.grade_config(cfg)
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("PASS 100/100"), out)
        rc, out, err = self.grade_config(cfg, START)
        self.assertEqual(rc, 1)
        self.assertTrue(out.startswith("FAIL 0/100"), out)
        # Built-in defaults without --config.
        rc, out, err = run("grade", "--oracle", ORACLE, ORACLE)
        self.assertEqual(rc, 0, err)
        self.assertTrue(out.startswith("PASS 315/315"), out)

    def test_bad_input(self):
        rc, out, err = self.grade_config("pass_threshold: 1\ntolerance: -1\n")
        self.assertEqual(rc, 2)
        self.assertIn("grading.yaml:2:12: tolerance must be a number >= 0", err)
        rc, out, err = self.grade_config("tolerance: 1\nprompt: x\n")
        self.assertEqual(rc, 2)
        self.assertIn("grading.yaml:2:1: unknown key 'prompt'", err)
        # A task's grading: section pasted whole: the error says how to fix it.
        rc, out, err = self.grade_config("grading:\n  tolerance: 1\n")
        self.assertEqual(rc, 2)
        self.assertIn("grading.yaml:1:1: unknown key 'grading'", err)
        self.assertIn("remove the 'grading:' line", err)
        rc, _, err = run("grade", "--task", "nope", ORACLE)
        self.assertEqual(rc, 2)
        self.assertIn("task 'nope' not found", err)
        rc, _, err = run("grade", "--task", "banking_reserve", os.path.join(self.tmp, "none.ods"))
        self.assertEqual(rc, 2)
        rc, _, err = run("grade", "--task", "banking_reserve")
        self.assertEqual(rc, 2)
        rc, _, err = run("grade", "--oracle", os.path.join(self.tmp, "none.ods"), ORACLE)
        self.assertEqual(rc, 2)
        self.assertIn("oracle", err)
        rc, _, err = run("grade", "--task", "banking_reserve", "--oracle", ORACLE, ORACLE)
        self.assertEqual(rc, 2)
        rc, _, err = run("grade", "--task", "banking_reserve", "--pass-threshold", "2", ORACLE)
        self.assertEqual(rc, 2)
        # Garbage as the oracle is bad input; garbage as the output is the agent's FAIL.
        junk = os.path.join(self.tmp, "junk.ods")
        with open(junk, "wb") as f:
            f.write(b"PK\x03\x04 not really a zip" * 10)
        rc, _, err = run("grade", "--oracle", junk, ORACLE)
        self.assertEqual(rc, 2, err)
        rc, out, err = run("grade", "--oracle", ORACLE, junk)
        self.assertEqual(rc, 1, err)
        self.assertTrue(out.startswith("FAIL 0/315"), out)
        self.assertIn("output unreadable", out)

    def test_help(self):
        for cmd in ("grade", "tasks"):
            rc, out, _ = run(cmd, "--help")
            self.assertEqual(rc, 0)
            self.assertTrue(out.startswith("Usage: sandboxctl " + cmd), out)
            self.assertIn("Exit status", out)


class Tasks(unittest.TestCase):
    def test_list(self):
        rc, out, err = run("tasks", "list")
        self.assertEqual(rc, 0, err)
        names = [l.split()[0] for l in out.splitlines()]
        self.assertEqual(names, BUNDLED)
        self.assertGreaterEqual(len(names), 3)
        rc, out, _ = run("tasks", "list", "--json")
        self.assertEqual([t["name"] for t in json.loads(out)], names)

    def test_show(self):
        rc, out, err = run("tasks", "show", "banking_reserve")
        self.assertEqual(rc, 0, err)
        self.assertIn("difficulty: medium", out)
        self.assertIn("pass_threshold 1", out)
        self.assertIn("deadline 300s, memory default (2 GiB), cpus default (2)", out)
        self.assertNotIn("0 MiB", out)
        rc, out, _ = run("tasks", "show", "banking_reserve", "--json")
        t = json.loads(out)
        self.assertEqual(t["files"], ["files/cash_flows.ods"])
        self.assertEqual(t["outputs"], ["cash_flows.ods"])
        self.assertEqual(t["limits"]["deadline"], 300)
        # Unset limits are the run's defaults (SBX_RUN_DEFAULT_* in sbx/run.h), marked so.
        self.assertEqual(t["limits"]["memory"], 2 << 30)
        self.assertEqual((t["limits"]["cpus"], t["limits"]["pids"]), (2, 256))
        self.assertEqual(t["limits_default"], ["memory", "cpus", "pids"])
        self.assertEqual(t["tools"], "all")
        rc, out, _ = run("tasks", "show", "gui_sort_table", "--json")
        self.assertEqual(json.loads(out)["tools"], "gui")
        self.assertEqual(json.loads(out)["limits_default"], ["memory", "cpus", "pids"])
        rc, _, err = run("tasks", "show", "nope")
        self.assertEqual(rc, 2)

    def test_validate(self):
        # Every bundled task: oracle PASS against itself, the untouched files score 0.
        rc, out, err = run("tasks", "validate")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(len(re.findall(r": OK$", out, re.M)), len(BUNDLED))
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(ORACLE, os.path.join(d, "o.ods"))
            with open(os.path.join(d, "task.yaml"), "w") as f:
                f.write("id: x\ntitle: X\ndifficulty: easy\nprompt: p\noutputs: o.ods\n"
                        "oracle: o.ods\nlimits:\n  deadline: soon\n")
            rc, out, _ = run("tasks", "validate", d)
            self.assertEqual(rc, 2)
            self.assertIn("task.yaml:8:13: limits.deadline must be an integer between 1 and "
                          "604800", out)

    def test_show_escapes_foreign_text(self):
        # A foreign task.json's prompt and title, and a task.yaml's grading strings,
        # reach the terminal inert: ESC sequences (title, clear, colours), C1 CSI and
        # bidi overrides shown escaped; the prompt's own lines and tabs kept.
        hostile = ("Fix\x1b]0;pwned\x07 the\x1b[2J sheet\u009b31m in "
                   "\u202egnp.exe\u2066x\u2069\n\tline two\r")
        shown = ("Fix\\x1b]0;pwned\\x07 the\\x1b[2J sheet\\u009b31m in "
                 "\\u202egnp.exe\\u2066x\\u2069\n\tline two\\x0d")
        bad = ("\x1b", "\x07", "\r", "\u009b", "\u202e", "\u2066", "\u2069")
        d = tempfile.mkdtemp(prefix="sbx-escape-")
        self.addCleanup(shutil.rmtree, d, True)
        ref = os.path.join(d, "ref")
        os.makedirs(os.path.join(ref, "starting_files"))
        shutil.copy(START, os.path.join(ref, "starting_files"))
        shutil.copy(ORACLE, os.path.join(ref, "expected.ods"))
        with open(os.path.join(ref, "task.json"), "w") as f:
            json.dump({"id": "ref", "name": "Bank\x1b[32m PASS\u202e", "prompt": hostile,
                       "files": ["cash_flows.ods"], "oracle": "expected.ods"}, f)
        rc, out, err = run("tasks", "show", ref)
        self.assertEqual(rc, 0, err)
        self.assertIn("prompt:\n" + shown + "\n", out)
        self.assertIn("title:      Bank\\x1b[32m PASS\\u202e\n", out)
        for b in bad:
            self.assertNotIn(b, out, "raw %r in tasks show" % b)
        rc, out, err = run("tasks", "list", "--tasks-dir", d)
        self.assertIn("Bank\\x1b[32m PASS\\u202e", out, err)
        for b in bad:
            self.assertNotIn(b, out, "raw %r in tasks list" % b)
        # task.yaml: the grading's strings and a case name, from the author too.
        y = os.path.join(d, "yaml")
        os.makedirs(y)
        shutil.copy(ORACLE, os.path.join(y, "o.ods"))
        with open(os.path.join(y, "task.yaml"), "w") as f:
            f.write("id: y\ntitle: \"T\\e[2J\"\ndifficulty: easy\nprompt: \"p\\x9b1m\"\n"
                    "outputs: o.ods\noracle: o.ods\ngrading:\n  strip_chars: \"\\e$\"\n"
                    "  replace: [[\"\\u202e\", \"\\e[0m\"]]\n  sheets: [\"S\\a\"]\n")
        rc, out, err = run("tasks", "show", y)
        self.assertEqual(rc, 0, err)
        for want in ("title:      T\\x1b[2J\n", "p\\u009b1m", "strip_chars '\\x1b$'",
                     "replace '\\u202e' -> '\\x1b[0m'", "sheet 'S\\x07'"):
            self.assertIn(want, out)
        for b in bad:
            self.assertNotIn(b, out, "raw %r in tasks show (task.yaml)" % b)

    def test_new_and_generate(self):
        d = tempfile.mkdtemp(prefix="sbx-new-")
        self.addCleanup(shutil.rmtree, d, True)
        rc, out, err = run("tasks", "new", "--tasks-dir", d, "my_task")
        self.assertEqual(rc, 0, out + err)
        t = os.path.join(d, "my_task")
        for f in ("task.yaml", "gen.py", "files/data.csv", "oracle/expected.csv"):
            self.assertTrue(os.path.isfile(os.path.join(t, f)), f)
        rc, out, err = run("tasks", "validate", "--tasks-dir", d)
        self.assertEqual((rc, out.strip()), (0, t + "/task.yaml: OK"), err)
        rc, out, _ = run("tasks", "show", "--tasks-dir", d, "my_task")
        self.assertIn("seedable:   yes (generator gen.py)", out)
        # Its generator is seedable: one seed, one set of bytes; another seed, another.
        for n, seed in (("a", "5"), ("b", "5"), ("c", "6")):
            rc, _, err = run("tasks", "generate", "--tasks-dir", d, "my_task",
                             os.path.join(d, n), "--seed", seed)
            self.assertEqual(rc, 0, err)
        read = lambda n: open(os.path.join(d, n, "files", "data.csv"), "rb").read()
        self.assertEqual(read("a"), read("b"))
        self.assertNotEqual(read("a"), read("c"))
        self.assertNotEqual(read("a"), open(os.path.join(t, "files", "data.csv"), "rb").read())
        # Not twice, not a bad id.
        rc, _, err = run("tasks", "new", "--tasks-dir", d, "my_task")
        self.assertEqual(rc, 2)
        self.assertIn("File exists", err)
        rc, _, err = run("tasks", "new", "--tasks-dir", d, "Bad Name")
        self.assertEqual(rc, 2)
        self.assertIn("is not a task id", err)
        # A bundled task's seeds, and its committed files without one.
        rc, _, err = run("tasks", "generate", "banking_reserve", os.path.join(d, "br"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(open(os.path.join(d, "br", "files", "cash_flows.ods"), "rb").read(),
                         open(START, "rb").read())
        rc, _, err = run("tasks", "generate", "banking_reserve", os.path.join(d, "x"),
                         "--seed", "-1")
        self.assertEqual(rc, 2)
        self.assertIn("--seed: '-1' is not a number", err)
        rc, out, _ = run("tasks", "show", "banking_reserve", "--json")
        self.assertTrue(json.loads(out)["seedable"])
        self.assertFalse(json.loads(out)["libreoffice"])
        # Formula tasks need no LibreOffice: the evaluator is native.
        rc, out, _ = run("tasks", "show", "fix_formulas", "--json")
        self.assertFalse(json.loads(out)["libreoffice"])

    def validate_variant(self, grading, oracle=ORACLE, start=START):
        """tasks validate on banking_reserve with another grading section, oracle or
        starting file (bytes: its contents)."""
        d = tempfile.mkdtemp(prefix="sbx-validate-")
        self.addCleanup(shutil.rmtree, d, True)
        os.mkdir(os.path.join(d, "files"))
        if isinstance(start, bytes):
            with open(os.path.join(d, "files", "cash_flows.ods"), "wb") as f:
                f.write(start)
        else:
            shutil.copy(start, os.path.join(d, "files", "cash_flows.ods"))
        if isinstance(oracle, bytes):
            with open(os.path.join(d, "o.ods"), "wb") as f:
                f.write(oracle)
        else:
            shutil.copy(oracle, os.path.join(d, "o.ods"))
        with open(os.path.join(d, "task.yaml"), "w") as f:
            f.write("id: x\ntitle: X\ndifficulty: easy\nprompt: p\nfiles: files/cash_flows.ods\n"
                    "outputs: cash_flows.ods\noracle: o.ods\n" + grading)
        return run("tasks", "validate", d)

    def test_validate_refuses(self):
        good = "grading:\n  ranges: ['Sheet1!D1:D101']\n"
        rc, out, _ = self.validate_variant(good)
        self.assertEqual(rc, 0, out)
        # Grading every used cell: doing nothing would score 68%.
        rc, out, _ = self.validate_variant("")
        self.assertEqual(rc, 2, out)
        self.assertIn("the untouched starting files score 67.94% (214/315 cells)", out)
        # A range naming a sheet the oracle lacks.
        rc, out, _ = self.validate_variant("grading:\n  ranges: ['Nope!D1:D101']\n")
        self.assertEqual(rc, 2, out)
        self.assertIn("range names sheet 'Nope', which the oracle does not have", out)
        # An oracle that is not a workbook.
        rc, out, _ = self.validate_variant(good, oracle=b"not a spreadsheet\n")
        self.assertEqual(rc, 2, out)
        self.assertIn("oracle", out)
        # A generator that is not there.
        rc, out, _ = self.validate_variant(good + "generator: builtin\n")
        self.assertEqual(rc, 2, out)
        self.assertIn("generator: builtin: sandboxctl has no built-in generator for task 'x'",
                      out)
        rc, out, _ = self.validate_variant(good + "generator: gen.py\n")
        self.assertEqual(rc, 2, out)
        self.assertIn("generator: 'gen.py' is not an executable file", out)
        # A starting file that is not a workbook: one line naming it.
        rc, out, _ = self.validate_variant(good, start=b"PK\x03\x04 truncated\n")
        self.assertEqual(rc, 2, out)
        self.assertEqual(len(out.strip().splitlines()), 1, out)
        self.assertIn("the starting file 'files/cash_flows.ods' does not open", out)
        # A gate case on a sheet the starting file lacks (its only sheet is 'Scores').
        gated = ("grading:\n  cases:\n    - name: answer\n      ranges: ['Sheet1!D1:D101']\n"
                 "    - name: inputs\n      gate: true\n      ranges: ['Sheet1!A1:C101']\n")
        rc, out, _ = self.validate_variant(gated)
        self.assertEqual(rc, 0, out)
        other = os.path.join(SRC, "tasks", "gui_sort_table", "files", "leaderboard.ods")
        rc, out, _ = self.validate_variant(gated, start=other)
        self.assertEqual(rc, 2, out)
        self.assertIn("gate case 'inputs': the starting file 'files/cash_flows.ods' has no "
                      "sheet 'Sheet1'", out)
        # An oracle that does not pass against itself (a range with nothing to grade).
        rc, out, _ = self.validate_variant("grading:\n  ranges: ['Sheet1!K1:K9']\n")
        self.assertEqual(rc, 2, out)
        self.assertIn("nothing to grade", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
