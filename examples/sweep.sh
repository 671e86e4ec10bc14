#!/bin/sh
# sweep.sh OUT.jsonl AGENT REPEATS TASK...: runs every task REPEATS times with
# AGENT (oracle, demo, or a command) and appends one result line per run to
# OUT.jsonl. Resumable: a run already recorded in OUT.jsonl is skipped, so
# re-running the same command after an interruption finishes the sweep.
#
#   examples/sweep.sh sweep.jsonl oracle 3 banking_reserve sales_revenue
#   jq -r '[.task, .status, .score, .timings_ms.total] | @tsv' sweep.jsonl
set -eu
out=${1:?usage: sweep.sh OUT.jsonl AGENT REPEATS TASK...}
agent=${2:?agent}
repeats=${3:?repeats}
shift 3
sandboxctl=${SANDBOXCTL:-sandboxctl}
touch "$out"
for task in "$@"; do
	i=1
	while [ "$i" -le "$repeats" ]; do
		id="sweep-$task-$i"
		if grep -q "\"run_id\":\"$id-" "$out"; then
			i=$((i + 1))
			continue
		fi
		# Exit status 1 (not passed) and 4 (deadline) are results too; 2 and 3 are not.
		set +e
		line=$("$sandboxctl" run --task "$task" --agent "$agent" --run-id "$id-$(date +%s)" --json --quiet)
		rc=$?
		set -e
		if [ "$rc" -eq 2 ] || [ -z "$line" ]; then
			echo "sweep: $task #$i: sandboxctl failed (exit $rc); stopping" >&2
			exit "$rc"
		fi
		printf '%s\n' "$line" >>"$out"
		echo "sweep: $task #$i: $(printf '%s' "$line" | sed -n 's/.*"status":"\([a-z_]*\)".*/\1/p')" >&2
		i=$((i + 1))
	done
done
