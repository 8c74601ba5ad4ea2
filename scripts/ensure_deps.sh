#!/usr/bin/env bash
# Runs setup.sh only when a build or test dependency is missing, so repeated
# builds do not pay for apt-get update.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
need=(cmake ninja protoc grpc_cpp_plugin node clang++ /usr/bin/python3)
missing=0
for c in "${need[@]}"; do command -v "$c" >/dev/null 2>&1 || missing=1; done
for h in /usr/include/onnx/onnx_pb.h /usr/include/dnnl.hpp /usr/include/eigen3/Eigen/Dense \
         /usr/include/boost/dll.hpp /usr/include/spdlog/spdlog.h /usr/include/nlohmann/json.hpp \
         /usr/include/httplib.h /usr/include/grpcpp/grpcpp.h \
         /usr/include/gtest/gtest.h /usr/share/libonnx-testdata/data/node \
         /usr/include/pybind11/pybind11.h /usr/include/python3.11/Python.h \
         /usr/include/jpeglib.h /usr/include/png.h /usr/include/x86_64-linux-gnu/tiffio.h \
         /usr/include/webp/decode.h /usr/include/openjpeg-2.5/openjpeg.h; do
  [ -e "$h" ] || missing=1
done
# clang's sanitizer and libFuzzer runtimes (libclang-rt-*-dev).
compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null || missing=1
/usr/bin/python3 -c "import onnx, numpy, torch, torchvision, pytest, requests, grpc" >/dev/null 2>&1 || missing=1
if [ "$missing" -ne 0 ]; then
  echo "ensure_deps: installing missing packages with scripts/setup.sh" >&2
  "$here/setup.sh"
fi
