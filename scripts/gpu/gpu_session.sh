#!/usr/bin/env bash
# One GPU lease's checks in one command, sized for a 15-minute lease (at
# most about 9 minutes here). Steps, each under its own time limit:
#   check       the correctness check (gpu_check.sh)
#   benchmark   every row of the benchmark against PyTorch (gpu_benchmark.sh)
#   conv_rows   only the convolution models' rows (ResNet-50 and MobileNetV2,
#               batch 1 and 128, fp16 and tf32): a follow-up's benchmark
#   nchw        the batch-128 convolution rows with channels-last off
#               (prefer_nhwc=false), against the default layout
#   nhwc_all    MobileNetV2 batch 128 tf32 with prefer_nhwc=true (grouped
#               float32 convolutions channels-last too), against auto
#   unfused     ResNet-50 fp16 rows with cudnn_fused_conv=false (the plain
#               convolution and Loom's epilogue instead of cuDNN's fused call)
#   graph       the convolution models' rows with cudnn_conv_api=graph
#               (graph-API plans instead of cuDNN's legacy calls)
#   exhaustive  ResNet-50 batch 128 with cudnn_conv_algo_search=EXHAUSTIVE
#   host_cost   the host cost of cuDNN's convolution calls per algorithm
#               (bin/loom_cudnn_host_cost)
# Writes at most 8 files into OUTDIR (what a lease brings back: the JSON
# reports and logs.tgz) and prints the summaries last.
#
#   gpu_session.sh OUTDIR [STEP...]   (default: check benchmark graph exhaustive host_cost)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: gpu_session.sh OUTDIR [STEP...]}
shift
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(check benchmark graph exhaustive host_cost)
work=/tmp/loom_gpu_session
rm -rf "$work"
mkdir -p "$out" "$work"
"$here/unpack_payload.sh" || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$work/card.txt" 2>&1

step() {  # step NAME SECONDS COMMAND...: runs it with a time limit and notes how it ended
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$work/$name.out" 2>&1
  echo "$name: exit $? after $((SECONDS - start)) s (limit $limit s)" | tee -a "$work/steps.txt"
}
bench() {  # bench NAME SECONDS DEADLINE [gpu_benchmark.py options...]
  local name=$1 limit=$2 deadline=$3
  shift 3
  step "$name" "$limit" "$here/gpu_benchmark.sh" "$work/$name" --deadline-s "$deadline" --work "$work/w$name" "$@"
}

conv_rows=resnet50:128:224,resnet50:1:224,mobilenetv2:128:224,mobilenetv2:1:224
for s in "${steps[@]}"; do
  case $s in
    check) step check 120 "$here/gpu_check.sh" "$work/check" ;;
    benchmark) bench benchmark 210 150 ;;
    conv_rows) bench conv_rows 120 80 --only "$conv_rows" --precisions fp16,tf32 ;;
    graph) bench graph 120 80 --only "$conv_rows" --precisions fp16,tf32 --cuda-option cudnn_conv_api=graph ;;
    nchw) bench nchw 80 40 --only resnet50:128:224,mobilenetv2:128:224 --precisions fp16,tf32 \
            --cuda-option prefer_nhwc=false ;;
    nhwc_all) bench nhwc_all 60 20 --only mobilenetv2:128:224 --precisions tf32 --cuda-option prefer_nhwc=true ;;
    unfused) bench unfused 80 40 --only resnet50:128:224,resnet50:1:224 --precisions fp16 \
               --cuda-option cudnn_fused_conv=false ;;
    exhaustive) bench exhaustive 120 60 --only resnet50:128:224 --precisions fp16,tf32 \
                  --cuda-option cudnn_conv_algo_search=EXHAUSTIVE ;;
    host_cost) step host_cost 60 "$here/bin/loom_cudnn_host_cost" ;;
    *) echo "gpu_session: unknown step '$s'" | tee -a "$work/steps.txt" ;;
  esac
done

cp "$work/check/gpu-check.json" "$out/" 2>/dev/null
for s in "${steps[@]}"; do
  [ -e "$work/$s/gpu-benchmark.json" ] || continue
  if [ "$s" = benchmark ]; then cp "$work/$s/gpu-benchmark.json" "$out/"
  else cp "$work/$s/gpu-benchmark.json" "$out/gpu-benchmark-$s.json"; fi
done
tar -czf "$out/logs.tgz" -C "$work" --exclude='w*' . 2>/dev/null
echo; cat "$work/card.txt"; cat "$work/steps.txt"
for s in "${steps[@]}"; do
  [ -e "$work/$s.out" ] || continue
  echo "== $s"
  if [ "$s" = host_cost ]; then cat "$work/$s.out"; else tail -24 "$work/$s.out"; fi
done
