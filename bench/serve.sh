#!/bin/sh
# Claim latency of `sandboxctl serve` (POST /v1/episodes until the MCP URL
# answers initialize), warm pool vs cold starts, p50/p99, and episodes per
# minute at a concurrency (claim, complete_task, finish) with and without a pool.
#   bench/serve.sh [BUILD_DIR] [CLAIMS] [CONCURRENCY] [EPISODES]
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/cmd/sandboxctl" ] || meson compile -C "$build" sandboxctl
exec python3 "$(dirname "$0")/serve_bench.py" "$build" "$@"
