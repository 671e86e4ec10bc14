#!/bin/sh
# Benchmark (not a test): tools/call read_cell against sandbox-mcp over HTTP
# with keep-alive, driven by wrk from a second process, in the legacy
# protocol (2025-06-18, a session) and in 2026-07-28 (stateless). Prints
# p50/p99 latency, calls per second per revision, and the server's idle and
# peak RSS.
#
#   bench/mcp_bench.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
#
# Targets on 2 cores: p50 < 1 ms, > 5,000 calls/s, idle RSS < 10 MB.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
secs=${2:-10}
conns=${3:-4}
server=$build/server/sandbox-mcp
command -v wrk >/dev/null || { echo "wrk is not installed" >&2; exit 2; }
[ -x "$server" ] || { echo "no $server: build first" >&2; exit 2; }

ws=$(mktemp -d /tmp/sbx-mcp-bench-XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$ws" "$ws.ready"; }
trap cleanup EXIT INT TERM
cp "$here/../tests/server/data/cash_flows.ods" "$ws/"

"$server" --workspace "$ws" --http 127.0.0.1:0 --ready-file "$ws.ready" 2>/dev/null &
pid=$!
i=0
while [ ! -s "$ws.ready" ]; do
	i=$((i + 1)); [ $i -gt 200 ] && { echo "server did not start" >&2; exit 1; }
	sleep 0.05
done
url=$(cat "$ws.ready")
sleep 0.2
rss() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; }
idle=$(rss VmRSS)

sid=$(curl -s -D - -o /dev/null -X POST "$url/mcp" -H 'Content-Type: application/json' \
	-d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' |
	tr -d '\r' | awk -F': ' 'tolower($1) == "mcp-session-id" { print $2 }')
check=$(curl -s -X POST "$url/mcp" -H 'Content-Type: application/json' -H "Mcp-Session-Id: $sid" \
	-d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_cell","arguments":{"file_path":"cash_flows.ods","sheet_name":"Sheet1","cell_reference":"B2"}}}')
case $check in *257624.09*) ;; *) echo "read_cell answered: $check" >&2; exit 1 ;; esac
check=$(curl -s -X POST "$url/mcp" -H 'Content-Type: application/json' -H 'MCP-Protocol-Version: 2026-07-28' \
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: read_cell' \
	-d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_cell","arguments":{"file_path":"cash_flows.ods","sheet_name":"Sheet1","cell_reference":"B2"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
case $check in *257624.09*resultType*) ;; *) echo "read_cell at 2026-07-28 answered: $check" >&2; exit 1 ;; esac

echo "sandbox-mcp read_cell over Streamable HTTP, keep-alive, $conns connections, ${secs}s each, $(nproc) cores"
threads=2; [ "$conns" -lt 2 ] && threads=1
# The same tool on the same server and connections in each revision, legacy
# first, then 2026-07-28, then both again, so a neighbour's burst shows as a
# disagreement between the two rounds rather than as a difference.
for round in 1 2; do
	for proto in 2025-06-18 2026-07-28; do
		MCP_SESSION=$sid MCP_PROTOCOL=$proto wrk -t "$threads" -c "$conns" -d "${secs}s" --latency \
			-s "$here/mcp_read_cell.lua" "$url/mcp" |
			awk -v p="$proto" -v r="$round" '/^(p50_ms|p99_ms|requests_per_s|errors) / { print p, "round", r, $0 }'
	done
done
echo "idle_rss_kb $idle"
echo "peak_rss_kb $(rss VmHWM)"
