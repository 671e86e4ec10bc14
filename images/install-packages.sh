#!/bin/sh
# Installs the Debian packages listed in the given files unless the base image
# already has them all (the offline bases made by `sandboxctl build` do, so no
# network is needed; on debian:bookworm-slim this installs from the mirror).
set -eu
pkgs=$(cat "$@" | sed -e 's/#.*//' | tr -s ' \t\n' '  ')
missing=
for p in $pkgs; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing="$missing $p"
done
[ -n "$missing" ] || exit 0
echo "install-packages: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
apt-get clean
rm -rf /var/lib/apt/lists/*
