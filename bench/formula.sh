#!/bin/sh
# Formula recalculation: native (lib/sheet) vs a LibreOffice headless round
# trip, and the quarterly_totals episode on the slim image.
# Usage: bench/formula.sh BUILD_DIR [WORK_DIR] [--episodes]
#   1. quarterly_totals' answer as formulas (13 cells): native vs soffice
#   2. generated sheets of 10,000 and 100,000 formula cells: native vs soffice
#   3. with --episodes (needs Docker and the images): quarterly_totals with the
#      oracle agent (copies the oracle's file in), an agent writing the totals
#      as values and the same agent writing them as formulas (=SUM(...), no
#      values) on the slim image, and the formula agent on the full image.
set -eu
build=${1:?usage: $0 BUILD_DIR [WORK_DIR] [--episodes]}
work=${2:-/tmp/sbx-formula-bench}
episodes=${3:-}
src=$(cd "$(dirname "$0")/.." && pwd)
bench=$build/bench/formula_bench
mkdir -p "$work"
profile=$work/lo-profile

office() { # FILE: the LibreOffice round trip the server used to do, timed (wall and CPU)
	rm -rf "$work/lo-out"
	/usr/bin/time -f 'libreoffice round trip: %e s wall, %U s user + %S s sys' \
		soffice -env:UserInstallation=file://$profile --headless --norestore --nologo \
		--convert-to ods --outdir "$work/lo-out" "$1" 2>&1 >/dev/null | grep 'round trip'
}

# A first soffice start creates the profile (about a second): not counted.
"$bench" gen 8 "$work/warm.ods" && office "$work/warm.ods" >/dev/null

echo "== quarterly_totals (13 formula cells)"
"$bench" quarterly "$src/tasks/quarterly_totals/files/quarterly_sales.ods" "$work/qt.ods"
"$bench" recalc "$work/qt.ods" 20
office "$work/qt.ods"
# Both sides do the same work: load, recalculate, save (the native side also
# prints recalculation alone). Ratios are LibreOffice's wall time over ours.
for n in 10000 100000; do
	echo "== generated sheet, $n formula cells"
	"$bench" gen $n "$work/gen$n.ods"
	native=$("$bench" recalc "$work/gen$n.ods" "${SBX_BENCH_RUNS:-5}" "$work/native$n.ods")
	echo "$native" | grep -v '^native-ms'
	lo=$(office "$work/gen$n.ods")
	echo "$lo"
	echo "$native" | grep '^native-ms' | awk -v lo="$lo" '{
		split(lo, w, " "); s = w[4] * 1000
		printf "ratio: LibreOffice %.0f ms / native: %.1fx (load + recalc + save), %.1fx (recalc only)\n", s, s / $2, s / $3 }'
done

[ "$episodes" = "--episodes" ] || exit 0
cli=$build/cmd/sandboxctl
runs=$work/runs
# One agent, two answers: MODE formulas writes =SUM(...) (nothing computed),
# values writes the sums it computed itself from a read_range; the same calls
# otherwise, so what the two episodes differ by is the recalculation.
cat >"$work/totals_agent.py" <<'EOF'
import json, os, sys, urllib.request
url = os.environ["SANDBOX_REST_URL"]
def call(tool, **args):
    req = urllib.request.Request(url + "/tools/call", json.dumps({"tool_name": tool, "arguments": args}).encode(),
                                 {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
f = dict(file_path="quarterly_sales.ods", sheet_name="Sales")
got = call("read_range", start_cell="B2", end_cell="E9", **f)
rows = (got.get("result") or got)["values"]
if sys.argv[1] == "formulas":
    right = [["=SUM(B%d:E%d)" % (r, r)] for r in range(2, 10)]
    bottom = [["=SUM(%s2:%s9)" % (c, c) for c in "BCDEF"]]
else:
    right = [[sum(row)] for row in rows]
    bottom = [[sum(row[i] for row in rows) for i in range(4)] + [sum(map(sum, rows))]]
call("write_range", start_cell="F1", values=[["Total"]] + right, **f)
call("write_range", start_cell="B10", values=bottom, **f)
urllib.request.urlopen(urllib.request.Request(url + "/task/complete", b"{}", {"Content-Type": "application/json"}))
EOF
printf '#!/bin/sh\nexec python3 "%s" formulas\n' "$work/totals_agent.py" >"$work/formulas.sh"
printf '#!/bin/sh\nexec python3 "%s" values\n' "$work/totals_agent.py" >"$work/values.sh"
chmod +x "$work/formulas.sh" "$work/values.sh"
episode() { # LABEL AGENT [IMAGE]
	label=$1 agent=$2
	shift 2
	for i in 1 2 3; do
		"$cli" run --task quarterly_totals --tasks-dir "$src/tasks" --agent "$agent" \
			--runs-dir "$runs" "$@" 2>&1 | grep -o 'pass ([^)]*)\|partial ([^)]*)\|fail ([^)]*)\|ended by [^,]*, [0-9.]* s' |
			tr '\n' ' ' | sed "s/^/$label run $i: /"
		echo
	done
}
# $SBX_TEST_SLIM_IMAGE / $SBX_TEST_FULL_IMAGE pin the images, as in the tests (tests/lib/itest.py).
slim=${SBX_TEST_SLIM_IMAGE:-sandboxctl/sandbox-slim:latest}
full=${SBX_TEST_FULL_IMAGE:-sandboxctl/sandbox:latest}
episode "oracle   slim" oracle --image "$slim"
echo "(the task asks for formulas: the values episode grades partial; it is the timing baseline)"
episode "values   slim" "$work/values.sh" --image "$slim"
episode "formulas slim" "$work/formulas.sh" --image "$slim"
episode "formulas full" "$work/formulas.sh" --image "$full"
