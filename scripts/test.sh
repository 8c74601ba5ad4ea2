#!/usr/bin/env bash
# Runs Loom's whole test suite: installs missing Debian packages, builds
# (Release) and runs every CTest suite — unit, ABI, CLI, the ONNX backend
# conformance suites and the real-model comparisons with ONNX Runtime —
# then the sanitizer pass (scripts/sanitize.sh: ASan + UBSan build of the
# unit, ABI, conformance and fuzz-regression tests).
#
#   scripts/test.sh              # everything
#   scripts/test.sh -L unit      # extra arguments go to ctest (main build
#                                # only; the sanitizer pass is skipped)
#
# Environment: LOOM_BUILD_DIR (default: build), LOOM_JOBS (default: nproc),
# LOOM_SANITIZE_PASS=0 skips the sanitizer pass.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${LOOM_BUILD_DIR:-$root/build}
jobs=${LOOM_JOBS:-$(nproc)}

"$here/ensure_deps.sh"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOOM_BUILD_TESTS=ON
cmake --build "$build" -j "$jobs"
cd "$build"
ctest --output-on-failure -j "$jobs" "$@"
if [ "$#" -eq 0 ] && [ "${LOOM_SANITIZE_PASS:-1}" != 0 ]; then
  "$here/sanitize.sh"
fi
