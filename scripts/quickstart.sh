#!/usr/bin/env bash
# Installs what is missing, builds sandboxctl and the slim sandbox image
# (offline, from Debian packages: no registry), then runs one episode of
# banking_reserve with the scripted demo agent. Ends with a line like
#   PASS  banking_reserve 100.00% (101/101)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build >/dev/null
meson compile -C build >/dev/null
build/cmd/sandboxctl doctor || true # the image checks fail until the build below
build/cmd/sandboxctl build --slim --quiet
exec build/cmd/sandboxctl run --task banking_reserve --agent demo --quiet
