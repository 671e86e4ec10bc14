#!/bin/sh
# A Harbor task's verifier phase: its extra time beyond test.sh's own run
# (take the workdir out: kill + tar; copy it and tests/ in; the exec around
# test.sh; remove the sandbox; creating it is off the path: it is made while
# the agent works), p50 over N oracle episodes of tests/data/harbor/TASK.
# Also the same episode's total next to a native task's (banking_reserve,
# oracle, same slim image) for scale. Target: extra < 300 ms p50.
#   bench/harbor.sh [BUILD_DIR] [N] [TASK]
# Needs the engine and sandboxctl/sandbox-slim:latest (sandboxctl build --slim),
# which the tasks' Dockerfiles are FROM; the native baseline runs on
# $SBX_TEST_SLIM_IMAGE if set, as the tests do.
set -eu
build=${1:-build}
n=${2:-10}
task=${3:-texttransform}
src=$(cd "$(dirname "$0")/.." && pwd)
sbx="$build/cmd/sandboxctl"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=0
while [ "$i" -lt "$n" ]; do
	"$sbx" run --task-dir "$src/tests/data/harbor/$task" --agent oracle --runs-dir "$out/h" \
		--test-label >/dev/null 2>&1 || true
	"$sbx" run --task banking_reserve --tasks-dir "$src/tasks" --agent oracle \
		--image "${SBX_TEST_SLIM_IMAGE:-sandboxctl/sandbox-slim:latest}" --runs-dir "$out/n" --test-label \
		>/dev/null 2>&1 || true
	i=$((i + 1))
done
python3 - "$out" "$task" <<'PY'
import glob, json, statistics, sys
out, task = sys.argv[1], sys.argv[2]
def load(d):
    return [json.load(open(f)) for f in sorted(glob.glob(out + "/" + d + "/*/result.json"))]
h, nat = load("h"), load("n")
ok = [r for r in h if r.get("verifier", {}).get("reward") == 1]
if not ok:
    sys.exit("harbor.sh: no episode got reward 1: %s" % [r.get("error") for r in h])
def p50(xs):
    return statistics.median(xs) if xs else float("nan")
v = [r["verifier"]["timings_ms"] for r in ok]
take = [r["timings_ms"]["copy_out"] for r in ok]
extra = [t["total"] - t["test_sh"] for t in v]
work = [t["total"] - t["test_sh"] + t["create_start"] * r["verifier"]["made_ahead"] + t["remove"]
        for t, r in zip(v, ok)]
print("harbor verifier, %s, %d episodes (reward 1: %d):" % (task, len(h), len(ok)))
print("  extra beyond test.sh on the episode's path  p50 %7.1f ms  (min %.1f, max %.1f)"
      "  target < 300" % (p50(extra), min(extra), max(extra)))
print("    take workdir (kill+tar)  p50 %7.1f ms" % p50(take))
print("    copy in (workdir+tests)  p50 %7.1f ms" % p50([t["copy_in"] for t in v]))
print("    exec around test.sh      p50 %7.1f ms" % p50(
    [t["total"] - t["test_sh"] - t["copy_in"] - (0 if r["verifier"]["made_ahead"] else
                                                  t["create_start"]) - c
     for t, c, r in zip(v, take, ok)]))
print("  off the path: create+start p50 %7.1f ms (made while the agent worked: %d of %d),"
      " remove p50 %.1f ms (with the agent's)" %
      (p50([t["create_start"] for t in v]), sum(r["verifier"]["made_ahead"] for r in ok),
       len(ok), p50([t["remove"] for t in v])))
print("  all the verifier's work (create, copy, run, remove) beyond test.sh  p50 %7.1f ms" %
      p50(work))
print("  test.sh itself          p50 %7.1f ms" % p50([t["test_sh"] for t in v]))
print("  episode total: harbor p50 %.0f ms, native banking_reserve p50 %.0f ms" %
      (p50([r["timings_ms"]["total"] for r in ok]),
       p50([r["timings_ms"]["total"] for r in nat if r["status"] == "pass"])))
PY
