#!/usr/bin/env bash
# The sanitizer pass of the test suite: builds Loom with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer (and the fuzz targets with
# libFuzzer) in its own build folder, then runs the unit, ABI, conformance
# and fuzz-regression tests there. Any sanitizer report fails its test.
# Leaner than the main build: no cpu_onednn, CUDA, tools or examples.
#
#   scripts/sanitize.sh              # build + test
#   scripts/sanitize.sh -R Arena     # extra arguments go to ctest
#
# Environment: LOOM_SANITIZE_BUILD_DIR (default: build-sanitize),
# LOOM_JOBS (default: nproc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${LOOM_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${LOOM_JOBS:-$(nproc)}

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DLOOM_SANITIZE=address,undefined -DLOOM_BUILD_FUZZERS=ON \
  -DLOOM_WITH_ONEDNN=OFF -DLOOM_WITH_CUDA=OFF -DLOOM_BUILD_TOOLS=OFF -DLOOM_BUILD_EXAMPLES=OFF \
  -DLOOM_BUILD_TESTS=ON
cmake --build "$build" -j "$jobs"
cd "$build"
# Leaks are errors; plugins stay loaded to the end (dlclose would hide the
# frames of what they leaked).
# allocator_may_return_null: an impossible allocation throws std::bad_alloc
# as it does without ASan (Loom turns it into kOutOfMemory).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --output-on-failure -j "$jobs" -L "unit|abi|conformance|fuzz" "$@"
