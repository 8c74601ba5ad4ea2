#!/usr/bin/env bash
# Installs the Debian 12 packages Loom builds, tests and benchmarks with.
# Idempotent: apt-get skips what is already installed. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  clang libclang-rt-14-dev
  libonnx-dev libonnx-testdata
  libprotobuf-dev protobuf-compiler
  libboost-dev libboost-filesystem-dev
  libeigen3-dev libdnnl-dev libspdlog-dev nlohmann-json3-dev
  libcpp-httplib-dev libgrpc++-dev protobuf-compiler-grpc
  libgtest-dev libgmock-dev libbenchmark-dev
  libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev
  python3-numpy python3-onnx python3-torch python3-torchvision
  python3-dev pybind11-dev python3-pytest
  python3-requests python3-grpcio
)
# Node.js runs ONNX Runtime (npm onnxruntime-node) as the peer to compare with.
# Some images ship a Node.js that bundles npm; Debian's npm package conflicts
# with it, so add them only where they are missing.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}"
