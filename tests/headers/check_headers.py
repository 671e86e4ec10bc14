#!/usr/bin/env python3
"""Every public header compiles on its own under -std=c17 -pedantic -Werror.

Usage: check_headers.py SOURCE_ROOT CC [CFLAGS...]
One translation unit per header, holding only that #include: a header that
leans on another being included first, or that warns for a strict consumer,
fails with the compiler's first lines.
"""
import pathlib
import subprocess
import sys

root = pathlib.Path(sys.argv[1])
cc = sys.argv[2:]
flags = ["-std=c17", "-pedantic", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
         "-I", str(root / "lib" / "include"), "-x", "c", "-"]
bad = 0
headers = sorted((root / "lib" / "include" / "sbx").glob("*.h"))
for h in headers:
    src = f'#include "sbx/{h.name}"\n#include "sbx/{h.name}"\n'  # twice: include guards
    r = subprocess.run(cc + flags, input=src, text=True, capture_output=True)
    if r.returncode != 0:
        bad += 1
        print(f"sbx/{h.name}: does not compile on its own:")
        print("\n".join(r.stderr.splitlines()[:5]))
print(f"check_headers: {len(headers)} headers, {bad} failed")
sys.exit(1 if bad else 0)
