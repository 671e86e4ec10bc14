#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Differential test: the native formula evaluator against a real LibreOffice.

Random well-formed formulas (SBX_FORMULA_CASES of them, default 10,000, seed
SBX_FORMULA_SEED) over a fixture book of numbers, text, blanks, booleans and
formula cells (errors among them), plus the committed corpus of formulas
agents write (tests/data/formula/corpus.txt), go into one ODS without
values. `soffice --headless --convert-to ods` computes them; our evaluator
computes the same file. Every formula the evaluator computes must agree:
numbers within 1e-9 relative, text exactly, errors by kind. A formula it
declines ("unsupported") is counted, not compared. Known differences are
listed in tests/data/formula/known-differences.txt (one regular expression
per line, '#' comments explain why) and skipped.

Two kinds of disagreement are explained rather than fixed, and tolerated up
to 0.1% of the formulas compared (they are printed either way):
- "error order": both sides are errors of different kinds. With two errors
  in one formula, which one LibreOffice reports follows its RPN stack
  (computed errors first, left to right; cell errors and conversions when an
  operator pops, right first); the evaluator models that for operators and
  aggregates, not for every function.
- "date text": LibreOffice types a result computed from DATE() as a date
  and stores it as ISO text (office:date-value): to the second, in the
  Julian calendar before 1582, and as "#FMT" or short-date text
  ("11/04/98" for 14198-11-04, "01/20/-10" for 31210 BC) when the year has
  no ISO form; the number it computed is not in the file.
- "file precision": a number result below 1e-6 (1/DATE()^2, say).
  LibreOffice 7.4 writes office:value as it writes a number's text
  (rtl::math::doubleToUString, Automatic): 15 significant digits but never
  more than 20 decimals, so 9.9470050692498067e-13 is stored as
  0.00000000000099470051. The file cannot carry the difference; our writer
  keeps every digit.
- "collation": a comparison of two texts. LibreOffice orders text by the
  locale's collator, the evaluator by ASCII case-folded bytes, so
  punctuation may order differently ("-" vs "$").
"""
import math
import os
import random
import re
import subprocess
import sys
import tempfile

BUILD = os.environ.get("SBX_BUILD_ROOT", ".")
SOURCE = os.environ.get("SBX_SOURCE_ROOT", ".")
TOOL = os.path.join(BUILD, "tests", "sheet", "formula_tool")
DATA = os.path.join(SOURCE, "tests", "data", "formula")

NUM_REFS = [f"Data!A{i}" for i in range(1, 21)] + ["Data!$A$3", "A1000", "'Other Sheet'!A2"]
MIX_REFS = [f"Data!C{i}" for i in range(1, 21)] + [f"Data!D{i}" for i in range(1, 11)]
STR_REFS = [f"Data!B{i}" for i in range(1, 21)]
RANGES = ["Data!A1:A20", "Data!A1:A5", "Data!$A$2:$A$9", "Data!C1:C20", "Data!A:A",
          "Data!A1:C10", "'Other Sheet'!A1:A5", "Data!D1:D10", "Data!E1:E20"]
CRITS = ['">5"', '"<=0"', '"<>7"', '"=3"', '"apple"', '"<>apple"', '">=2.675"', "3", '"<m"',
         '""']
LABEL_KEYS = ['"k03"', '"K10"', '"zz"']
VALUE_ARGS = ['"12.5"', '"-3"', '"abc"', '"1e3"']
TEXT_FORMATS = ['"0"', '"0.00"', '"#,##0"', '"#,##0.00"', '"0%"', '"0.0%"', '"yyyy-mm-dd"',
                '"$#,##0.00"']


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def pick(self, xs):
        return self.r.choice(xs)

    def one_of(self, *builders):
        """What one of builders, picked at random, builds: only that one draws."""
        return self.pick(builders)()

    def lit(self):
        return self.pick(["0", "1", "2", "3", "0.5", "10", "2.675", "100", "1.005", "7", "1e3",
                          "0.1", "12.5", "-0", "4"])

    def num(self, d=0):
        r = self.r.random()
        if d > 3 or r < 0.25:
            return self.pick([self.lit(), self.pick(NUM_REFS)])
        if r < 0.45:
            op = self.pick(["+", "-", "*", "/", "^"])
            b = self.num(d + 1) if op != "^" else self.pick(["2", "3", "0.5", "-1", "2"])
            return f"{self.num(d + 1)}{op}{b}"
        if r < 0.5:
            return self.pick([f"-{self.num(d + 1)}", f"({self.num(d + 1)})", f"{self.lit()}%"])
        if r < 0.55:
            return f"{self.pick(MIX_REFS)}{self.pick(['+', '*'])}{self.lit()}"
        return self.one_of(
            lambda: f"SUM({self.pick(RANGES)})",
            lambda: f"SUM({self.num(d + 1)},{self.num(d + 1)},{self.pick(RANGES)})",
            lambda: f"AVERAGE({self.pick(RANGES)})",
            lambda: f"MIN({self.pick(RANGES)})",
            lambda: f"MAX({self.pick(RANGES)},{self.num(d + 1)})",
            lambda: f"COUNT({self.pick(RANGES)})",
            lambda: f"COUNTA({self.pick(RANGES)})",
            lambda: f"ROUND({self.num(d + 1)},{self.pick(['0', '1', '2', '-1', '3'])})",
            lambda: f"ROUNDUP({self.num(d + 1)},{self.pick(['0', '1', '2'])})",
            lambda: f"ROUNDDOWN({self.num(d + 1)},{self.pick(['0', '1', '2'])})",
            lambda: f"INT({self.num(d + 1)})",
            lambda: f"ABS({self.num(d + 1)})",
            lambda: f"MOD({self.num(d + 1)},{self.pick(['3', '-2', '0.5', '7', '0'])})",
            lambda: f"POWER({self.num(d + 1)},{self.pick(['2', '0.5', '3'])})",
            lambda: f"SQRT({self.num(d + 1)})",
            lambda: f"IF({self.cond(d + 1)},{self.num(d + 1)},{self.num(d + 1)})",
            lambda: f"IFERROR({self.num(d + 1)},{self.lit()})",
            lambda: f"SUMIF({self.pick(RANGES[:6])},{self.pick(CRITS)})",
            lambda: f"SUMIF(Data!B1:B20,{self.pick(CRITS)},Data!A1:A20)",
            lambda: f"COUNTIF({self.pick(RANGES)},{self.pick(CRITS)})",
            lambda: f"COUNTIFS(Data!A1:A20,{self.pick(CRITS)},Data!B1:B20,{self.pick(CRITS)})",
            lambda: f"SUMIFS(Data!A1:A20,Data!A1:A20,{self.pick(CRITS)},Data!C1:C20,{self.pick(CRITS)})",
            lambda: f"AVERAGEIF(Data!A1:A20,{self.pick(CRITS)})",
            lambda: f"AVERAGEIFS(Data!A1:A20,Data!B1:B20,{self.pick(CRITS)})",
            lambda: f"VLOOKUP({self.num(d + 1)},Data!E1:F20,1,TRUE)",
            lambda: f"VLOOKUP({self.pick(['-50', '0', '40', '140', '3'])},Data!E1:F20,1,FALSE)",
            lambda: f"MATCH({self.num(d + 1)},Data!E1:E20,1)",
            lambda: f"MATCH({self.pick(LABEL_KEYS)},Data!F1:F20,0)",
            lambda: f"INDEX(Data!A1:C20,{self.pick(['1', '5', '20', '21'])},{self.pick(['1', '2', '3'])})",
            lambda: f"HLOOKUP({self.lit()},Data!A1:C3,2,FALSE)",
            lambda: f"LEN({self.str(d + 1)})",
            lambda: f"YEAR(DATE({self.pick(['2024', '1999', '2030'])},{self.pick(['1', '2', '13', '0'])},{self.pick(['1', '29', '31', '0'])}))",
            lambda: f"DATE({self.pick(['2024', '2000'])},{self.pick(['1', '6', '14'])},{self.pick(['1', '15', '40'])})",
            lambda: f"MONTH({self.pick(['45292', '45351.5', '36526'])})+DAY({self.pick(['45292', '45351', '1'])})",
            lambda: f"PMT({self.pick(['0.05/12', '0.0625/12', '0'])},{self.pick(['12', '36', '360'])},{self.pick(['10000', '250000', '-5000'])})",
            lambda: f"IPMT(0.06/12,{self.pick(['1', '2', '12'])},12,{self.pick(['10000', '5000'])})",
            lambda: f"PPMT(0.06/12,{self.pick(['1', '5', '12'])},12,10000)",
            lambda: f"SUMPRODUCT(Data!A1:A10,Data!E1:E10)",
            lambda: f"VALUE({self.pick(VALUE_ARGS)})",
            lambda: f"COUNTBLANK(Data!B1:C20)",
        )

    def cond(self, d=0):
        r = self.r.random()
        if d > 3 or r < 0.6:
            op = self.pick(["=", "<>", "<", ">", "<=", ">="])
            if self.r.random() < 0.2:
                return f"{self.str(d + 1)}{op}{self.str(d + 1)}"
            if self.r.random() < 0.15:
                return f"{self.pick(MIX_REFS)}{op}{self.lit()}"
            return f"{self.num(d + 1)}{op}{self.num(d + 1)}"
        return self.one_of(
            lambda: f"AND({self.cond(d + 1)},{self.cond(d + 1)})",
            lambda: f"OR({self.cond(d + 1)},{self.cond(d + 1)})",
            lambda: f"NOT({self.cond(d + 1)})",
            lambda: "TRUE",
            lambda: f"ISERROR({self.pick(MIX_REFS)})",
            lambda: f"ISNUMBER({self.pick(MIX_REFS + STR_REFS)})",
        )

    def str(self, d=0):
        r = self.r.random()
        if d > 3 or r < 0.3:
            return self.pick(['"abc"', '"Hello World"', '""', '" two  spaces "', '"x"',
                              self.pick(STR_REFS)])
        return self.one_of(
            lambda: f"{self.str(d + 1)}&{self.str(d + 1)}",
            lambda: f"{self.str(d + 1)}&{self.num(d + 1)}",
            lambda: f"LEFT({self.str(d + 1)},{self.pick(['1', '2', '0', '10'])})",
            lambda: f"RIGHT({self.str(d + 1)},{self.pick(['1', '3', '0'])})",
            lambda: f"MID({self.str(d + 1)},{self.pick(['1', '2', '5'])},{self.pick(['1', '3', '0'])})",
            lambda: f"TRIM({self.str(d + 1)})",
            lambda: f"UPPER({self.str(d + 1)})",
            lambda: f"LOWER({self.str(d + 1)})",
            lambda: f"CONCATENATE({self.str(d + 1)},\"-\",{self.num(d + 1)})",
            lambda: f"TEXT({self.num(d + 1)},{self.pick(TEXT_FORMATS)})",
            lambda: f"IF({self.cond(d + 1)},{self.str(d + 1)},{self.str(d + 1)})",
            lambda: f"VLOOKUP({self.pick(['-50', '0', '40', '140'])},Data!E1:F20,2,FALSE)",
            lambda: f"INDEX(Data!F1:F20,{self.pick(['1', '7', '20'])})",
            lambda: f"IFERROR({self.pick(MIX_REFS)}&\"\",\"err\")",
        )

    def formula(self):
        k = self.r.random()
        if k < 0.6:
            return "=" + self.num()
        if k < 0.8:
            return "=" + self.str()
        return "=" + self.cond()


def soffice(profile, outdir, path):
    cmd = ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--norestore",
           "--convert-to", "ods", "--outdir", outdir, path]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=600)


def table(text):
    rows = {}
    for line in text.splitlines():
        row, kind, value = line.split("\t", 2)
        rows[int(row)] = (kind, value)
    return rows


def short_date(serial):
    """A day serial (0 = 1899-12-30) as LibreOffice's MM/DD/YY text: Julian
    calendar before 1582-10-15, no year 0 (-1 is 1 BC)."""
    j = math.floor(serial) + 2415019
    if j >= 2299161:
        a = j + 32044
        b = (4 * a + 3) // 146097
        c = a - 146097 * b // 4
    else:
        b, c = 0, j + 32082
    d = (4 * c + 3) // 1461
    e = c - 1461 * d // 4
    m = (5 * e + 2) // 153
    year = 100 * b + d - 4800 + m // 10
    if year <= 0:
        year -= 1
    yy = f"{'-' if year < 0 else ''}{abs(year) % 100:02d}"
    return f"{m + 3 - 12 * (m // 10):02d}/{e - (153 * m + 2) // 5 + 1:02d}/{yy}"


def agree(ours, theirs):
    ok, ov = ours
    tk, tv = theirs
    numeric = ("number", "boolean", "date", "percentage", "currency", "time")
    if ok in numeric and tk in numeric:
        a, b = float(ov), float(tv)
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    if ok == "error" and tk == "error":
        return ov == tv
    if ok == "string" and tk == "string":
        return ov == tv
    # An empty string result: LibreOffice may store it without a value.
    if ok == "string" and ov == "" and tk in ("empty", "string"):
        return True
    return False


def main():
    n = int(os.environ.get("SBX_FORMULA_CASES", "10000"))
    seed = int(os.environ.get("SBX_FORMULA_SEED", "17"))
    g = Gen(seed)
    corpus = [l.strip() for l in open(os.path.join(DATA, "corpus.txt"))
              if l.strip() and not l.startswith("#")]
    known = [re.compile(l.strip()) for l in open(os.path.join(DATA, "known-differences.txt"))
             if l.strip() and not l.startswith("#")]
    formulas = corpus + [g.formula() for _ in range(n)]
    with tempfile.TemporaryDirectory(prefix="sbx-formula-") as tmp:
        listing = os.path.join(tmp, "formulas.txt")
        with open(listing, "w") as f:
            f.write("\n".join(formulas) + "\n")
        book = os.path.join(tmp, "cases.ods")
        subprocess.run([TOOL, "build", listing, book], check=True)
        native = subprocess.run([TOOL, "native", book], check=True, capture_output=True,
                                text=True)
        sys.stderr.write(native.stderr)
        outdir = os.path.join(tmp, "lo")
        os.makedirs(outdir)
        soffice(os.path.join(tmp, "profile"), outdir, book)
        lo = subprocess.run([TOOL, "dump", os.path.join(outdir, "cases.ods")], check=True,
                            capture_output=True, text=True)
    ours, theirs = table(native.stdout), table(lo.stdout)
    compared = unsupported = skipped = 0
    bad, explained = [], []
    for i, f in enumerate(formulas, 1):
        if i not in ours:
            continue
        if ours[i][0] == "unsupported":
            unsupported += 1
            continue
        if any(k.search(f) for k in known):
            skipped += 1
            continue
        compared += 1
        t = theirs.get(i, ("empty", ""))
        if not agree(ours[i], t):
            line = f"row {i}: {f}\n    native: {ours[i]}\n    libreoffice: {t}"
            if (t[0] == "date" and ours[i][0] == "number" and
                    (abs(float(ours[i][1]) - float(t[1])) < 2e-5 or float(t[1]) < -115859)) or \
                    (ours[i][0] == "number" and t[0] == "string" and
                     t[1] in ("#FMT", short_date(float(ours[i][1])))):
                explained.append("[date text] " + line)
            elif ours[i][0] == "number" and t[0] == "number" and \
                    abs(float(ours[i][1]) - float(t[1])) <= 5.000001e-21:
                explained.append("[file precision] " + line)
            elif ours[i][0] == "error" and t[0] == "error":
                explained.append("[error order] " + line)
            elif ours[i][0] == "boolean" and re.search(r'("|\)|[A-Z]\d+)\s*(<|>|<=|>=)\s*[A-Z("]', f):
                explained.append("[collation] " + line)
            else:
                bad.append(line)
    print(f"{len(formulas)} formulas: {compared} compared, {unsupported} unsupported, "
          f"{skipped} known differences, {len(explained)} explained, {len(bad)} disagreements")
    for b in explained[:20] + bad[:60]:
        print(b)
    return 1 if bad or len(explained) > compared / 1000 else 0


if __name__ == "__main__":
    sys.exit(main())
