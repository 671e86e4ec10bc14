#!/bin/sh
# Reader benchmark: a 1,000,000-cell ODS (100,000 rows x 10 columns: numbers,
# strings, dates, a formula column) read by lib/sheet and by odfpy.
# Usage: bench/sheet_1m.sh BUILD_DIR [WORK_DIR]
# Prints wall and CPU time and peak RSS of both, and the content.xml size.
set -eu
build=${1:?usage: $0 BUILD_DIR [WORK_DIR]}
work=${2:-/tmp/sbx-sheet-bench}
bench=$build/bench/sheet_bench
[ -x "$bench" ] || bench=$build/tests/sheet/sheet_bench
mkdir -p "$work"
file=$work/1m.ods
[ -f "$file" ] || "$bench" gen "$file" 100000 10
printf 'content.xml: %s bytes\n' "$(unzip -l "$file" content.xml | awk 'NR==4 {print $1}')"
for i in 1 2 3; do "$bench" read "$file"; done
py=/usr/bin/python3
if $py -c 'import odf' 2>/dev/null; then
	/usr/bin/time -f 'odfpy: %e s wall, %U s user + %S s sys, peak RSS %M KiB' \
		$py -c 'import sys; from odf.opendocument import load; load(sys.argv[1])' "$file"
else
	echo "odfpy not installed (python3-odf): skipping the comparison"
fi
