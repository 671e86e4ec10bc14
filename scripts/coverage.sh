#!/usr/bin/env bash
# Line coverage of the unit and integration suites, per module.
#
#   scripts/coverage.sh [SUITE|--no-suite=SUITE...]     default: unit integration
#   SBX_COV_KEEP=1 scripts/coverage.sh integration      add to the last run's counters
#   scripts/coverage.sh --report                         only the report, of the counters there
#
# Builds build-cov/ with -Db_coverage=true, runs the suites (the integration
# suite drives the real engine and LibreOffice, as scripts/test.sh does) and
# prints one line per module (lib/<m>, server, cmd) from gcovr, then
# the total. The full report is build-cov/coverage.txt; HTML in build-cov/html/.
# Code that runs only inside the sandbox image (the image's own sandbox-mcp) is
# not counted; the server's figure comes from the tests that run it locally.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${SBX_COV_BUILD:-build-cov}
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(unit integration)

report_only=
[ "${suites[0]}" != --report ] || report_only=1

[ -d "$out" ] || meson setup "$out" -Db_coverage=true >/dev/null
[ -n "$report_only" ] || meson compile -C "$out" >/dev/null
[ -n "${SBX_COV_KEEP:-}$report_only" ] || find "$out" -name '*.gcda' -delete

export SBX_RUN_TEST_IMAGE=${SBX_RUN_TEST_IMAGE:-real}
# Tests that run the CLI as another user must not see gcov complain on stderr.
# Only libgcov from GCC 13 reads this: with Debian 12's GCC 12 the CLI run as
# nobody (docker-cli's forbidden socket) prints "Cannot open" per .gcda and
# that one check fails here, not in scripts/test.sh.
export GCOV_ERROR_FILE=/dev/null
# Instrumented code runs slower: Check's per-test timeouts (as under ASan).
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-3}
args=()
for s in "${suites[@]}"; do
	case $s in
	-*) args+=("$s") ;;
	*) args+=(--suite "$s") ;;
	esac
done
[ -n "$report_only" ] ||
	meson test -C "$out" "${args[@]}" --print-errorlogs >/dev/null || echo "coverage: some tests failed (see $out/meson-logs/testlog.txt); figures are still printed" >&2

# Only the project's own code; tests, fuzz harnesses and benchmarks excluded.
# Processes that write one .gcda at once can leave a negative branch count
# ("taken -1"): gcovr would stop there; the line counts are still good.
filters=(--root . --object-directory "$out" --exclude 'tests/' --exclude 'bench/'
	--exclude '.*fuzz.*' --exclude 'examples/' --exclude "$out/" --gcov-ignore-parse-errors)
gcovr "${filters[@]}" --txt "$out/coverage.txt" --html-details "$out/html/index.html" \
	--print-summary >/dev/null 2>&1 || gcovr "${filters[@]}" --txt "$out/coverage.txt"

# One line per module: lines covered / lines, from the per-file table.
python3 - "$out/coverage.txt" <<'EOF'
import re, sys
mods = {}
for line in open(sys.argv[1]):
    m = re.match(r'^(\S+\.c)\s+(\d+)\s+(\d+)\s+\d+%', line)
    if not m:
        continue
    path, total, hit = m.group(1), int(m.group(2)), int(m.group(3))
    parts = path.split('/')
    mod = '/'.join(parts[:2]) if parts[0] in ('lib', 'images') else parts[0]
    t, h = mods.get(mod, (0, 0))
    mods[mod] = (t + total, h + hit)
print(f"{'module':<16} {'lines':>7} {'covered':>8} {'%':>6}")
T = H = 0
for mod in sorted(mods):
    t, h = mods[mod]
    T += t; H += h
    print(f"{mod:<16} {t:>7} {h:>8} {100*h/max(t,1):>5.1f}%")
print(f"{'total':<16} {T:>7} {H:>8} {100*H/max(T,1):>5.1f}%")
EOF
