#!/bin/sh
# Sandboxes without a task (`serve`'s /v1/sandboxes): exec round trip p50/p99
# (keep-alive HTTP to serve, the sandbox's bridge stream, its spawner) against
# `docker exec` on the same container (the baseline), a 1 MiB file put+get,
# and create+delete p50/p99 from the warm pool against cold starts.
#   bench/sandboxes.sh [BUILD_DIR] [EXECS] [CREATES] [IMAGE]
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
[ -x "$build/cmd/sandboxctl" ] || meson compile -C "$build" sandboxctl
exec python3 "$(dirname "$0")/sandboxes_bench.py" "$build" "$@"
