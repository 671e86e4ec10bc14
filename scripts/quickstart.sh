#!/usr/bin/env bash
# Installs what is missing, builds sandboxctl and runs its main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build >/dev/null
meson compile -C build >/dev/null
exec build/sandboxctl doctor
