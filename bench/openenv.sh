#!/bin/sh
# An OpenEnv step over `sandboxctl serve` against the same MCP tool call made
# directly on the episode's MCP URL, p50/p90.
#   bench/openenv.sh [BUILD_DIR] [N]
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/cmd/sandboxctl" ] || meson compile -C "$build" sandboxctl
exec python3 "$(dirname "$0")/openenv_bench.py" "$build" "$@"
