#!/bin/sh
# Per-call cost of ping, create, start, wait, remove through lib/docker versus
# the same calls made with `curl --unix-socket`, in one run.
#   bench/docker_calls.sh [BUILD_DIR] [ITERATIONS]
# Needs a unix:// Docker engine, curl and busybox-static (for a tiny image,
# sandboxctl-bench/busybox, imported once and labelled sandboxctl.test=1).
set -eu
build=${1:-build}
iter=${2:-20}
[ -x "$build/bench/bench-docker" ] || meson compile -C "$build" bench-docker
command -v curl >/dev/null || { echo "docker_calls.sh: needs curl" >&2; exit 2; }
exec nice "$build/bench/bench-docker" "$iter"
