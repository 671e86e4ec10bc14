#!/bin/sh
# What grading in a child process costs against grading in process, in one
# run, interleaved: banking_reserve's oracle as the output (404 cells read,
# 101 scored), then a large sheet (ROWS x 10 cells, default 20000 rows:
# 200,000 cells) graded against itself. Two children: sandbox-grader (what
# the commands use) and sandboxctl itself (the fallback when it is missing).
#   bench/grade_child.sh BUILD_DIR [N [ROWS]]        (N grades of each: 30)
# Not a test: it prints figures and fails only when something cannot run.
set -eu
build=${1:?usage: grade_child.sh BUILD_DIR [N [ROWS]]}
n=${2:-30}
rows=${3:-20000}
src=$(cd "$(dirname "$0")/.." && pwd)
b=$(cd "$build" && pwd)
children="$b/cmd/sandbox-grader $b/cmd/sandboxctl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

mkdir -p "$tmp/br" "$tmp/big/oracle" "$tmp/big-out"
cp "$src/tasks/banking_reserve/oracle/expected_reserves.ods" "$tmp/br/cash_flows.ods"
echo "banking_reserve (oracle as output), $n grades each:"
"$b/bench/bench-grade-child" "$src/tasks/banking_reserve/task.yaml" "$tmp/br" "$n" $children

"$build/bench/grade_gen" "$tmp/big/oracle/big.ods" "$rows" 10
cp "$tmp/big/oracle/big.ods" "$tmp/big-out/big.ods"
cat >"$tmp/big/task.yaml" <<YAML
id: big
title: a large sheet graded against itself
difficulty: easy
prompt: none
outputs:
  - big.ods
oracle:
  - oracle/big.ods
grading:
  cases:
    - name: all
      ranges: ["'Sheet1'!A1:J$rows"]
YAML
echo "large sheet ($((rows * 10)) cells, $(stat -c %s "$tmp/big/oracle/big.ods") bytes), $n grades each:"
"$b/bench/bench-grade-child" "$tmp/big/task.yaml" "$tmp/big-out" "$n" $children
