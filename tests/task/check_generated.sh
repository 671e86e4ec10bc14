#!/bin/sh
# Re-runs a task's generator (sandboxctl tasks generate) into a scratch
# directory and checks that every file it writes is byte-identical to the
# committed one (and that none is missing), so the committed starting files
# and oracles cannot drift from gen.c. Then: the same seed gives the same
# bytes twice, and a seeded instance differs from the committed files.
# Usage: check_generated.sh SANDBOXCTL NAME TASK_DIR
set -u
sbx=$1
name=$2
task=$3
tasks=$(dirname "$task")
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
gen() { "$sbx" tasks generate --tasks-dir "$tasks" "$@"; }
gen "$name" "$tmp/a" || { echo "FAIL: tasks generate $name exited with $?"; exit 1; }
n=0
for f in "$tmp"/a/files/* "$tmp"/a/oracle/*; do
	[ -e "$f" ] || continue
	rel=${f#"$tmp"/a/}
	n=$((n + 1))
	if ! cmp -s "$f" "$task/$rel"; then
		echo "FAIL: $task/$rel differs from what the generator writes (run: meson compile -C BUILD regenerate-tasks)"
		exit 1
	fi
	echo "ok: $rel"
done
for f in "$task"/files/* "$task"/oracle/*; do
	[ -e "$f" ] || continue
	rel=${f#"$task"/}
	[ -e "$tmp/a/$rel" ] || { echo "FAIL: $task/$rel is committed but not generated"; exit 1; }
done
[ "$n" -gt 0 ] || { echo "FAIL: the generator wrote nothing"; exit 1; }
# A second run must give the same bytes too (no clock, no address, no hash order).
gen "$name" "$tmp/a" && for f in "$tmp"/a/files/* "$tmp"/a/oracle/*; do
	cmp -s "$f" "$task/${f#"$tmp"/a/}" || { echo "FAIL: second run differs: $f"; exit 1; }
done
# Seeds: the same seed, the same bytes; another instance than the committed one.
gen "$name" "$tmp/s1" --seed 7 && gen "$name" "$tmp/s2" --seed 7 && gen "$name" "$tmp/s3" --seed 8 ||
	{ echo "FAIL: tasks generate --seed failed"; exit 1; }
same=0
for f in "$tmp"/s1/files/* "$tmp"/s1/oracle/*; do
	rel=${f#"$tmp"/s1/}
	cmp -s "$f" "$tmp/s2/$rel" || { echo "FAIL: seed 7 twice differs: $rel"; exit 1; }
	cmp -s "$f" "$task/$rel" && same=$((same + 1))
	cmp -s "$f" "$tmp/s3/$rel" && same=$((same + 1))
done
[ "$same" -eq 0 ] || { echo "FAIL: a seeded instance repeats a file of another instance"; exit 1; }
echo "ok: seed 7 twice gives the same bytes; seeds 7, 8 and the committed files differ"
exit 0
