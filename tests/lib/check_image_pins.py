#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every test and bench names the images through tests/lib/itest.py
(SLIM_IMAGE, FULL_IMAGE: $SBX_TEST_SLIM_IMAGE and $SBX_TEST_FULL_IMAGE pin
them) or, in shell, ${SBX_TEST_SLIM_IMAGE:-...}: a Python string that is
exactly an image's :latest name, or a shell line that names one outside such
a default, fails this check with its file and line.

Usage: check_image_pins.py SOURCE_ROOT"""
import io
import os
import re
import sys
import tokenize

NAMES = ("sandboxctl/sandbox-slim:latest", "sandboxctl/sandbox:latest")
# itest.py holds the names; this file lists them to look for.
ALLOWED = (os.path.join("tests", "lib", "itest.py"), os.path.join("tests", "lib", "check_image_pins.py"))
SHELL_DEFAULT = re.compile(r"\$\{SBX_TEST_(SLIM|FULL)_IMAGE:-sandboxctl/sandbox(-slim)?:latest\}")


def python_hits(text):
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING:
            try:
                value = eval(tok.string, {})  # a literal, nothing else
            except Exception:  # noqa: BLE001 - an f-string and the like: not a plain name
                continue
            if value in NAMES:
                yield tok.start[0]


def shell_hits(text):
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        if any(name in SHELL_DEFAULT.sub("", code) for name in NAMES):
            yield n


def main(root):
    bad = []
    for top in ("tests", "bench"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [x for x in dirs if x != "data"]  # Dockerfiles' FROM lines
            for f in files:
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                if rel in ALLOWED or not f.endswith((".py", ".sh")):
                    continue
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                hits = python_hits(text) if f.endswith(".py") else shell_hits(text)
                bad += ["%s:%d" % (rel, n) for n in hits]
    for b in bad:
        print("%s: names an image's :latest tag; use tests/lib/itest.py's SLIM_IMAGE/FULL_IMAGE" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
