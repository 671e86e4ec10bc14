#!/bin/sh
# bench/run_relay.sh BUILD_DIR [IMAGE]: requests per second and latency through
# sandboxctl's relay (host loopback -> pooled docker-exec'd sandbox-bridge ->
# the server's unix socket), with wrk, for REST GET /v1/task/status (200 in every
# state; the reference-shaped /task/status is 404 before a task starts) and an MCP
# ping over Streamable HTTP. Figures, not pass/fail.
set -eu
build=${1:?usage: run_relay.sh BUILD_DIR [IMAGE]}
image=${2:-${SBX_TEST_SLIM_IMAGE:-sandboxctl/sandbox-slim:latest}}
src=$(cd "$(dirname "$0")/.." && pwd)
runs=$(mktemp -d /tmp/sbx-relay-bench.XXXXXX)
out=$runs/out.txt
"$build/cmd/sandboxctl" run --task banking_reserve --tasks-dir "$src/tasks" --image "$image" \
	--runs-dir "$runs" --timeout 120 --test-label >"$out" 2>"$runs/err.txt" &
pid=$!
trap 'kill -INT $pid 2>/dev/null || :; wait $pid 2>/dev/null || :; rm -rf "$runs"' EXIT
for _ in $(seq 100); do grep -q '^REST endpoint' "$out" 2>/dev/null && break; sleep 0.1; done
url=$(awk '/^REST endpoint/ {print $3}' "$out")
[ -n "$url" ] || { cat "$runs/err.txt" >&2; exit 1; }
echo "relay at $url (image $image)"
# Images built before /v1 have only /task/status.
st=/v1/task/status
curl -sf "$url$st" >/dev/null || st=/task/status
echo "--- GET $st, 1 connection"
wrk -t1 -c1 -d5s --latency "$url$st" | grep -E 'Latency|50%|99%|Requests/sec'
echo "--- GET $st, 8 connections"
wrk -t2 -c8 -d5s --latency "$url$st" | grep -E 'Latency|50%|99%|Requests/sec'
sid=$(curl -si -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
	"$url/mcp" | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}' | tr -d '\r')
cat >"$runs/ping.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":7,"method":"ping"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = "$sid"
LUA
echo "--- MCP ping (POST /mcp), 1 connection"
wrk -t1 -c1 -d5s --latency -s "$runs/ping.lua" "$url/mcp" | grep -E 'Latency|50%|99%|Requests/sec'
curl -s -X POST -d '{}' "$url/task/complete" >/dev/null
wait $pid || true
grep -h -A4 '"relay"' "$runs"/*/result.json | tr -d '\t\n'; echo
