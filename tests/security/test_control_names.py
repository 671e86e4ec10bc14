#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""File names tool code chooses cannot write to the operator's terminal.

A live run on the real engine and image. Tool code makes names that carry
terminal escapes (ESC ] 0 ; ... BEL sets a window title, ESC [ 2 J clears the
screen, a C1 CSI): a file, a directory with a file in it, a symlink out of the
workspace and a fifo (both refused by the copy-out, which says so naming
them), and a task output over the server's 16 MiB so the exec'd tar collects
everything. A second run leaves a file of that kind of name over the 256 MiB
copy-out cap (sandbox_failed, the error naming it). sandboxctl's stderr and
stdout hold no control byte but newlines, yet name the entries escaped
(\\x1b); no string in result.json holds one either once decoded (the JSON
escape \\u001b is no protection from `jq -r`). Usage: test_control_names.py
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run"))
import test_integration as it  # noqa: E402
import test_sandbox_failed as sf  # noqa: E402

EVIL_SRC = r"\x1b]0;pwned\x07\x1b[2J\u009b31m"  # as the sandbox's Python reads it
EVIL = EVIL_SRC.encode().decode("unicode_escape")
MAKE = r'''
import os, sys
e = "%s"
os.chdir("/workspace")
open(e + "note.txt", "w").write("x")
os.mkdir(e + "dir")
open(e + "dir/" + e + "inner.csv", "w").write("a,b\n")
os.symlink("/etc/passwd", e + "link")
os.mkfifo(e + "fifo")
open("sales_data.ods", "wb").write(bytes(17000000))
if len(sys.argv) > 1:
    open(e + "huge", "wb").write(bytes(300000000))
''' % EVIL_SRC
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def strings(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
    elif isinstance(v, str):
        yield v


def check_clean(what, err, rdir):
    bad = CONTROL.search(err)
    if bad:
        it.fail("%s: a raw control byte %r reached stderr:\n%r" % (what, bad.group(), err))
    if "\\x1b]0;pwned\\x07\\x1b[2J" not in err:
        it.fail("%s: stderr does not name the entries (escaped):\n%s" % (what, err))
    with open(os.path.join(rdir, "result.json"), "rb") as f:
        raw = f.read()
    if CONTROL.search(raw.decode()):
        it.fail("%s: a raw control byte in result.json" % what)
    for s in strings(json.loads(raw)):
        if CONTROL.search(s):
            it.fail("%s: result.json holds a control byte once decoded: %r" % (what, s))


def main():
    it.need_real_image("tool code in python3")
    it.ensure_dev_image()
    env = it.Env()
    try:
        # The script goes in through execute_shell's python3, its text as a heredoc.
        make = "python3 - <<\"EOF\"\n%s\nEOF" % MAKE
        code, res, rdir, err = env.run("sales_revenue", "names", "--timeout", "60", "--agent",
                                       sf.shell_agent(env, make), timeout=180)
        if res["status"] != "fail" or "refused" not in err:
            it.fail("want the run graded with the refusals said: exit %d %s\n%s" %
                    (code, res, err))
        check_clean("refused and collected names", err, rdir)
        kept = os.listdir(os.path.join(rdir, "outputs"))
        if EVIL + "note.txt" not in kept or EVIL + "link" in kept or EVIL + "fifo" in kept:
            it.fail("the copy-out kept the wrong entries: %r" % kept)
        it.check_gone(res["run_id"])
        code, res, rdir, err = env.run("sales_revenue", "huge", "--timeout", "60", "--agent",
                                       sf.shell_agent(env, make.replace("python3 -", "python3 - x")),
                                       timeout=180)
        if res["status"] != "sandbox_failed" or res["error"]["kind"] != "outputs_too_large":
            it.fail("want outputs_too_large: exit %d %s\n%s" % (code, res, err))
        check_clean("a name in the error", err, rdir)
        it.check_gone(res["run_id"])
        print("ok: escape-laden names reach stderr and result.json only escaped: %s" %
              [l for l in err.splitlines() if "outputs_too_large" in l][0][:200])
    finally:
        env.cleanup()


if __name__ == "__main__":
    it.run_main(main)
