#!/bin/sh
# hostile_agent.sh: a PARTIAL agent whose tool arguments carry markup. It
# solves the task as examples/rest_agent.sh does, then overwrites one reserve (D2) as the text "<script>…</script>", so the run
# page must show that text escaped, with D2 red in the grading grid.
set -eu
base=${SANDBOX_REST_URL:?}
call() {
	curl -sS -X POST -H 'Content-Type: application/json' "$base/tools/call" \
		-d "$(jq -nc --arg t "$1" --argjson a "$2" '{tool_name: $t, arguments: $a}')"
}
sed '/task\/complete/d; /task completed/d' "$(dirname "$0")/../../examples/rest_agent.sh" | sh
call write_cell '{"file_path":"cash_flows.ods","sheet_name":"Sheet1","cell_reference":"D2","value":"<script>document.title=\"pwned\"</script><img src=x onerror=alert(1)>"}' >/dev/null
call read_cell '{"file_path":"no_such_file.ods","cell_reference":"A1"}' >/dev/null || true
curl -sS -X POST -H 'Content-Type: application/json' -d '{}' "$base/task/complete" >/dev/null
