#!/usr/bin/env bash
# Installs what is missing, builds sandboxctl, puts it on PATH (meson install
# to /usr/local as root; otherwise prints the line to add to PATH), builds the
# slim sandbox image (offline, from Debian packages: no registry), then runs
# one episode of banking_reserve with the scripted demo agent. Ends with
#   PASS  banking_reserve 100.00% (101/101)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build >/dev/null
meson compile -C build >/dev/null
if [ "$(id -u)" = 0 ]; then
	# sandboxctl, sandbox-mcp, the built-in agents (libexec) and the tasks (share).
	meson install -C build --quiet >/dev/null
	echo "quickstart: installed $(command -v sandboxctl)" >&2
	B=sandboxctl
else
	echo "quickstart: not root, so not installed; to have sandboxctl on PATH:" >&2
	echo "  export PATH=\"$PWD/build/cmd:\$PATH\"" >&2
	B=build/cmd/sandboxctl
fi
"$B" doctor || true # the image checks fail until the build below
"$B" build --slim --quiet
exec "$B" run --task banking_reserve --agent demo --quiet
