#!/bin/sh
# Builds sandboxctl-test/run-dev:latest, a small sandbox image made from this
# build's own binaries (sandbox-mcp with its shared libraries; sandbox-init,
# sandbox-bridge and sandbox-spawner built static; busybox for sh and tar; the
# real image's two uids, 1000 for the server and 1001 for tool code), imported
# through the Engine API. The run integration tests use it when the real image
# (`sandboxctl build`) is missing, so they work on an engine with no images.
# Usage: dev-image.sh SOURCE_ROOT BUILD_ROOT [TAG]
set -eu
src=$1 build=$2 tag=${3:-sandboxctl-test/run-dev:latest}
sock=${DOCKER_HOST:-unix:///var/run/docker.sock}
sock=${sock#unix://}
mcp=$build/server/sandbox-mcp
[ -x "$mcp" ] || { echo "dev-image: $mcp not built" >&2; exit 1; }
bb=$(command -v busybox || echo /bin/busybox)
root=$(mktemp -d /tmp/sbx-dev-image.XXXXXX)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/local/bin" "$root/bin" "$root/etc" "$root/workspace" "$root/tmp" \
	"$root/run" "$root/proc" "$root/sys" "$root/dev"
cp "$mcp" "$root/usr/local/bin/"
for p in sandbox-init sandbox-bridge sandbox-spawner; do
	cc -std=c17 -D_GNU_SOURCE -Os -static -s -o "$root/usr/local/bin/$p" \
		"$src/images/init/$p.c"
done
# The dynamic loader and every library sandbox-mcp needs, at the same paths.
ldd "$mcp" | awk '/=>/ {print $3} /ld-linux/ {print $1}' | while read -r lib; do
	[ -f "$lib" ] || continue
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
cp "$bb" "$root/bin/busybox"
for c in sh tar cat ls id sleep mount ip ps head grep awk env true touch tr; do
	ln -s busybox "$root/bin/$c"
done
echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
echo 'sandbox:x:1000:1000:sandbox:/tmp:/bin/sh' >> "$root/etc/passwd"
echo 'agent:x:1001:1001:agent tool code:/tmp/agent:/bin/sh' >> "$root/etc/passwd"
printf 'root:x:0:\nsandbox:x:1000:agent\nagent:x:1001:\n' > "$root/etc/group"
chown 1000:1000 "$root/workspace"
chmod 2775 "$root/workspace" # shared with tool code through group 1000, as in the real image
chmod 1777 "$root/tmp" # the tmpfs mount copies the image directory's mode
tar -C "$root" -cf "$root.tar" .
trap 'rm -rf "$root" "$root.tar"' EXIT
repo=${tag%:*} t=${tag##*:}
enc() { python3 -c 'import sys,urllib.parse;print(urllib.parse.quote(sys.argv[1]))' "$1"; }
q="fromSrc=-&repo=$(enc "$repo")&tag=$(enc "$t")"
for c in 'LABEL sandboxctl.test=1' 'LABEL sandboxctl.image=slim' \
	'ENV PATH=/usr/local/bin:/bin SANDBOX_WORKSPACE=/workspace SANDBOX_RUN_DIR=/tmp/sandbox' \
	'USER 1000:1000' 'WORKDIR /workspace' 'ENTRYPOINT ["/usr/local/bin/sandbox-init"]'; do
	q="$q&changes=$(enc "$c")"
done
image_id() {
	curl -s --unix-socket "$sock" "http://localhost/images/$(enc "$tag")/json" |
		python3 -c 'import json,sys
try: print(json.load(sys.stdin).get("Id", ""))
except Exception: print("")'
}
old=$(image_id)
curl -sf --unix-socket "$sock" -X POST -H 'Content-Type: application/x-tar' \
	--data-binary @"$root.tar" "http://localhost/images/create?$q" >/dev/null
# The tag moved to the new import: drop the one it left untagged, unless a
# container still uses it (then the engine refuses and it stays).
new=$(image_id)
if [ -n "$old" ] && [ "$old" != "$new" ]; then
	curl -s --unix-socket "$sock" -X DELETE "http://localhost/images/$old" >/dev/null || :
fi
echo "$tag"
