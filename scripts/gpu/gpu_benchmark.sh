#!/usr/bin/env bash
# Times the CUDA EP against PyTorch on the GPU machine, from the bundle
# scripts/gpu_bundle.sh made (tools/gpu_benchmark.py says what and how):
# writes OUTDIR/gpu-benchmark.json and prints a table. Needs the GPU
# machine's python3 with torch, torchvision, numpy and onnx.
#
#   gpu_benchmark.sh OUTDIR [--compile] [--precisions fp32,tf32,fp16]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/unpack_payload.sh" || exit 1
out=${1:?usage: gpu_benchmark.sh OUTDIR [options]}
shift
mkdir -p "$out"
exec python3 -u "$here/tools/gpu_benchmark.py" --bundle "$here" --out "$out" "$@"
