#!/usr/bin/env bash
# Unpacks the bundle's payload.tar.xz (lib/ and models/, packed by
# scripts/gpu_bundle.sh to stay under the device tool's transfer limit) into
# the bundle's folder, once: a bundle that already has lib/ is left alone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -d "$here/lib" ] && [ -d "$here/models" ] && exit 0
[ -e "$here/payload.tar.xz" ] || { echo "unpack_payload: $here has neither lib/ nor payload.tar.xz" >&2; exit 1; }
tar -C "$here" -xJf "$here/payload.tar.xz"
