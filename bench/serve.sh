#!/bin/sh
# Episodes per minute of `sandboxctl serve` at concurrency 1, 2 and CONCURRENCY
# (default 4; claim, complete_task, finish) for cold starts, the warm pool and
# --reuse, beside the engine's floor measured in the same run, and the reset's
# p50/p99. SBX_BENCH_LATENCY=1 adds the claim latency (POST /v1/episodes until
# the MCP URL answers initialize, CLAIMS claims), warm pool vs cold.
#   bench/serve.sh [BUILD_DIR] [CLAIMS] [CONCURRENCY] [EPISODES]
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/cmd/sandboxctl" ] || meson compile -C "$build" sandboxctl
exec python3 "$(dirname "$0")/serve_bench.py" "$build" "$@"
