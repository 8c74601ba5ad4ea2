#!/usr/bin/env bash
# One GPU lease's checks in one command, sized for a 15-minute lease (at
# most about 9 minutes here): the correctness check, the benchmark against
# PyTorch, then the batch-128 convolution rows with channels-last off
# (prefer_nhwc=false: NCHW, as before the layout phase) and ResNet-50's with
# exhaustive algorithm search, to show what each setting does. Writes at
# most 8 files into OUTDIR (what a lease brings back) and prints the
# summaries last.
#
#   gpu_session.sh OUTDIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: gpu_session.sh OUTDIR}
work=/tmp/loom_gpu_session
rm -rf "$work"
mkdir -p "$out" "$work"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$work/card.txt" 2>&1

step() {  # step NAME SECONDS COMMAND...: runs it with a time limit and notes how it ended
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$work/$name.out" 2>&1
  echo "$name: exit $? after $((SECONDS - start)) s (limit $limit s)" | tee -a "$work/steps.txt"
}

step check 120 "$here/gpu_check.sh" "$work/check"
step benchmark 210 "$here/gpu_benchmark.sh" "$work/bench" --deadline-s 150
step nchw 80 "$here/gpu_benchmark.sh" "$work/nchw" --only resnet50:128:224,mobilenetv2:128:224 \
  --precisions fp16,tf32 --cuda-option prefer_nhwc=false --deadline-s 40 --work "$work/wnchw"
step exhaustive 120 "$here/gpu_benchmark.sh" "$work/exh" --only resnet50:128:224 --precisions fp16,tf32 \
  --cuda-option cudnn_conv_algo_search=EXHAUSTIVE --deadline-s 60 --work "$work/wexh"

cp "$work/check/gpu-check.json" "$out/" 2>/dev/null
cp "$work/bench/gpu-benchmark.json" "$out/" 2>/dev/null
cp "$work/nchw/gpu-benchmark.json" "$out/gpu-benchmark-nchw.json" 2>/dev/null
cp "$work/exh/gpu-benchmark.json" "$out/gpu-benchmark-exhaustive.json" 2>/dev/null
tar -czf "$out/logs.tgz" -C "$work" --exclude='wnchw' --exclude='wexh' . 2>/dev/null
echo; cat "$work/card.txt"; cat "$work/steps.txt"
for s in check benchmark nchw exhaustive; do echo "== $s"; tail -32 "$work/$s.out"; done
