#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, builds with
# warnings as errors, checks formatting, runs every suite against the real
# engine, runs gcc's static analyser (scripts/analyze.sh: any finding fails
# the run), then runs again under AddressSanitizer + UBSan.
#
#   scripts/test.sh            everything
#   SBX_SKIP_ASAN=1 scripts/test.sh    skip the sanitizer pass (local iteration)
#   SBX_SKIP_FUZZ=1 scripts/test.sh    skip the 20 s per target fuzz smoke
#   SBX_SKIP_ANALYZE=1 scripts/test.sh skip the static analysis (~1.5 min cold, seconds cached)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh

echo "== clang-format"
bad=$(git ls-files '*.c' '*.h' | xargs -r clang-format --dry-run -Werror 2>&1 | grep -c 'error:' || true)
if [ "$bad" != 0 ]; then
	git ls-files '*.c' '*.h' | xargs -r clang-format --dry-run -Werror 2>&1 | head -40
	echo "clang-format: $bad places differ; run: git ls-files '*.c' '*.h' | xargs clang-format -i" >&2
	exit 1
fi

# The lifecycle tests drive the real images, which the image-build test
# (first in the run) makes from this tree when they are missing or stale.
export SBX_RUN_TEST_IMAGE=${SBX_RUN_TEST_IMAGE:-real}
# Tests that skip when a dependency is missing fail instead: deps.sh installed
# it, so missing means broken (tests/view/test_view_integration.py: chromium).
export SBX_CI=1

passed=0
failed=0
run_suite() { # build-dir, extra meson test args...
	local dir=$1
	shift
	local rc=0 ok bad
	meson test -C "$dir" --print-errorlogs "$@" || rc=$?
	read -r ok bad < <(python3 -c 'import json,sys
r=[json.loads(l).get("result") for l in open(sys.argv[1])]
print(sum(x in ("OK","EXPECTEDFAIL") for x in r), sum(x not in ("OK","EXPECTEDFAIL","SKIP") for x in r))' \
		"$dir/meson-logs/testlog.json")
	[ "$rc" = 0 ] || [ "$bad" != 0 ] || bad=1
	passed=$((passed + ok))
	failed=$((failed + bad))
}

echo "== build (warnings are errors)"
[ -d build-ci ] || meson setup build-ci --werror >/dev/null
meson compile -C build-ci
run_suite build-ci

echo "== build with clang (warnings are errors; compile only)"
[ -d build-clang ] || CC=clang meson setup build-clang --werror >/dev/null
# Quiet when it builds; what clang said when it does not (else set -e ends the run unexplained).
if ! meson compile -C build-clang >build-clang/compile.log 2>&1; then
	grep -E 'error|warning' build-clang/compile.log | head -20 >&2
	echo "clang build failed: the whole output is in build-clang/compile.log" >&2
	exit 1
fi

if [ -z "${SBX_SKIP_ANALYZE:-}" ]; then
	echo "== static analysis (gcc -fanalyzer over lib/ and server/; a finding fails)"
	t0=$SECONDS
	if scripts/analyze.sh; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	echo "static analysis: $((SECONDS - t0)) s"
fi

if [ -z "${SBX_SKIP_FUZZ:-}" ]; then
	# Every libFuzzer target over its seeds for a short while: any crash,
	# leak, timeout or OOM fails the run (scripts/fuzz.sh prints where).
	echo "== fuzz smoke (${SBX_FUZZ_SECONDS:-20} s per target)"
	if scripts/fuzz.sh "${SBX_FUZZ_SECONDS:-20}"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
fi

if [ -z "${SBX_SKIP_ASAN:-}" ]; then
	echo "== build with AddressSanitizer + UBSan"
	[ -d build-asan ] || meson setup build-asan --werror -Db_sanitize=address,undefined \
		-Db_lundef=false >/dev/null
	meson compile -C build-asan
	export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	export CK_TIMEOUT_MULTIPLIER=5 # sanitized code runs several times slower
	run_suite build-asan --no-suite slow
fi

echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
