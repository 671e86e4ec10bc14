#!/bin/sh
# bench/relay_local.sh BUILD_DIR|BINARY: the relay alone (bench-relay-local: the
# relay before an in-process fake server, no docker), with wrk: GET 1 and 8
# connections, POST with a small body on 1. Figures, not pass/fail; for
# before/after comparisons of lib/run's framing and accounting.
set -eu
bin=${1:?usage: relay_local.sh BUILD_DIR|BINARY}
[ -d "$bin" ] && bin=$bin/bench/bench-relay-local
out=$(mktemp /tmp/sbx-relay-local.XXXXXX)
"$bin" 40 >"$out" &
pid=$!
trap 'kill $pid 2>/dev/null || :; wait $pid 2>/dev/null || :; rm -f "$out" "$out.lua"; exit 0' EXIT
for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.1; done
url=http://127.0.0.1:$(cat "$out")
cat >"$out.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":7,"method":"ping"}'
wrk.headers["Content-Type"] = "application/json"
LUA
echo "--- GET, 1 connection"
wrk -t1 -c1 -d4s --latency "$url/task/status" | grep -E '50%|Requests/sec'
echo "--- GET, 8 connections"
wrk -t2 -c8 -d4s --latency "$url/task/status" | grep -E '50%|Requests/sec'
echo "--- POST, 1 connection"
wrk -t1 -c1 -d4s --latency -s "$out.lua" "$url/mcp" | grep -E '50%|Requests/sec'
