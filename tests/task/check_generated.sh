#!/bin/sh
# Re-runs a task generator into a scratch directory and checks that every file
# it writes is byte-identical to the committed one (and that none is missing),
# so the committed starting files and oracles cannot drift from gen.c.
# Usage: check_generated.sh GENERATOR TASK_DIR
set -u
gen=$1
task=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
"$gen" "$tmp" || { echo "FAIL: $gen exited with $?"; exit 1; }
n=0
for f in "$tmp"/files/* "$tmp"/oracle/*; do
	[ -e "$f" ] || continue
	rel=${f#"$tmp"/}
	n=$((n + 1))
	if ! cmp -s "$f" "$task/$rel"; then
		echo "FAIL: $task/$rel differs from what $gen writes (run: meson compile -C BUILD regenerate-tasks)"
		exit 1
	fi
	echo "ok: $rel"
done
for f in "$task"/files/* "$task"/oracle/*; do
	[ -e "$f" ] || continue
	rel=${f#"$task"/}
	[ -e "$tmp/$rel" ] || { echo "FAIL: $task/$rel is committed but not generated"; exit 1; }
done
[ "$n" -gt 0 ] || { echo "FAIL: $gen wrote nothing"; exit 1; }
# A second run must give the same bytes too (no clock, no address, no hash order).
"$gen" "$tmp" && for f in "$tmp"/files/* "$tmp"/oracle/*; do
	cmp -s "$f" "$task/${f#"$tmp"/}" || { echo "FAIL: second run differs: $f"; exit 1; }
done
exit 0
