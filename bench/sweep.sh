#!/bin/sh
# Sweep throughput (episodes/min, --agent oracle) at --jobs 1, 2, 4 against the
# engine's parallel floor, sandboxctl's CPU per episode, RSS at 1,000 queued.
#   bench/sweep.sh [BUILD_DIR] [EPISODES] [JOBS...]
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/cmd/sandboxctl" ] || meson compile -C "$build" sandboxctl
exec python3 "$(dirname "$0")/sweep_bench.py" "$build" "$@"
