#!/usr/bin/env bash
# Verifies the CUDA EP on a GPU machine, from the bundle scripts/gpu_bundle.sh
# made: runs in the bundle's folder, writes everything into OUTDIR and prints
# a short table last. Needs python3 with numpy and onnx (the GPU machine's
# PyTorch environment), the NVIDIA driver, and the CUDA 13 runtime, cuBLAS
# and cuDNN 9 (system libraries or NVIDIA's Python wheels: the plugin finds
# either). Sized to finish in about 5 minutes on an H100.
#
#   gpu_check.sh OUTDIR [--quick]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/unpack_payload.sh" || exit 1
out=${1:?usage: gpu_check.sh OUTDIR [--quick]}
shift
mkdir -p "$out"
exec python3 -u "$here/tools/gpu_check.py" --bundle "$here" --out "$out" "$@"
