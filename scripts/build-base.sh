#!/usr/bin/env bash
# Interim builder for the sandbox image, until `sandboxctl build` does it all
# through libsbx: makes the offline Debian bases with mmdebstrap (from the
# host's own apt sources; no registry), imports them through the Engine API,
# then builds images/Dockerfile on top. Needs root (mmdebstrap) and curl.
#
#   scripts/build-base.sh [slim|full]    default: slim
#
# Environment: SBX_DEBIAN_MIRROR (a mirror URL, or an apt sources file;
# default /etc/apt/sources.list.d/debian.sources), SBX_DEBIAN_SUITE
# (default bookworm), DOCKER_SOCK (default /var/run/docker.sock).
set -euo pipefail
cd "$(dirname "$0")/.."

variant=${1:-slim}
case $variant in slim | full) ;; *)
	echo "usage: $0 [slim|full]" >&2
	exit 2
	;;
esac
sock=${DOCKER_SOCK:-/var/run/docker.sock}
suite=${SBX_DEBIAN_SUITE:-bookworm}
mirror=${SBX_DEBIAN_MIRROR:-/etc/apt/sources.list.d/debian.sources}
[ -e "$mirror" ] || [[ $mirror == *://* ]] || mirror=http://deb.debian.org/debian
api=http://docker/v1.41
tmp=$(mktemp -d /var/tmp/sbx-build.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

urlenc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
pkgs() { sed -e 's/#.*//' "$@" | tr -s ' \t' '\n\n' | sed '/^$/d' | sort -u; }
image_exists() { curl -sf --unix-socket "$sock" "$api/images/$1/json" >/dev/null; }

# ensure_base NAME LISTFILE...: echoes the base's tag, making it when missing.
ensure_base() {
	local name=$1
	shift
	local hash tag
	hash=$( (
		echo "sandboxctl-base/1 $suite apt"
		pkgs "$@"
	) | sha256sum | cut -c1-12)
	tag=sandboxctl/base-$name:$hash
	if image_exists "$tag"; then
		echo "base $tag exists" >&2
	else
		echo "base $tag: mmdebstrap $suite ($(pkgs "$@" | wc -l) packages)..." >&2
		mmdebstrap --quiet --variant=apt --include="$(pkgs "$@" | paste -sd,)" \
			--dpkgopt='path-exclude=/usr/share/man/*' \
			--dpkgopt='path-exclude=/usr/share/doc/*' \
			--dpkgopt='path-include=/usr/share/doc/*/copyright' \
			--dpkgopt='path-exclude=/usr/share/locale/*' \
			"$suite" "$tmp/$name.tar" "$mirror"
		curl -sSf --unix-socket "$sock" -X POST -H 'Content-Type: application/x-tar' \
			-T "$tmp/$name.tar" \
			"$api/images/create?fromSrc=-&repo=sandboxctl/base-$name&tag=$hash&changes=$(urlenc "LABEL sandboxctl.base=$name")" >/dev/null
		rm -f "$tmp/$name.tar"
		image_exists "$tag" || {
			echo "import of $tag failed" >&2
			exit 3
		}
	fi
	echo "$tag"
}

build_base=$(ensure_base build images/packages/build.txt)
if [ "$variant" = full ]; then
	runtime_base=$(ensure_base full images/packages/slim.txt images/packages/gui.txt)
	display=:99
else
	runtime_base=$(ensure_base slim images/packages/slim.txt)
	display=
fi

# The context: what the build stage compiles, and images/.
paths=($(sed -e "s/#.*//" images/context.list))
tar -C . --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
	--exclude='*.o' --exclude=__pycache__ -cf "$tmp/context.tar" "${paths[@]}"
hash=$( (
	echo "sandboxctl-image/1 $variant $build_base $runtime_base"
	sha256sum "$tmp/context.tar"
) | sha256sum | cut -c1-12)
repo=sandboxctl/sandbox
[ "$variant" = slim ] && repo=sandboxctl/sandbox-slim
if image_exists "$repo:$hash"; then
	echo "$repo:$hash exists; tagging latest" >&2
else
	args=$(printf '{"BUILD_BASE":"%s","RUNTIME_BASE":"%s","VARIANT":"%s","DISPLAY_DEFAULT":"%s"}' \
		"$build_base" "$runtime_base" "$variant" "$display")
	labels=$(printf '{"sandboxctl.image":"%s","sandboxctl.inputs-hash":"%s"}' "$variant" "$hash")
	curl -sS -N --unix-socket "$sock" -X POST -H 'Content-Type: application/x-tar' \
		-T "$tmp/context.tar" \
		"$api/build?dockerfile=images/Dockerfile&rm=1&forcerm=1&t=$(urlenc "$repo:$hash")&buildargs=$(urlenc "$args")&labels=$(urlenc "$labels")" |
		python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if "error" in d:
        sys.exit("build failed: " + d["error"])
    sys.stderr.write(d.get("stream", ""))'
fi
curl -sSf --unix-socket "$sock" -X POST "$api/images/$repo:$hash/tag?repo=$repo&tag=latest"
echo "$repo:$hash"
