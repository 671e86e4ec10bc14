#!/usr/bin/env bash
# Runs every libFuzzer target (or the ones named) for SECONDS each and prints
# one line per target: coverage (edges, features), executions, peak memory, and
# the findings of this run by kind (crash, leak, timeout, oom: libFuzzer's
# artifact prefixes).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default 60 s, every fuzz-* target
#
# Seeds come from tests/data/fuzz/<target>/ (read only); what the fuzzer finds
# grows build-fuzz/corpus/<target>/, and is merged back into a minimal set
# there at the end. A crash, leak, timeout or OOM leaves its input in
# build-fuzz/artifacts/<target>/ and makes the script exit 1; copy it into the
# seed directory once fixed, so the unit suite's replay keeps it fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
[ $# -gt 0 ] && shift
out=${SBX_FUZZ_BUILD:-build-fuzz}

if [ ! -d "$out" ]; then
	CC=clang meson setup "$out" -Dfuzz=true >/dev/null
fi
meson compile -C "$out" >/dev/null

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	mapfile -t targets < <(find "$out/tests/fuzz" -maxdepth 1 -type f -name 'fuzz-*' \
		-perm -u+x -printf '%f\n' | sort)
fi
[ ${#targets[@]} -gt 0 ] || {
	echo "fuzz: no targets in $out/tests/fuzz" >&2
	exit 1
}

# A small quarantine keeps ASan's memory near the target's real use; the
# default 256 MiB made every target look like it leaked.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

findings=0
kinds=(crash leak timeout oom)
row='%-22s %7s %6s %6s %8s %11s %6s %5s %4s %7s %3s\n'
printf "$row" target seconds cov ft exec/s execs rss_mb "${kinds[@]}"
for t in "${targets[@]}"; do
	bin="$out/tests/fuzz/$t"
	[ -x "$bin" ] || {
		echo "fuzz: no target $t (built: $(ls "$out/tests/fuzz" | grep '^fuzz-' | tr '\n' ' '))" >&2
		exit 2
	}
	seeds=tests/data/fuzz/$t
	corpus=$out/corpus/$t
	arts=$out/artifacts/$t
	log=$out/fuzz-$t.log
	mkdir -p "$corpus" "$arts"
	dict=()
	[ -f "tests/data/fuzz/$t.dict" ] && dict=(-dict="tests/data/fuzz/$t.dict")
	rc=0
	start=$out/.fuzz-start-$t
	touch "$start" # artifacts of earlier runs are not this run's findings
	"$bin" "${dict[@]}" -max_total_time="$secs" -print_final_stats=1 \
		-rss_limit_mb=2048 -timeout=10 -artifact_prefix="$arts/" \
		"$corpus" "$seeds" >"$log" 2>&1 || rc=$?
	counts=()
	found=0
	for k in "${kinds[@]}"; do
		c=$(find "$arts" -maxdepth 1 -type f -name "$k-*" -newer "$start" | wc -l)
		counts+=("$c")
		found=$((found + c))
	done
	rm -f "$start"
	if [ "$rc" != 0 ] && [ "$found" = 0 ]; then
		# No artifact, yet it failed (a sanitizer report at start-up, a bad flag): a crash.
		counts[0]=1
		found=1
	fi
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)
	ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)
	runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
	eps=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
	rss=$(grep -oE 'stat::peak_rss_mb: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
	printf "$row" "$t" "$secs" "${cov:-?}" "${ft:-?}" "${eps:-?}" "${runs:-?}" "${rss:-?}" \
		"${counts[@]}"
	if [ "$found" != 0 ]; then
		findings=$((findings + found))
		{ grep -m3 -E 'ERROR:|SUMMARY:|runtime error|error in line' "$log" || tail -3 "$log"; } |
			sed 's/^/    /' >&2
		echo "    log: $log, inputs: $arts/" >&2
	fi
	# Keep the grown corpus small: only inputs that add coverage survive.
	mkdir -p "$corpus.min"
	"$bin" -merge=1 "$corpus.min" "$corpus" >/dev/null 2>&1 &&
		rm -rf "$corpus" && mv "$corpus.min" "$corpus" || rm -rf "$corpus.min"
done
[ "$findings" = 0 ]
