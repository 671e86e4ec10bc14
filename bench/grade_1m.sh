#!/bin/sh
# Grading benchmark: a 1,000,000-cell ODS graded against itself, beside an
# odfpy read of the same file (Debian python3-odf, /usr/bin/python3), in one run.
# Prints wall time and peak memory (/usr/bin/time -v) for each, the speed-up,
# and the peak memory against the uncompressed content.xml.
#   bench/grade_1m.sh BUILD_DIR [ROWS [COLS]]      (default 100000 x 10)
# Not a test: it prints figures and fails only when something cannot run.
set -eu
build=${1:?usage: grade_1m.sh BUILD_DIR [ROWS [COLS]]}
rows=${2:-100000}
cols=${3:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
f=$tmp/bench.ods

nice "$build/bench/grade_gen" "$f" "$rows" "$cols"
size=$(stat -c %s "$f")
xml=$(unzip -l "$f" content.xml | awk '$4 == "content.xml" { print $1 }')
echo "file: $((rows * cols)) cells, $size bytes zipped, content.xml $xml bytes"

measure() { # label, command...: prints wall seconds and peak KiB
	label=$1
	shift
	/usr/bin/time -v "$@" >"$tmp/out" 2>"$tmp/time" || { cat "$tmp/out" "$tmp/time"; exit 1; }
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$tmp/time")
	kib=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time")
	echo "$label: ${wall} s, peak ${kib} KiB"
	eval "${label}_wall=$wall ${label}_kib=$kib"
}

measure read "$build/bench/grade_bench" --read "$f"
sed 's/^/  /' "$tmp/out"
"$build/bench/grade_bench" --compare "$f" | sed 's/^/compare: /'
measure grader "$build/bench/grade_bench" "$f"
sed 's/^/  /' "$tmp/out"
if [ -x "$build/cmd/sandboxctl" ]; then
	measure cli "$build/cmd/sandboxctl" grade --oracle "$f" --max-lines 0 "$f"
	sed 's/^/  /' "$tmp/out"
fi

cat >"$tmp/odf_read.py" <<'PY'
import sys
from odf.opendocument import load
from odf.table import Table, TableRow, TableCell
from odf.namespaces import OFFICENS, TABLENS

doc = load(sys.argv[1])
n = 0
for table in doc.spreadsheet.getElementsByType(Table):
    for row in table.getElementsByType(TableRow):
        for cell in row.getElementsByType(TableCell):
            if cell.attributes.get((OFFICENS, "value-type")):
                cell.attributes.get((OFFICENS, "value")) or str(cell)
                n += 1
print("odfpy cells read:", n)
PY
measure odfpy /usr/bin/python3 "$tmp/odf_read.py" "$f"
sed 's/^/  /' "$tmp/out"

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
awk -v g="$grader_wall" -v r="$read_wall" -v o="$odfpy_wall" -v k="$grader_kib" -v x="$xml" 'BEGIN {
	printf "speed-up: a whole grade (two reads + compare) is %.1fx faster than one odfpy read (target >= 50x)\n", o / (g > 0 ? g : 0.01);
	printf "          one sbx read is %.1fx faster than one odfpy read\n", o / (r > 0 ? r : 0.01);
	printf "memory: grader peak %.1f MiB = %.2fx the uncompressed content.xml (target < 4x)\n", k / 1024, k * 1024 / x;
}'
