#!/usr/bin/env bash
# Installs everything sandboxctl needs to build, test and run on Debian 12.
# The one place that names packages: README commands and .ci/run call this.
set -euo pipefail

# Build toolchain and the libraries the C code links against.
build_pkgs=(
	meson ninja-build gcc clang clang-format pkg-config git
	libcurl4-openssl-dev libcjson-dev libarchive-dev libyaml-dev libgit2-dev
	check libmicrohttpd-dev libxml2-dev libx11-dev libxtst-dev libpng-dev
	zlib1g-dev libssl-dev libhttp-parser-dev libwslay-dev
)
# What the tests and the offline base image need on the host (chromium: the
# headless page tests of `sandboxctl view`, tests/view; runsc: gVisor, the
# second engine of tests/runsc).
test_pkgs=(
	busybox-static mmdebstrap ca-certificates curl iproute2
	libreoffice-calc xvfb xauth x11-utils fonts-dejavu-core
	python3-odf python3-pip wrk valgrind libclang-rt-14-dev jq gcovr
	chromium runsc
)
# The official MCP client SDKs, for protocol tests; openenv-core's clients for
# serve's OpenEnv adapter; inspect-ai (its self-check suite and `inspect eval`)
# and pytest + pytest-asyncio (which run that suite) for python/'s provider.
pip_pkgs=(mcp fastmcp openenv-core inspect-ai pytest pytest-asyncio)

missing=()
for p in "${build_pkgs[@]}" "${test_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

py=${PYTHON:-python3}
pip_install() {
	"$py" -m pip install -q --disable-pip-version-check "$@" ||
		"$py" -m pip install -q --disable-pip-version-check --break-system-packages "$@"
}
if ! "$py" -c 'import mcp, fastmcp, openenv, inspect_ai, pytest, pytest_asyncio' 2>/dev/null; then
	echo "deps: pip installing ${pip_pkgs[*]}" >&2
	pip_install "${pip_pkgs[@]}"
fi
# This tree's Python package (the serve client and the Inspect provider),
# editable: the tests run the code as it is in the tree.
if ! "$py" -c 'import sandboxctl, os, sys; sys.exit(not os.path.samefile(os.path.dirname(sandboxctl.__file__), sys.argv[1]))' \
	"$(dirname "$0")/../python/src/sandboxctl" 2>/dev/null; then
	echo "deps: pip installing ./python (editable)" >&2
	pip_install -e "$(dirname "$0")/../python"
fi
