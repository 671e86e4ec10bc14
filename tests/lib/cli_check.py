# SPDX-License-Identifier: MIT
"""The CLI tests' one check: run sandboxctl with args and expect an exit code
and a piece of its output. `failed` counts the misses; a test ends with
sys.exit(1 if cli_check.failed else 0)."""
import os
import subprocess

SRC = os.environ.get("SBX_SOURCE_ROOT", ".")
BUILD = os.environ.get("SBX_BUILD_ROOT", "build")
SANDBOXCTL = os.path.join(BUILD, "cmd", "sandboxctl")
TASKS = os.path.join(SRC, "tasks")
failed = 0


def check(args, code, needle, env=None):
    global failed
    p = subprocess.run([SANDBOXCTL] + args, capture_output=True, text=True, timeout=60,
                       env=env)
    out = p.stdout + p.stderr
    if p.returncode != code or needle not in out:
        failed += 1
        print("FAIL %s: exit %d (want %d), output:\n%s" % (args, p.returncode, code, out))
    else:
        print("ok   %s" % " ".join(args))
    return p
