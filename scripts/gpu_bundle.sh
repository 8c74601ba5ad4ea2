#!/usr/bin/env bash
# Packs what the CUDA EP's GPU check needs into one folder (default
# gpu_bundle/, git-ignored), under 60 MiB, for a GPU machine that has no
# Debian packages and no network (x86-64, an NVIDIA driver, python3 with
# numpy and onnx, the CUDA 13 runtime / cuBLAS / cuDNN 9 as system
# libraries or NVIDIA's Python wheels). Runs on the build machine; needs no
# GPU. Contents:
#   bin/      loom, loom_cuda_ep_tests, loom_conformance, loom_cudnn_host_cost
#   lib/      libloom_core, the reference and cuda plugins (lib/loom/plugins),
#             and the non-system shared libraries they link (protobuf, onnx,
#             spdlog, fmt, boost...; not glibc, libstdc++ or the CUDA libraries)
#   models/   ResNet-50 and MobileNetV2 with their big weights replaced by
#             recipes (tools/model_weights.py regenerates them there), the
#             BERT-style encoder, PP-OCRv4 det (with its logits as an extra
#             output) and rec
#   node.tar.xz  the ONNX backend node tests (Debian's libonnx-testdata) the
#             cuda EP claims a node of, found by partitioning against a virtual
#             device
#   models/bench/  the GPU benchmark's ResNet-50, MobileNetV2 and BERT-base
#             graphs (weights stripped: the benchmark writes its torch modules'
#             weights into them there)
#   expectations/, tools/, gpu_check.sh, gpu_benchmark.sh, gpu_session.sh, MANIFEST.json
#   payload.tar.xz  bin/'s neighbours lib/ and models/, packed (the entry
#             scripts unpack it in place on first use: unpack_payload.sh)
# Then, on the GPU machine: gpu_bundle/gpu_check.sh OUTDIR (correctness),
# gpu_bundle/gpu_benchmark.sh OUTDIR (speed against PyTorch on that GPU), or
# both and the channels-last / algorithm-search comparisons in one command:
# gpu_bundle/gpu_session.sh OUTDIR.
#
#   scripts/gpu_bundle.sh [OUT_DIR]
# Environment: LOOM_BUILD_DIR (default build; built with tests),
# LOOM_MODELS_DIR (default $LOOM_BUILD_DIR/models, as the models tests fetch
# and export them), LOOM_ONNX_NODE_TESTS (default Debian's node suite).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${LOOM_BUILD_DIR:-$root/build}" && pwd)
models=${LOOM_MODELS_DIR:-$build/models}
node_suite=${LOOM_ONNX_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}
out=${1:-$root/gpu_bundle}
python=/usr/bin/python3
limit=$((60 * 1024 * 1024))

die() { echo "gpu_bundle: $*" >&2; exit 1; }

plugins=$build/lib/loom/plugins
need=("$build/bin/loom" "$build/bin/loom_cuda_ep_tests" "$build/bin/loom_conformance" "$build/bin/loom_cudnn_host_cost"
      "$build/lib/libloom_core.so"
      "$build/lib/loom/loom-inference-server"
      "$plugins/libloom_reference.so" "$plugins/libloom_cuda.so" "$plugins/cuda/libloom_cuda_impl.so")
for f in "${need[@]}"; do [ -e "$f" ] || die "missing $f (build with the CUDA toolkit and tests: scripts/test.sh builds it)"; done
model_files=("$models/resnet50.onnx" "$models/mobilenetv2.onnx" "$models/bert_encoder.onnx"
             "$models/ocr-models/ch_PP-OCRv4_det_infer.onnx" "$models/ocr-models/ch_PP-OCRv4_rec_infer.onnx")
for f in "${model_files[@]}"; do
  [ -e "$f" ] || die "missing $f (run: ctest --test-dir $build -R 'models.(fetch|export)')"
done

rm -rf "$out"
mkdir -p "$out"/{bin,lib/loom/plugins/cuda,models,node,expectations,tools}
cp "$build/bin/loom" "$build/bin/loom_cuda_ep_tests" "$build/bin/loom_conformance" "$build/bin/loom_cudnn_host_cost" "$out/bin/"
cp -L "$build/lib/libloom_core.so" "$out/lib/"
for so in "$build"/lib/libloom_core.so.*; do [ -e "$so" ] && cp -L "$so" "$out/lib/"; done
cp "$plugins/libloom_reference.so" "$plugins/libloom_cuda.so" "$out/lib/loom/plugins/"
cp "$build/lib/loom/loom-inference-server" "$out/lib/loom/"  # ONNX shape inference, out of process
cp "$plugins/cuda/libloom_cuda_impl.so" "$out/lib/loom/plugins/cuda/"

# Shared libraries the binaries link, except what every Linux has (glibc,
# libstdc++, libgcc) and the CUDA libraries (the GPU machine's own).
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libstdc\+\+|libgcc_s|libcuda\.so|libcudart|libcublas|libcublasLt|libcudnn)'
for f in "$out"/bin/* "$out"/lib/*.so* "$out"/lib/loom/loom-inference-server "$out"/lib/loom/plugins/*.so \
         "$out"/lib/loom/plugins/cuda/*.so; do
  LD_LIBRARY_PATH=$build/lib ldd "$f" | while read -r name arrow path rest; do
    [ "$arrow" = "=>" ] || continue
    [[ "$name" =~ $skip ]] && continue
    [ "$path" = "not" ] && die "$f needs $name, which is not found here"
    [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
  done
done
strip --strip-unneeded "$out"/bin/* "$out"/lib/*.so* "$out"/lib/loom/plugins/*.so "$out"/lib/loom/plugins/cuda/*.so 2>/dev/null || true

# Models: the two with big weights as recipes.
for m in resnet50 mobilenetv2; do
  "$python" "$root/scripts/gpu/tools/model_weights.py" strip "$models/$m.onnx" "$out/models/$m.onnx" >/dev/null
done
cp "$models/bert_encoder.onnx" "$models/ocr-models/ch_PP-OCRv4_rec_infer.onnx" "$out/models/"
# The detector with its logits as an output too (its Sigmoid saturates).
"$python" "$root/scripts/gpu/tools/add_outputs.py" "$models/ocr-models/ch_PP-OCRv4_det_infer.onnx" \
  "$out/models/ch_PP-OCRv4_det_infer.onnx" p2o.Add.281

# The GPU benchmark's graphs (bench/gpu_benchmark.py): exported here from the
# torch modules it rebuilds there, weights stripped (it writes the module's
# own weights into them there). Cached in the build folder.
bench_cache=$build/gpu_bench_models
for m in resnet50 mobilenetv2 bert_base; do
  if [ ! -e "$bench_cache/$m.stripped.onnx" ]; then
    "$python" "$root/bench/gpu/models.py" "$bench_cache" >/dev/null 2>&1 || die "exporting the benchmark's models failed"
    for n in resnet50 mobilenetv2 bert_base; do
      "$python" "$root/scripts/gpu/tools/model_weights.py" strip "$bench_cache/$n.onnx" "$bench_cache/$n.stripped.onnx" \
        --every-float --min-elements 4096 >/dev/null
    done
    break
  fi
done
mkdir -p "$out/models/bench"
for m in resnet50 mobilenetv2 bert_base; do cp "$bench_cache/$m.stripped.onnx" "$out/models/bench/$m.onnx"; done

# Node tests the cuda EP claims a node of (partitioned against a virtual device).
claimed=$("$build/bin/loom_conformance" --suite "$node_suite" --providers cuda,reference \
            --provider-option cuda:virtual_device=1 --require-provider cuda --list-claimed)
count=0
for t in $claimed; do
  cp -r "$node_suite/$t" "$out/node/"
  count=$((count + 1))
done
[ "$count" -gt 0 ] || die "the cuda EP claims no node test (is the cuda plugin built?)"
# Hundreds of small files: packed (19 MB of files in 1.2 MB); gpu_check.py unpacks them there.
tar -C "$out" -cJf "$out/node.tar.xz" node && rm -rf "$out/node"
cp "$root"/tests/conformance/expectations/node.txt "$out/expectations/"
for e in "$root"/tests/conformance/expectations/node.cuda*.txt; do [ -e "$e" ] && cp "$e" "$out/expectations/"; done

cp "$root"/scripts/gpu/tools/*.py "$root/bench/gpu_benchmark.py" "$root/bench/gpu/models.py" \
   "$root/tests/models/export_torch_models.py" "$out/tools/"
cp "$root/scripts/gpu/gpu_check.sh" "$root/scripts/gpu/gpu_benchmark.sh" "$root/scripts/gpu/gpu_session.sh" "$out/"
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain 2>/dev/null | grep -c . || true)
cat > "$out/MANIFEST.json" <<JSON
{"commit": "$commit", "uncommitted_files": $dirty, "made": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "node_tests": $count, "models": ["resnet50", "mobilenetv2", "bert_encoder", "ppocr_det", "ppocr_rec"]}
JSON

# lib/ and models/ travel xz-packed (the libraries gRPC and OpenSSL bring
# pushed them past the limit); unpack_payload.sh restores them there.
tar -C "$out" -cf - lib models | xz -T2 -6 > "$out/payload.tar.xz"
rm -rf "$out/lib" "$out/models"
cp "$root/scripts/gpu/unpack_payload.sh" "$out/"

size=$(du -sb "$out" | cut -f1)
echo "gpu_bundle: $out: $((size / 1024 / 1024)) MiB, $count node tests"
du -sh "$out"/* | sort -h | tail -6
[ "$size" -le "$limit" ] || die "bundle is $((size / 1024 / 1024)) MiB, over the 60 MiB limit"
