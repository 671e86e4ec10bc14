#!/bin/sh
# The sandboxctl Inspect AI provider against Inspect's docker provider's way
# of working (docker run + exec: this machine has no `docker compose` v2),
# same image: sample_init+cleanup p50/p99 at concurrency 1 and 4, exec round
# trip, the self-check suite's wall time.
#   bench/inspect.sh [BUILD_DIR] [N] [IMAGE]
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/cmd/sandboxctl" ] || meson compile -C "$build" sandboxctl
exec python3 "$(dirname "$0")/inspect_bench.py" "$build" "$@"
