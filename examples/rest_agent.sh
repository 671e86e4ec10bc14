#!/bin/sh
# rest_agent.sh: solves banking_reserve with curl and jq against the sandbox's
# REST API (POST /tools/call, POST /task/complete), as the demo agent does
# through MCP. Run it as an agent:
#
#   sandboxctl run --task banking_reserve --agent examples/rest_agent.sh
#
# or against a running sandbox: SANDBOX_REST_URL=http://127.0.0.1:PORT ./rest_agent.sh
set -eu
base=${SANDBOX_REST_URL:?set SANDBOX_REST_URL (sandboxctl run sets it)}

# call TOOL JSON_ARGS: prints the tool's result, fails on an error.
call() {
	out=$(curl -sS --fail-with-body -X POST -H 'Content-Type: application/json' \
		"$base/tools/call" -d "$(jq -nc --arg t "$1" --argjson a "$2" \
		'{tool_name: $t, arguments: $a}')") || { echo "rest-agent: $1: $out" >&2; exit 1; }
	if [ "$(printf '%s' "$out" | jq -r '.success')" != true ]; then
		echo "rest-agent: $1: $(printf '%s' "$out" | jq -r '.error')" >&2
		exit 1
	fi
	printf '%s' "$out" | jq -c '.result'
}

file=$(call list_files '{}' | jq -r '.files[] | (.path? // .) | select(endswith("cash_flows.ods"))' | head -n 1)
[ -n "$file" ] || { echo "rest-agent: no cash_flows.ods in the workspace" >&2; exit 1; }
sheet=$(jq -nc --arg f "$file" '{file_path: $f, sheet_name: "Sheet1"}')
rows=$(call get_sheet_info "$sheet" | jq '.row_count')
echo "rest-agent: $file has $rows rows" >&2
values=$(call read_range "$(printf '%s' "$sheet" | jq -c --arg e "C$rows" '. + {start_cell: "A2", end_cell: $e}')" | jq -c '.values')

# Rate: the known Rate_Point, else linear interpolation between the nearest
# known periods; reserve = round(cash flow * rate, 2).
reserves=$(printf '%s' "$values" | jq -c '
  def num: if type == "number" then . elif type == "string" and . != "" then (tonumber? // null) else null end;
  [.[] | {p: (.[0] | num), cf: (.[1] | num // 0), r: (.[2] | num)}] as $rows
  | ($rows | length) as $n
  | [range(0; $n) | . as $i | $rows[$i] as $x
     | (if $x.r != null then $x.r else
         ([range($i; -1; -1) | select($rows[.].r != null)] | first) as $lo
         | ([range($i; $n) | select($rows[.].r != null)] | first) as $hi
         | if $lo == null and $hi == null then 0
           elif $lo == null then $rows[$hi].r
           elif $hi == null then $rows[$lo].r
           else $rows[$lo].r + ($rows[$hi].r - $rows[$lo].r) * ($x.p - $rows[$lo].p) / ($rows[$hi].p - $rows[$lo].p)
           end
        end) as $rate
     | [($x.cf * $rate * 100 | round) / 100]]
  | [["Required_Reserve"]] + .')
call write_range "$(printf '%s' "$sheet" | jq -c --argjson v "$reserves" '. + {start_cell: "D1", values: $v}')" >/dev/null
echo "rest-agent: wrote $(printf '%s' "$reserves" | jq 'length - 1') reserves" >&2
curl -sS --fail-with-body -X POST -H 'Content-Type: application/json' -d '{}' "$base/task/complete" >/dev/null
echo "rest-agent: task completed" >&2
