#!/usr/bin/env python3
"""The include rules of docs/ARCHITECTURE.md, checked over the tree.

Reads the rules table between the include-rules markers, then every .c/.h of
each module: an `#include "sbx/X.h"` whose owner the module may not use, or a
relative include reaching into another module, fails with file:line.
Also checks that every public header has exactly one owner, so a new header
cannot slip past the rules.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
doc = (root / "docs" / "ARCHITECTURE.md").read_text()
m = re.search(r"<!-- include-rules: begin -->(.*?)<!-- include-rules: end -->", doc, re.S)
if not m:
    sys.exit("check_includes: docs/ARCHITECTURE.md has no include-rules table")

modules = {}  # module dir -> set of modules it may use
owner = {}  # header stem -> module dir
for line in m.group(1).splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 3 or cells[0] in ("module", "") or cells[0].startswith("---"):
        continue
    mod, headers, uses = cells[0], cells[1].split(), set(cells[2].split())
    modules[mod] = uses
    for h in headers:
        if h in owner:
            sys.exit(f"check_includes: header sbx/{h}.h owned by both {owner[h]} and {mod}")
        owner[h] = mod

problems = []
for h in sorted((root / "lib" / "include" / "sbx").glob("*.h")):
    if h.stem != "sbx" and h.stem not in owner:  # sbx.h is the umbrella
        problems.append(f"lib/include/sbx/{h.name}: no module owns it in docs/ARCHITECTURE.md")

# Module-private headers (not under lib/include): name -> the module holding it.
private = {}
for mod in modules:
    for h in (root / mod).rglob("*.h") if (root / mod).is_dir() else []:
        private.setdefault(h.name, mod)

inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
checked = 0
for mod, uses in modules.items():
    d = root / mod
    if not d.is_dir():
        continue  # a planned module
    allowed = uses | {mod}
    for f in sorted(list(d.rglob("*.c")) + list(d.rglob("*.h"))):
        if "fuzz" in f.name:  # harnesses link what they fuzz
            continue
        checked += 1
        for n, text in enumerate(f.read_text(errors="replace").splitlines(), 1):
            mm = inc.match(text)
            if not mm:
                continue
            target = mm.group(1)
            where = f"{f.relative_to(root)}:{n}"
            if target.startswith("sbx/"):
                stem = target[4:-2]
                if stem == "sbx":
                    problems.append(f"{where}: includes the umbrella sbx/sbx.h; include what it uses")
                elif stem not in owner:
                    problems.append(f"{where}: {target} has no owner in docs/ARCHITECTURE.md")
                elif owner[stem] not in allowed:
                    problems.append(f"{where}: {mod} may not use {owner[stem]} ({target})")
            elif "/" not in target and not (f.parent / target).exists() and target in private:
                other = private[target]
                stem = target[:-2]
                if other == mod:
                    pass
                elif owner.get(stem) == other:  # a module's public header kept in its folder
                    if other not in allowed:
                        problems.append(f"{where}: {mod} may not use {other} ({target})")
                else:
                    problems.append(f"{where}: {target} is private to {other}")
            elif target.startswith(".."):
                dest = (f.parent / target).resolve()
                if root / mod not in dest.parents:
                    problems.append(f"{where}: relative include {target} leaves {mod}")

for p in problems:
    print(p)
print(f"check_includes: {checked} files in {len(modules)} modules, {len(problems)} problems")
sys.exit(1 if problems else 0)
