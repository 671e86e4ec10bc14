#!/usr/bin/env bash
# Static analysis: gcc -fanalyzer over the libraries (lib/) and the server
# (server/), in its own build directory (build-analyze, no tests). Prints each
# finding once, as `file:line: warning: what [-Wanalyzer-…]`, and exits 1 if
# any remain.
#
#   scripts/analyze.sh          analyse, print findings, exit 1 on any
#   SBX_ANALYZE_ALL=1 scripts/analyze.sh   the disabled checkers too (to review them)
#
# gcc, not clang --analyze: clang 14's analyser does not model
# __attribute__((cleanup)), so every _cleanup_free_ variable reads as a leak
# (e.g. lib/util/path.c walk_beneath's `copy`: 30 findings in the first third
# of lib/ alone, most of them that).
#
# Checkers disabled, each for one pattern gcc 12's analyser gets wrong:
#   -Wno-analyzer-malloc-leak  a heap pointer stored at a symbolic index of a
#       heap array (or in a struct reached through one) and freed later by a
#       loop over that array reads as leaked where it is stored: e.g.
#       lib/docker/jsonutil.c sbx_docker__parse_strv, `v[i] = strdup(...)`,
#       freed by sbx_docker__strv_free. 30 findings; the dozen read (http.c,
#       jsonutil.c, warm_pool.c, grading.c, pool.c, book.c, ...) all that pattern,
#       or its twin: a pointer to a struct's first member handed out and freed
#       through it (lib/relay/relay_stream.c sbx_stream_from_fds, *out = &f->base).
#       Leaks stay checked at run time: the ASan pass of scripts/test.sh runs
#       the suites with LeakSanitizer on (detect_leaks=1), as does
#       `meson test --setup valgrind`.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${SBX_ANALYZE_BUILD:-build-analyze}
disabled=(-Wno-analyzer-malloc-leak)
[ -z "${SBX_ANALYZE_ALL:-}" ] || disabled=()

export PATH=/usr/lib/ccache:$PATH
if [ ! -d "$dir" ]; then
	CC=gcc meson setup "$dir" -Dtests=false -Dbuildtype=debug >/dev/null
fi
meson configure "$dir" -Dc_args="-fanalyzer ${disabled[*]}" >/dev/null

# The libraries and the server: every target meson defines under lib/ or server/.
mapfile -t targets < <(meson introspect "$dir" --targets | python3 -c '
import json, os, sys
root = os.getcwd()
for t in json.load(sys.stdin):
    d = os.path.relpath(t["defined_in"], root)
    if t["type"] in ("static library", "executable") and d.split("/")[0] in ("lib", "server"):
        for f in t["filename"]:
            print(os.path.relpath(f, os.path.join(root, sys.argv[1])))' "$dir")

# Recompile everything so every warning is printed again (ccache replays a
# cached compile's warnings, so an unchanged tree takes seconds).
ninja -C "$dir" -t clean >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
ninja -C "$dir" "${targets[@]}" >"$log" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
	grep -E 'error' "$log" | head -20 >&2
	echo "analyze: the build failed" >&2
	exit 2
fi

findings=$(grep -oE '^[^ ]+:[0-9]+:[0-9]+: warning: .*\[-Wanalyzer-[a-z-]+\]$' "$log" |
	sed -E 's#^(\.\./)+##; s#^([^:]+:[0-9]+):[0-9]+: warning: (.*) \[CWE-[0-9]+\] #\1: warning: \2 #' |
	sort -u || true)
if [ -n "$findings" ]; then
	echo "$findings"
	echo "analyze: $(echo "$findings" | wc -l) findings (gcc -fanalyzer, lib/ and server/)" >&2
	exit 1
fi
echo "analyze: no findings (gcc -fanalyzer, lib/ and server/, ${#targets[@]} targets)"
