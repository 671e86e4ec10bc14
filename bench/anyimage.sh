#!/bin/sh
# Any image: episode time on foreign images vs our slim image, and the
# bundle as a volume (what sandboxctl does) vs as a thin layer. See anyimage.py.
#   bench/anyimage.sh [BUILD_DIR] [N]
set -eu
here=$(dirname "$0")
exec nice python3 "$here/anyimage.py" "${1:-build}" "${2:-5}"
